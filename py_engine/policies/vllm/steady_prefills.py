"""Steady prefillers, the steady decoders' twin for long prompts (mixed into scheduler.VLLM).

While the chunk applies (more than one request running or waiting), a request whose prompt has
more than a chunk left takes exactly one chunk a step and samples nothing. Where nothing binds,
walking it at every plan was half of the special requests' visits in the bench's burst (a skewed
trace's long prompts take dozens of chunks each: bench/vllm.py nothing_binds). Kept apart, as
the steady decoders are (steady.py), with chunk T:

    num_computed_tokens = a[r] + T * sp_steps     (sp_steps: steps scheduled since)
    inflight            = i[r] + T * (sp_steps - sp_updates)
    num_tokens, num_output_placeholders (0): constant while it prefills

Only with block counts (counting_pool.CountingPool: a table would cache its blocks) and a chunk
of whole blocks: then each one takes T / block_size blocks a step whatever its computed tokens,
so the pool's free count moves by one product. A prefiller joins after a step that gave it a
full chunk with more than two chunks still left; it leaves at the plan whose chunk is its last
(a heap keyed by sp_steps: the core ends its PREFILL phase there, so a plan is made then), or
when the chunk stops applying or something binds (every one explicit again, with the steady
decoders: steady.py `_sd_materialize_all`).
"""

import heapq

from .status import RUNNING
from .steady import Step


class SteadyPrefills:

    def _init_steady_prefills(self):
        bs = self.bs
        self.sp_on = (self.lazy and self.sd_members is None and self.steady_prefills
                      and 0 < self.chunk and self.chunk % bs == 0)
        self.sp_blocks = self.chunk // bs      # blocks a steady prefiller takes a step
        self.sp = {}                    # request -> (a, i): offsets of computed, inflight
        self.sp_steps = self.sp_updates = 0
        self.sp_leave = []              # heap (sp_steps at whose plan its chunk is its last, r)

    def _sp_join_from(self, step, candidates):
        """After a step was scheduled: those of `candidates` (scheduled a full chunk, sampling
        nothing) with more than two chunks left are steady prefillers from the next step on; the
        step's share of them is the aggregate's (their entries leave the step)."""
        computed, num_tokens, inflight = self.num_computed_tokens, self.num_tokens, self.inflight
        status, stale, placeholders = self.status, self.stale, self.num_output_placeholders
        slot_of, sp, special, joined = self.slot_of, self.sp, self.special, self.sd_joined
        T, s, u = self.chunk, self.sp_steps, self.sp_updates
        earlier = self.unprocessed      # async: the step before, its outputs processed next
        self.sim.count_work(len(candidates))
        for r in candidates:
            c = computed[r]
            if (num_tokens[r] - c <= 2 * T or status[r] != RUNNING or stale[r]
                    or placeholders[r] or r not in slot_of):
                continue
            # s - u counts the steps the aggregate has in flight; the step before (async) is one
            # of them, but r was explicit in it: its update counts in u all the same, while its
            # own tokens leave the list (not i)
            i = inflight[r] - T * (s - u - (1 if earlier and earlier.sp else 0))
            if earlier and r in earlier:
                i -= earlier[r][0]
            a = c - T * s
            sp[r] = (a, i)
            heapq.heappush(self.sp_leave, (-(-(num_tokens[r] - a - T) // T), r))
            del special[r]
            del step[r]
            joined.append(r)            # _apply tells its resident the chunk
        if sp:
            step.sp = True

    def _sp_leave_now(self, r):
        """r explicit again, also in the steps planned and not yet processed."""
        a, i = self.sp.pop(r)
        T = self.chunk
        c = self.num_computed_tokens[r] = a + T * self.sp_steps
        self.inflight[r] = i + T * (self.sp_steps - self.sp_updates)
        self.pool.held[r] = -(-c // self.bs)
        self.special[r] = None
        for step in (self.step, self.unprocessed):
            if isinstance(step, Step) and step.sp:
                step[r] = (T, False)

    def _sp_leaving(self):
        """Before a plan: steady prefillers whose next chunk is their last become explicit."""
        heap, sp, s = self.sp_leave, self.sp, self.sp_steps
        while heap and heap[0][0] <= s:
            _, r = heapq.heappop(heap)
            if r in sp:
                self._sp_leave_now(r)

    def _sp_materialize_all(self):
        # work (sim/work.py): each one is touched as a walk touches it; where something binds
        # every few plans they leave and join again (a run of long prompts in chunks of 16:
        # half its work was not counted)
        self.sim.count_work(len(self.sp))
        for r in list(self.sp):
            self._sp_leave_now(r)
        self.sp_leave.clear()

    def _sp_advance(self, steps):
        """`steps` more steps of the steady prefillers scheduled and their outputs processed
        (a run's repeats, runs.py _bulk): their blocks taken."""
        self.pool.free -= self._sp_growth(steps)
        self.sp_steps += steps
        self.sp_updates += steps

    def _sp_growth(self, m):
        """Blocks the steady prefillers take over their next m steps."""
        return len(self.sp) * self.sp_blocks * m if m > 0 else 0

    def _sp_tokens(self):
        """{request: chunk} of the steady prefillers (tests' plan log)."""
        return dict.fromkeys(self.sp, self.chunk)
