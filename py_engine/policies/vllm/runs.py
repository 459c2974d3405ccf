"""Runs of identical steps, the vllm policy's event-driven half (mixed into scheduler.VLLM).

Between events the same batch repeats (every request the same tokens, no admission, no
preemption) and the core runs those steps as one run. `_set_horizon` ends a run before the first
step whose blocks would not fit (there a victim must be chosen), and after one step when the next
differs (a preemption, an async hand-over, a waiting request whose prefix hit may grow).
`_bulk` applies what a run did to the block pool at once when it ends (block_pool.py: who holds
which block is only observable through the free queue and the prefix cache, and no block is
freed or looked up inside a run). Every number equals the policy stepped one pass a run
(tests/vllm/test_policy.py, bench/vllm.py).
"""

from ...sim.exact import cdiv

BULK_TOKENS = 1 << 20   # tokens a run of repeated steps may add to the prefix cache at once
UNBOUNDED = 1 << 40     # passes: more than any run (the horizon's search bound with steady decoders)


class Runs:

    def kv_after(self, k):
        """KV in use (tokens in allocated blocks, vLLM's KV usage) after k passes of this step."""
        if k <= 1:
            return self.pool.used() * self.bs
        bs, computed = self.bs, self.num_computed_tokens
        extra = sum(cdiv(computed[r] + (k - 1) * n, bs) - cdiv(computed[r], bs)
                    for r, (n, _) in self.step.items()) + self._sd_growth(k - 1)
        return (self.pool.used() + extra) * bs

    def _bulk(self, j):
        """Steps 2..j+1 of the run that just ended repeated the planned one: computed tokens,
        outputs (all but the last step's), blocks and the prefix cache, at once."""
        if j <= 0:
            return
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        pool, bs, step = self.pool, self.bs, self.step
        late = self.async_          # an async decode's blocks are cached one step later
        ordered = pool.caching and self._shared_in(step)
        events = []
        if step.sd:
            self._sd_advance(j, j)
        for order, (r, (n, samples)) in enumerate(step.items()):
            c0 = computed[r]
            c1 = c0 + j * n
            pool.grow(r, c1)
            computed[r] = c1
            if samples:
                num_tokens[r] += j
            if not pool.caching:
                continue
            upto = c1 - 1 if (late and samples) else c1
            if ordered and self.spans[r] is not None:
                lag = 1 if (late and samples) else 0
                first = pool.n_cached.get(r, 0)
                full = min(upto, num_tokens[r] - num_tokens[r] % bs) // bs
                for b in range(first, full):
                    m = max(1, cdiv((b + 1) * bs + lag - c0, n))
                    events.append((m, order, r, b))
                if full > first:
                    pool.n_cached[r] = full
            elif upto // bs > pool.n_cached.get(r, 0):
                pool.cache(r, upto, num_tokens[r])
        if events:
            events.sort()
            for _, _, r, b in events:
                pool.cache_block(r, b)
        if step.sd or any(s for _, s in step.values()):
            self._progress()

    def _shared_in(self, step):
        """True if two requests of this step share a prefix id (their blocks may carry the same
        hashes, and the prefix cache keeps duplicates in the order they were cached)."""
        seen = set()
        for r in step:
            span = self.spans[r]
            if span is not None:
                if span[0] in seen:
                    return True
                seen.add(span[0])
        return False

    def _set_horizon(self, sched, preempted, info):
        lingering, blocked, budget = info
        sim = self.sim
        running = len(self.running)
        self.wants = (running + len(self.waitq) <= 1
                      or (running < self.max_seqs and budget > 0
                          and (not self.waitq or not self.fcfs)))
        if (preempted or lingering or (self.arrived and self.wants)
                or (blocked is not None and self._unstable(blocked))):
            self.h = 1
        elif self.pool.total is None or not (sched or self.sd):
            self.h = None
        else:
            self.h = self._until_blocks_run_out(sim)
        if self.pool.caching and self.step:
            # a run's repeated steps are booked at once (_bulk), block by block: bound a run so
            # that booking stays a fraction of a second and the work cap can stop between runs
            # (any horizon gives the same decisions: the stepped benchmark is one pass a run)
            k = max(1, BULK_TOKENS // max(1, sum(n for n, _ in self.step.values())))
            if self.h is None or self.h > k:
                self.h = k

    def _until_blocks_run_out(self, sim):
        """Passes the planned step can repeat before one would need more blocks than are free
        (None: it fits until a scheduled request's phase ends)."""
        free, bs, computed = self.pool.num_free(), self.bs, self.num_computed_tokens
        step = [(computed[r], n) for r, (n, _) in self.step.items()]
        slot_of, passes = self.slot_of, sim.passes
        ends = (sim.phase_end(slot_of[r]) for r in self.step if r in slot_of)
        kmax = min((e for e in ends if e is not None), default=passes + 1) - passes
        if self.sd:     # any bound past the run's end is safe: the core ends the run there
            kmax = max(kmax, UNBOUNDED)

        def demand(m):   # blocks the next m steps allocate
            return (sum(cdiv(c + m * n, bs) - cdiv(c, bs) for c, n in step)
                    + self._sd_growth(m))

        if kmax <= 1 or demand(kmax - 1) <= free:
            return None
        lo, hi = 0, kmax - 1     # demand(lo) <= free < demand(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if demand(mid) <= free:
                lo = mid
            else:
                hi = mid
        return lo + 1

    def _unstable(self, r):
        """May the blocked waiting head fit before the pool shrinks? Only if its prefix hit can
        grow (blocks of its shared prefix are being computed or duplicated) or, without
        full-prompt admission, shrink into a smaller first chunk."""
        if not self.pool.caching:
            return False
        return self.spans[r] is not None or (not self.full_fit and self.looked_up[r])
