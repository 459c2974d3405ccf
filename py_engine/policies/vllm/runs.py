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
from .growth import Growth

BULK_TOKENS = 1 << 20   # tokens a run of repeated steps may add to the prefix cache at once
UNBOUNDED = 1 << 40     # passes: more than any run (the horizon's search bound with steady decoders)


def passes_until_short(demand, free, kmax):
    """Passes a planned step runs before a repeat's blocks do not fit: its next m repeats take
    demand(m) blocks (non-decreasing, demand(0) = 0) -> the first m with demand(m) > free (the
    plan's pass and m - 1 repeats fit), or None when demand(kmax - 1) fits."""
    if kmax <= 1 or demand(kmax - 1) <= free:
        return None
    # demand(lo) <= free < demand(hi): from below by doubling, then halving (the bound is often
    # UNBOUNDED, the answer a few passes: ~2 log2(answer) calls, not 40)
    lo, hi = 0, 1
    while hi < kmax - 1 and demand(hi) <= free:
        lo, hi = hi, min(2 * hi, kmax - 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if demand(mid) <= free:
            lo = mid
        else:
            hi = mid
    return lo + 1


class Runs:

    def kv_after(self, k):
        """KV in use (tokens in allocated blocks, vLLM's KV usage) after the k passes just run:
        passes of the planned step, counted from its plan (a run the plan went on through,
        `_repeats`, is one run here)."""
        k = self.sim.passes - self.plan_passes
        if k <= 1:
            return self.pool.used() * self.bs
        g, m = self.step_growth, k - 1
        if g is not None:       # the horizon's search built it
            extra = g(m)
        else:                   # the steady decoders' Growth is the next _bulk's too (memo)
            bs, computed = self.bs, self.num_computed_tokens
            extra = self._sd_growth(m) + self._sp_growth(m)
            for r, (n, _) in self.step.items():
                c = computed[r]
                extra += -(-(c + m * n) // bs) + c // -bs
        return (self.pool.used() + extra) * self.bs

    def _step_growth(self):
        """Blocks the planned step takes over its next m repeats (the steady decoders' too), a
        Growth built once per planned step (the horizon's search and kv_after share it)."""
        g = self.step_growth
        if g is None:
            computed = self.num_computed_tokens
            g = self.step_growth = Growth(
                self.bs, [(computed[r], n) for r, (n, _) in self.step.items()],
                self._sd_by_free(), self._sp_growth(1))
        return g

    def _bulk(self, j):
        """Steps 2..j+1 of the run that just ended repeated the planned one: computed tokens,
        outputs (all but the last step's), blocks and the prefix cache, at once."""
        if j <= 0:
            return
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        pool, bs, step = self.pool, self.bs, self.step
        late = self.async_          # an async decode's blocks are cached one step later
        fills = []                  # (order, request, first block to cache, end, c0, n, samples)
        caching = pool.caching
        n_cached = pool.n_cached if caching else None
        sampled = step.sd
        if sampled:
            self._sd_advance(j, j)
        if step.sp:
            self._sp_advance(j)
        grows = []                  # in step order, taken at once (pool.grow_many)
        for order, (r, (n, samples)) in enumerate(step.items()):
            c0 = computed[r]
            c1 = c0 + j * n
            if c1 - c0 > -c0 % bs:      # past its last block (its blocks cover c0 already)
                grows.append((r, c1))
            computed[r] = c1
            if samples:
                sampled = True
                num_tokens[r] += j
            if caching:
                upto = c1 - 1 if (late and samples) else c1
                known = num_tokens[r] - num_tokens[r] % bs
                full = (upto if upto < known else known) // bs
                first = n_cached.get(r, 0)
                if full > first:
                    fills.append((order, r, first, full, c0, n, samples))
        if grows:
            pool.grow_many(grows)
        if fills:
            if self._same_keys(fills):
                self._cache_stepwise(fills)
            else:               # no key twice: the order blocks are cached in cannot matter
                for _, r, _, full, *_ in fills:
                    pool.cache(r, full * bs, num_tokens[r])
        if sampled:
            self._progress()

    def _same_keys(self, fills):
        """Would two requests of the run cache a block under the same key? Only blocks of
        shared content can (two requests of one group computing the same blocks at once)."""
        by_group = {}
        for _, r, first, full, *_ in fills:
            span = self.spans[r]
            if span is not None:
                by_group.setdefault(span[0], []).append((r, first, full))
        pool = self.pool
        for group in by_group.values():
            if len(group) > 1:
                stretches = [(r, first, min(full, pool.keys.own_from(r)))
                             for r, first, full in group]
                if pool.collide(stretches):
                    return True
        return False

    def _cache_stepwise(self, fills):
        """Cache the run's blocks in the order the stepped run caches them: by the step that
        fills each (then by the request's place in the step): the prefix cache keeps copies of
        a key in the order they were cached, and a lookup takes the first."""
        pool, bs, lag0 = self.pool, self.bs, 1 if self.async_ else 0
        events = []
        for order, r, first, full, c0, n, samples in fills:
            lag = lag0 if samples else 0
            for b in range(first, full):
                m = max(1, cdiv((b + 1) * bs + lag - c0, n))
                events.append((m, order, r, b))
            pool.n_cached[r] = full
        events.sort()
        for _, _, r, b in events:
            pool.cache_block(r, b)

    def _set_horizon(self, sched, preempted, info):
        """The planned step's horizon `h` (passes from now) and `h_plan`: the passes it repeats
        from its plan barring a phase end or a visible arrival (None: no bound of the policy's;
        `_repeats` goes on through an event before it)."""
        lingering, blocked, budget = info
        self.step_growth = None         # the step was just planned
        running = len(self.running)
        self.wants = (running + len(self.waitq) <= 1
                      or (running < self.max_seqs and budget > 0
                          and (not self.waitq or not self.fcfs)))
        if (preempted or (blocked is not None and self._unstable(blocked))
                or (lingering and not self._frees_change_nothing())):
            self.h_plan = self.h_blocks = 1
            self.bulk_cap = None
        else:
            self.h_plan = self._repeat_horizon(sched, self.budget - budget)
        # the run still ends after one pass where it did before (an arrival this plan could not
        # see; the finished requests' frees): the passes log's runs stay the same
        if lingering or (self.arrived and self.wants):
            self.h = 1
        else:
            self.h = self.h_plan

    def _frees_change_nothing(self):
        """After a plan that skipped lingering requests (async: their last token in flight),
        their outputs freed them: would the next plan be this one again? Yes when nobody waits
        (no admission; visible arrivals are the repeat's own check) and the chunk rule reads
        the same (it is ignored while one request runs or waits)."""
        return not self.waitq and (len(self.running) > 1) == self.chunking

    def _repeat_horizon(self, sched, tokens):
        """Passes the planned step (`tokens` a step) repeats before its blocks run out, or a
        run's booking would grow too long (None: no such bound)."""
        if self.pool.total is None or not (sched or self.sd or self.sp):
            h = None
        else:
            h = self._until_blocks_run_out(self.sim)
        self.h_blocks, self.bulk_cap = h, None    # _repeats: the first counts from the plan
        if self.pool.caching and self.step:
            # a run's repeated steps are booked at once (_bulk), block by block: bound a run so
            # that booking stays a fraction of a second and the work cap can stop between runs
            # (any horizon gives the same decisions: the stepped benchmark is one pass a run)
            k = self.bulk_cap = max(1, BULK_TOKENS // max(1, tokens))
            if h is None or h > k:
                h = k
        return h

    def _repeats(self):
        """At an event where the plan would be the planned step again, the run goes on: the
        passes are booked when it ends (plan_passes stays) and only the horizon moves. That is
        an event the core ends a run at while nothing changed for the policy: no phase ended,
        the step's own horizon is ahead, nobody waits and no arrival is visible (async: one
        that came during the last pass waits for the next plan; the core cut the run for it).
        -> True when it went on (O(1) but for the new arrivals)."""
        sim = self.sim
        passes = sim.passes
        k = passes - self.plan_passes
        h = self.h_plan
        if (not k or (h is not None and k >= h) or sim.phase_ended_at == passes or self.waitq
                or not self.async_ or self.plan_log is not None
                or self.samples.next <= passes + 1):
            return False
        waiting, arrived = sim.waiting, self.arrived
        first = arrived[0] if arrived else waiting[0] if waiting else None
        if first is not None and self.arrive[first] <= sim.last_start:
            return False                # visible to this plan: it may be admitted
        if waiting:
            arrived.extend(waiting)
            waiting.clear()
        # the horizon a plan here would set: the blocks' counted from the plan, the booking cap
        # afresh (a plan here books the passes so far; going on books them with the next run's,
        # under 2 caps: k < h_plan)
        hb, cap = self.h_blocks, self.bulk_cap
        h = None if hb is None else hb - k
        if cap is not None and (h is None or h > cap):
            h = cap
        self.h = 1 if arrived and self.wants else h
        return True

    def _until_blocks_run_out(self, sim):
        """Passes the planned step can repeat before one would need more blocks than are free
        (None: it fits until a scheduled request's phase ends)."""
        free, pool = self.pool.num_free(), self.pool
        # no request ever holds more than its final blocks, and the tables hold at least the
        # blocks in use (a shared block is in several): if the free blocks cover what the
        # running requests may still take, no run of this step can run out (an O(1) check;
        # a roomy pool then costs no walk)
        if free >= self.need_total - pool.used():
            return None
        if self.sd or self.sp:  # any bound past the run's end is safe: the core ends it there
            kmax = UNBOUNDED
        else:           # the first phase end of a scheduled request
            slot_of, phase_end, passes = self.slot_of, sim.phase_end, sim.passes
            end = passes + 1
            first = None
            for r in self.step:
                slot = slot_of.get(r)
                if slot is not None:
                    e = phase_end(slot)
                    if e is not None and (first is None or e < first):
                        first = e
            kmax = (end if first is None else first) - passes
        return passes_until_short(self._step_growth(), free, kmax)

    def _unstable(self, r):
        """May the blocked waiting head fit before the pool shrinks? Only if its prefix hit can
        grow (blocks of its shared prefix are being computed or duplicated) or, without
        full-prompt admission, shrink into a smaller first chunk."""
        if not self.pool.caching:
            return False
        return self.spans[r] is not None or (not self.full_fit and self.looked_up[r])
