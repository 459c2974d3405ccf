"""Steady decoders, the vllm policy's incremental half (mixed into scheduler.VLLM).

Where nothing binds, most running requests are *steady decoders*: every step schedules them one
token, which they sample, and nothing else about them changes. Walking them at every event made an
event cost grow with the running list (20,000 requests on 4,096 slots: about 100x continuous
batching's CPU; kept apart, about 4.5-5x: bench/vllm.py nothing_binds). Here they are kept apart:

    num_computed_tokens = a[r] + self.sd_steps     (sd_steps: steps scheduled since)
    num_tokens          = b[r] + self.sd_updates   (sd_updates: steps whose outputs were processed)
    num_output_placeholders, inflight: constant while steady (async 1, 0 plus the in-flight step)

and the block pool's free count moves by a histogram of their computed tokens modulo the block
size. A step's plan then touches only the other requests, the *special* ones (prefilling,
just admitted, paused, lingering), and is exact as long as every request gets all it asks for:
the token budget covers every demand and the free blocks cover every growth. When either binds,
every steady decoder is made explicit again (`_sd_materialize_all`) and the step is planned by
vLLM's own walk over the running list, in its order.

With block counts (counting_pool.CountingPool: prefix caching off, or not observable) that is all.
With the prefix cache (block tables, async scheduling only) two things about a decoder are seen:
- the blocks it takes: a step touches only the decoders whose last block is full (they are kept
  by a mod block_size, `sd_members`), a run of m steps those that take one within it; which
  free block goes to which request is not observable (the run's booking leans on that too);
- the blocks it caches: only its own-key blocks (it joins once every shared block of it is
  cached), seen only when its table is freed (finished or preempted, both after it leaves) or
  looked up (its own lookup, after a preemption): so it caches them when it leaves, as many as
  the walk had by then (every block within its delivered tokens but the last one: outputs.py
  caches a decode's block one step late).
The requests a plan walks keep the running list's order (two may cache one shared key, and
finished tables are freed in step order): one that leaves the steady set goes to the end of
`special`, which is sorted again (by admission) before the next plan.
A request leaves the steady set when it would linger (async: its last token in flight) or finish
(sync), at the very step, from heaps keyed by those counters.

What an event still costs where nothing binds: the special requests (each request is special at
about 3-4 plans: its admission, its first decode, its last token in flight, its finish), O(1) for
the steady set (the histogram bucket whose last block is full gives one step's new blocks), and
a sum over at most block_size buckets when a run of several steps ends.
"""

import heapq

from ...sim.exact import cdiv
from .status import RUNNING


# tokens a decoder has left at least when it joins the steady set: joining and leaving cost a few
# plans' walks of it, and most of a skewed trace's requests decode a few tokens (nothing_binds:
# ~2% fewer instructions than joining every decoder; 16 to 1,024 alike)
JOIN_MIN = 16


class Step(dict):
    """A planned step: {request: (tokens, samples)} of the special requests, in scheduled order;
    `sd`: the steady decoders were in it too (one token each, sampled); `sp`: the steady
    prefillers (a chunk each, steady_prefills.py)."""

    __slots__ = ("sd", "sp")

    def __init__(self):         # (empty: dict's own __init__ has nothing to do)
        self.sd = self.sp = False

    def __bool__(self):       # something was scheduled in it
        return self.sd or self.sp or len(self) > 0


