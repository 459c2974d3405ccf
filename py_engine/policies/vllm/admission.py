"""The WAITING side of a step (mixed into scheduler.VLLM): the head of the waiting queue looks up
the prefix cache and is admitted while budget, a slot and its blocks allow (vllm/v1/core/sched/
scheduler.py `schedule`, its waiting loop), and what an admission records (the prefix-cache
counters, a swap-in's transfer, recomputed tokens)."""

from ...sim.exact import cdiv
from .status import PREEMPTED, RUNNING


class Admission:

    def _schedule_waiting(self, sched, admitted, budget, threshold):
        """The WAITING loop: the head looks up the prefix cache and is admitted if its blocks fit
        (with scheduler_reserve_full_isl: its whole sequence). -> (budget left, the blocked head
        or None)."""
        num_tokens, pool, bs = self.num_tokens, self.pool, self.bs
        running, waitq, special = self.running, self.waitq, self.special
        caching, full_fit, max_seqs = pool.caching, self.full_fit, self.max_seqs
        order, admissions = self.admission_order, self.admissions
        final_blocks = 0                # of the admitted (need_total's share, _final_blocks)
        prompt, max_tokens = self.num_prompt_tokens, self.max_tokens
        blocked = None
        while budget > 0 and waitq:
            if len(running) >= max_seqs:
                break
            r = waitq.peek()
            # a lookup can find something only for shared-prefix requests and ones computed before
            hits = (pool.lookup(r, num_tokens[r])
                    if caching and (self.spans[r] is not None or self.looked_up[r]) else ())
            start = len(hits) * bs
            saved = self.saved.get(r)
            if saved is not None and saved > start:
                start = saved
            if self.remote and self.remote.get(r, 0) > start:
                start = self.remote[r]      # its KV is here: vLLM computes only the rest
            n = num_tokens[r] - start
            if 0 < threshold < n:
                n = threshold
            if n > budget:
                n = budget
            # need() grows with the tokens: with full-prompt admission the first chunk fits
            # when the whole sequence does
            if pool.need(r, num_tokens[r] if full_fit else start + n, hits) > pool.num_free():
                blocked = r
                break
            waitq.pop()
            pool.allocate(r, start + n, hits)
            if caching:
                pool.cache(r, start + n, num_tokens[r])
            self._admitted(r, len(hits) * bs, start)
            running[r] = None
            special[r] = None
            order[r] = admissions
            admissions += 1
            final_blocks += -(-(prompt[r] + max_tokens[r] - 1) // bs)
            sched[r] = n
            admitted[r] = start
            budget -= n
        self.admissions = admissions
        self.need_total += final_blocks
        return budget, blocked

    def _admitted(self, r, hit, start):
        resumed = self.status[r] == PREEMPTED
        if self.prefix_caching:   # vLLM counts every lookup, also those that cannot hit
            pc = self.pc
            if resumed:
                pc["preempted_queries"] += self.num_tokens[r]
                pc["preempted_hits"] += hit
            else:
                pc["queries"] += self.num_tokens[r]
                pc["hits"] += hit
        if not resumed:
            self.sim.record_prefix_hit(r, hit)
        saved = self.saved.pop(r, None)
        if saved is not None and start > hit:   # swap: the blocks the cache lost come back
            self.swap_in_blocks += cdiv(start, self.bs) - hit // self.bs
            self.swap_extra += (cdiv(start, self.bs) - hit // self.bs) * self.swap_ticks
        self.remote.pop(r, None)      # preempted later, it recomputes: the KV is gone
        lost = self.thrown.pop(r, 0)
        if lost > start:
            self.recomputed += lost - start
        self.status[r] = RUNNING
        self.num_computed_tokens[r] = start
        self.looked_up[r] = True
