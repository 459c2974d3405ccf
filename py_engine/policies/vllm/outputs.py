"""A planned step's outcome, the vllm policy's other half (mixed into scheduler.VLLM): vLLM's
_update_after_schedule (computed tokens advance as the step is scheduled, a sampling request
gets an output placeholder under async scheduling) and update_from_output (the step's sampled
tokens are delivered, finished requests freed in scheduled order), with the steady decoders'
share at once (steady.py)."""

from .status import FINISHED, RUNNING
from .steady import JOIN_MIN, Step


class Outputs:

    def _after_schedule(self, sched):
        """_update_after_schedule: computed tokens advance; a request that samples gets a
        placeholder (async)."""
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        placeholders, inflight = self.num_output_placeholders, self.inflight
        step = Step()
        if self.sd:
            step.sd = True
            self.sd_steps += 1
        if self.sp:
            step.sp = True
            self.sp_steps += 1
        async_ = self.async_
        # a full chunk that samples nothing: a steady prefiller from the next step on, maybe
        chunk = self.chunk if self.sp_on and self.chunking else 0
        prefills = []
        for r, n in sched.items():
            c = computed[r] + n
            p = placeholders[r]
            samples = c >= num_tokens[r] + p
            computed[r] = c
            inflight[r] += n
            if samples:
                if async_:
                    placeholders[r] = p + 1
            elif n == chunk:
                prefills.append(r)
            step[r] = (n, samples)
        if prefills:
            self._sp_join_from(step, prefills)
        if self.lazy and not self.async_:       # sync: steady from this step on
            for r, (n, samples) in list(step.items()):
                if self._sd_eligible(r, n, samples):
                    self._sd_join(r)
                    del step[r]
                    step.sd = True
        self.step = step

    def _update(self, step):
        """update_from_output for one step: sampled tokens are delivered; finished requests are
        freed, in scheduled order."""
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        placeholders, prompt, max_tokens = (self.num_output_placeholders, self.num_prompt_tokens,
                                            self.max_tokens)
        status, inflight, stale, pool = self.status, self.inflight, self.stale, self.pool
        caching, bs = pool.caching, self.bs
        n_cached = pool.n_cached if caching else None
        done = []
        sampled = False
        if step.sp:                  # the steady prefillers' chunks (they sample nothing)
            self.sp_updates += 1
        if step.sd:                  # the steady decoders' outputs, at once
            sampled = True
            self.sd_updates += 1
            if not self.async_:
                done = self._sd_finished()
        planned = self.step
        joins = self.lazy and self.async_ and planned is not step
        for r, (n, samples) in step.items():
            inflight[r] -= n
            is_stale = stale[r] > 0
            if is_stale:
                stale[r] -= n
            if not samples:
                continue
            st = status[r]
            if st == FINISHED:
                continue
            sampled = True
            p = placeholders[r]
            t = num_tokens[r] = num_tokens[r] + 1
            if not is_stale and p > 0:
                placeholders[r] = p - 1
                if caching and st == RUNNING:
                    done_tokens = computed[r] - inflight[r]
                    if done_tokens // bs > n_cached.get(r, 0):
                        pool.cache(r, done_tokens, t)
            if t - prompt[r] == max_tokens[r]:
                if st == RUNNING:
                    done.append(r)
                else:                     # preempted with its last token in flight
                    self.waitq.remove(r)
                    self._finish(r)
            elif joins and r in planned:   # async: steady from the planned step on
                n1, s1 = planned[r]
                # (_sd_eligible's cheapest tests first: most decoders of a skewed trace are short)
                if (n1 == 1 and s1 and prompt[r] + max_tokens[r] - computed[r] >= JOIN_MIN
                        and self._sd_eligible(r, n1, s1)):
                    self._sd_join(r)
                    del planned[r]
                    planned.sd = True
        if done:
            self._finish_running(done)
        if sampled:
            self._progress()

    def _finish_running(self, done):
        """_finish for each running request of `done`, in order, and each leaves the running
        list (one walk: a big run finishes most of its requests here)."""
        status, free_request, slot_of, told = (self.status, self.pool.free_request, self.slot_of,
                                               self.told)
        running, special = self.running, self.special
        saved, thrown = self.saved, self.thrown
        prompt, max_tokens, bs = self.num_prompt_tokens, self.max_tokens, self.bs
        final_blocks = 0
        for r in done:
            status[r] = FINISHED
            free_request(r, True)
            slot_of.pop(r, None)
            told.pop(r, None)
            if saved:
                saved.pop(r, None)
            if thrown:
                thrown.pop(r, None)
            del running[r]
            special.pop(r, None)
            final_blocks += -(-(prompt[r] + max_tokens[r] - 1) // bs)   # _final_blocks
        self.need_total -= final_blocks

    def _finish(self, r):
        self.status[r] = FINISHED
        self.pool.free_request(r, True)
        self.slot_of.pop(r, None)
        self.told.pop(r, None)
        self.saved.pop(r, None)
        self.thrown.pop(r, None)

    def _progress(self):
        self.last_progress = self.sim.passes
        if self.seen:
            self.seen.clear()
        if self.victims:
            self.victims.clear()