class Steady:

    def _init_steady(self, lazy):
        self.lazy = lazy                # steady decoders kept apart
        self.sd = {}                    # request -> (a, b, i): offsets of computed, tokens, inflight
        self.special = {}               # running requests that are not steady
        # with the prefix cache (block tables): the steady decoders by a mod block_size, so a
        # step touches only those that take a new block; `special` in running order again
        # before a plan walks it (a request that leaves the steady set goes to its end)
        self.sd_members = ([{} for _ in range(self.bs)] if lazy and self.pool.caching
                           else None)
        self.special_in_order = True
        self.sd_joined = []             # joined in this plan: scheduled, told by _apply
        self.sd_steps = self.sd_updates = 0
        self.sd_hist = [0] * self.bs    # steady decoders by a mod block_size
        self.sd_done = []               # heap (sd_updates at which it finishes (sync), request)
        self.sd_linger = []             # heap (sd_steps at whose plan it lingers (async), request)

    # ------------------------------------------------------------ in and out of the steady set
    def _sd_join(self, r):
        """r's last scheduled step gave it one token, sampled: from now on it is steady."""
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        a, b = computed[r] - self.sd_steps, num_tokens[r] - self.sd_updates
        self.sd[r] = (a, b, self.inflight[r] - self.sd_steps + self.sd_updates)
        self.sd_hist[a % self.bs] += 1
        if self.sd_members is not None:
            self.sd_members[a % self.bs][r] = None
        del self.special[r]
        self.sd_joined.append(r)
        end = self.num_prompt_tokens[r] + self.max_tokens[r]
        if self.async_:
            heapq.heappush(self.sd_linger, (end - 1 - a, r))
        else:
            heapq.heappush(self.sd_done, (end - b, r))

    def _sd_eligible(self, r, n, samples):
        if not (self.lazy and n == 1 and samples and self.status[r] == RUNNING and not self.stale[r]
                and r in self.slot_of):
            return False
        if self.sd_members is not None and self.pool.n_cached.get(r, 0) < self.pool.keys.own_from(r):
            return False        # a block it caches may share a key: its order matters
        end = self.num_prompt_tokens[r] + self.max_tokens[r]
        if end - self.num_computed_tokens[r] < JOIN_MIN:
            return False        # it would leave again before being kept apart pays
        if self.async_:
            # steady at ph 1, and scheduled again at the next plan (it does not linger there)
            return (self.num_output_placeholders[r] == 1
                    and self.num_computed_tokens[r] + 1 < end)
        return self.num_output_placeholders[r] == 0 and self.num_tokens[r] < end

    def _sd_leave(self, r):
        """r is explicit again: its counters written back (the pending steps are the caller's)."""
        a, b, i = self.sd.pop(r)
        self.sd_hist[a % self.bs] -= 1
        self.num_computed_tokens[r] = a + self.sd_steps
        self.num_tokens[r] = t = b + self.sd_updates
        self.inflight[r] = i + self.sd_steps - self.sd_updates
        if self.sd_members is None:
            self.pool.held[r] = cdiv(self.num_computed_tokens[r], self.bs)
        else:   # its table grew step by step; its blocks are cached now, as the walk had:
            # (async) every block within its delivered tokens but the last one
            del self.sd_members[a % self.bs][r]
            self.pool.cache(r, t - 1, t)
            self.special_in_order = False
        self.special[r] = None

    def _sd_materialize(self, r):
        """r explicit again, also in the steps planned and not yet processed (async)."""
        self._sd_leave(r)
        for step in (self.step, self.unprocessed):
            if isinstance(step, Step) and step.sd:
                step[r] = (1, True)

    def _sd_materialize_all(self):
        """Every steady decoder explicit again (_sd_materialize for each, the steps' entries
        added at once, in the same order)."""
        decoders = list(self.sd)
        self.sim.count_work(len(decoders))      # (as the steady prefillers', steady_prefills.py)
        for r in decoders:
            self._sd_leave(r)
        for step in (self.step, self.unprocessed):
            if isinstance(step, Step) and step.sd:
                step.update(dict.fromkeys(decoders, (1, True)))
                self._sd_step_in_order(step)
        self.sd_done.clear()
        self.sd_linger.clear()

    def _sd_lingering(self):
        """Before a plan (async): steady decoders whose last token is in flight become explicit."""
        heap = self.sd_linger
        left = False
        while heap and heap[0][0] <= self.sd_steps:
            _, r = heapq.heappop(heap)
            if r in self.sd:
                self._sd_materialize(r)
                left = True
        if left and isinstance(self.unprocessed, Step) and self.unprocessed.sd:
            self._sd_step_in_order(self.unprocessed)

    def _sd_step_in_order(self, step):
        """With block tables, a step's requests in running order again after steady decoders
        were added at its end: its outputs free finished tables in that order (free_request:
        the free queue's order), and cache blocks in it."""
        if self.sd_members is not None:
            order = self.admission_order
            entries = sorted(step.items(), key=lambda e: order[e[0]])
            step.clear()
            step.update(entries)

    def _sd_finished(self):
        """After a step's outputs (sync): the steady decoders whose last token that was."""
        heap, out = self.sd_done, []
        while heap and heap[0][0] <= self.sd_updates:
            _, r = heapq.heappop(heap)
            if r in self.sd:
                self._sd_leave(r)
                out.append(r)
        return out

    # ------------------------------------------------------------ a step at once
    def _schedule_running_at_once(self, threshold):
        """The RUNNING loop when nothing binds: every request gets what it lacks (steady decoders
        one token each and steady prefillers a chunk each, in aggregate; the special ones as vLLM
        computes it), which needs fewer tokens than the budget and fewer new blocks than are
        free; then no order matters. ->
        (scheduled, budget left, lingering, the requests _apply must tell: told other tokens
        than these, or lingering), or None when something binds."""
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        placeholders = self.num_output_placeholders
        end = self.num_prompt_tokens
        max_tokens, pool, bs = self.max_tokens, self.pool, self.bs
        caching = pool.caching
        if caching:
            table = pool.table
            if not self.special_in_order:   # the walk's order: blocks cached, tables freed
                order = self.admission_order
                self.special = dict.fromkeys(sorted(self.special, key=order.__getitem__))
                self.special_in_order = True
        else:
            held = pool.held
        # the steady decoders' new blocks this step: those whose last block is full; the steady
        # prefillers' (steady_prefills.py): a chunk each, of whole blocks
        grow_sd = self.sd_hist[-self.sd_steps % bs] if self.sd else 0
        tokens, blocks = len(self.sd), grow_sd
        if self.sp:
            tokens += len(self.sp) * self.chunk
            blocks += self._sp_growth(1)
        budget, told = self.budget, self.told
        lingering, sched, grown, tell = 0, {}, [], []
        for r in self.special:
            c, p = computed[r], placeholders[r]
            if p and c + 2 - p >= end[r] + max_tokens[r]:
                lingering += 1      # async: its last token is in flight
                tell.append(r)
                continue
            n = num_tokens[r] + p - c
            if 0 < threshold < n:
                n = threshold
            tokens += n
            if tokens >= budget:    # the budget binds: the rest cannot change that
                return None
            grow = -(-(c + n) // bs) - (len(table[r]) if caching else held[r])
            if grow > 0:
                blocks += grow
                grown.append((r, grow))
            sched[r] = n
            if told.get(r) != n:
                tell.append(r)
        if tokens >= budget or blocks > pool.num_free():
            return None
        if caching:     # as the walk: blocks taken (their order is not observable), full
            # blocks cached in running order (two requests may cache a shared key)
            # the blocks fit (checked above): the steady decoders', then the others' in running
            # order, a block filled cached after the grows before it (pool.grow_many: one pop
            # for those in between)
            n_cached, grows = pool.n_cached, self._sd_grows(1) if grow_sd else []
            for r, n in sched.items():
                c = computed[r] + n
                if -(-c // bs) > len(table[r]):     # it grows (no earlier grow touched its table)
                    grows.append((r, c))
                if c // bs > n_cached.get(r, 0):
                    if grows:
                        pool.grow_many(grows)
                        grows = []
                    pool.cache(r, c, num_tokens[r])
            if grows:
                pool.grow_many(grows)
        else:           # counts: every grow fits (checked above)
            pool.free -= blocks
            for r, grow in grown:
                held[r] += grow
        return sched, budget - tokens, lingering, tell

    # ------------------------------------------------------------ the aggregate
    def _sd_growth(self, m):
        """Blocks the steady decoders allocate over their next m = q bs + t steps: one whose last
        block has u free slots takes q + [u < t] (growth.py), and those of bucket g have
        u = -(g + sd_steps) % bs: a sum over t buckets (no Growth built per plan)."""
        if not self.sd or m <= 0:
            return 0
        bs, hist, s = self.bs, self.sd_hist, self.sd_steps
        q, t = divmod(m, bs)
        blocks = len(self.sd) * q
        for u in range(t):
            blocks += hist[(-s - u) % bs]
        return blocks

    def _sd_by_free(self):
        """The steady decoders by the free slots in their last block (None: there are none)."""
        if not self.sd:
            return None
        # a decoder of bucket g has a + sd_steps computed tokens, u = -(g + s) % bs free slots:
        # out[u] = hist[(-s - u) % bs] = the reversed histogram rotated by (s - 1) % bs
        rev = self.sd_hist[::-1]
        r0 = (self.sd_steps - 1) % self.bs
        return rev[r0:] + rev[:r0]

    def _sd_advance(self, steps, updates):
        """`steps` more steps scheduled for the steady decoders (their blocks taken), `updates`
        more of their steps' outputs processed."""
        if self.sd:
            if self.sd_members is None:
                self.pool.free -= self._sd_growth(steps)
            else:
                self._sd_grow_tables(steps)
        self.sd_steps += steps
        self.sd_updates += updates

    def _sd_grow_tables(self, steps):
        """The block tables of the steady decoders that take a block in the next `steps` steps,
        with one pop (block_pool.PrefixCachePool.grow_many)."""
        grows = self._sd_grows(steps)
        if grows:
            self.pool.grow_many(grows)

    def _sd_grows(self, steps):
        """[(request, num_tokens)] of the steady decoders that take a block in the next `steps`
        steps (the step at sd_steps = s gives one to those with (a + s) % bs == 0), in order."""
        sd, bs, s = self.sd, self.bs, self.sd_steps
        end = s + steps
        # work (sim/work.py): a decoder touched counts as one a walk touches (its blocks are
        # the pool's count)
        if steps >= bs:
            self.sim.count_work(len(sd))
            return [(r, a + end) for r, (a, _, _) in sd.items()]
        members, grows = self.sd_members, []
        for t in range(s, end):
            bucket = members[-t % bs]
            if bucket:
                self.sim.count_work(len(bucket))
                grows += [(r, sd[r][0] + end) for r in bucket]
        return grows

    def _sd_tokens(self):
        """{request: 1} of the steady decoders (tests' plan log)."""
        return dict.fromkeys(self.sd, 1)
