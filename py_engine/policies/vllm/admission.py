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
        if (self.counted_admission and self.fcfs and not self.pool.caching and not self.saved
                and not self.remote):
            return self._schedule_waiting_counted(sched, admitted, budget, threshold)
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

    def _schedule_waiting_counted(self, sched, admitted, budget, threshold):
        """_schedule_waiting where a lookup cannot hit and nothing was kept for a waiting request
        (fcfs; block counts; no swapped or remote KV): every admission starts from 0 computed
        tokens, so the loop and _admitted are one walk (most requests of a big run are admitted
        here)."""
        num_tokens, pool, bs = self.num_tokens, self.pool, self.bs
        running, special, queue = self.running, self.special, self.waitq.queue
        max_seqs, held, free, full_fit = self.max_seqs, pool.held, pool.free, self.full_fit
        status, computed, looked_up = self.status, self.num_computed_tokens, self.looked_up
        thrown = self.thrown
        order, admissions = self.admission_order, self.admissions
        prompt, max_tokens = self.num_prompt_tokens, self.max_tokens
        final_blocks = queries = resumed_queries = 0
        blocked = None
        while budget > 0 and queue and len(running) < max_seqs:
            r = queue[0]
            t = num_tokens[r]
            n = t
            if 0 < threshold < n:
                n = threshold
            if n > budget:
                n = budget
            # CountingPool.need and allocate (a waiting request holds no blocks): with
            # full-prompt admission its whole sequence must fit, the first chunk is allocated
            need = -(-n // bs)
            if (-(-t // bs) if full_fit else need) > free:
                blocked = r
                break
            queue.popleft()
            free -= need
            held[r] = need
            if status[r] == PREEMPTED:          # _admitted, for a lookup that found nothing
                resumed_queries += t
                lost = thrown.pop(r, 0)
                if lost > 0:
                    self.recomputed += lost
            else:           # (its prefix hit, 0, is what the core holds already)
                queries += t
            status[r] = RUNNING
            computed[r] = 0
            looked_up[r] = True
            running[r] = None
            special[r] = None
            order[r] = admissions
            admissions += 1
            final_blocks += -(-(prompt[r] + max_tokens[r] - 1) // bs)
            sched[r] = n
            admitted[r] = 0
            budget -= n
        pool.free = free
        if self.prefix_caching:     # vLLM counts every lookup, also those that cannot hit
            self.pc["queries"] += queries
            self.pc["preempted_queries"] += resumed_queries
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
