"""vLLM 0.33.0's V1 scheduler, decision for decision (vllm/v1/core/sched/scheduler.py `schedule`,
`update_from_output`, `_preempt_request`; async_scheduler.py; the KV cache in py_engine.policies.vllm.block_pool).

Every step (one forward pass), with `budget = max_num_batched_tokens`, `slots = max_num_seqs` and
`chunk = long_prefill_token_threshold`:

1. RUNNING, in list order, while budget remains: a request takes what it lacks (a decode 1 token,
   a prefill min(chunk, prompt left, budget)); chunk is ignored while only one request is running
   or waiting. Blocks are allocated for computed + scheduled tokens before the pass (the token a
   pass samples gets its slot in the next step). When the free blocks do not suffice, the victim is
   preempted: the last of the running list (fcfs), or the worst (priority, arrival) of the
   running requests (priority; if it was scheduled in this step it is taken out again), until the
   request fits or is itself the victim (priority then goes on with the next one). A victim's
   blocks are freed, its computed tokens drop to 0, it goes to the head of the waiting queue (its
   outputs stay).
2. WAITING, only if no one was preempted in this step, while budget and a slot remain: the head
   (fcfs; priority: the best (priority, arrival, id)) looks up the prefix cache (a new or resumed
   request: computed tokens = the hit), takes min(chunk, tokens left, budget) and is admitted if
   its blocks fit; with `scheduler_reserve_full_isl` its whole sequence must fit. The first that
   does not fit stops admission.
3. The pass runs; a request whose computed tokens reach its tokens samples one.

Async scheduling (`async_scheduling`, vLLM's default): step k+1 is planned while step k runs, before
step k's outputs are known: a request that sampled its last token in step k still holds its slot
and blocks when step k+1 is planned (it is skipped), and is freed after; requests arriving while
step k runs are seen when step k+1 is planned only if they arrived before step k started. A step
with nothing to run is no pass: its outputs are processed at once and the next step is planned.

The usable pool is `kv_tokens` (vLLM's num_gpu_blocks - 1 blocks of `block_size`: it keeps a null
block); null = unlimited. A request needs prompt + out - 1 KV slots to finish (the last token is
never fed back): one that cannot fit the whole pool is a ScenarioError on server.kv_tokens (the
pre-flight `check`).

Exactness is checked against decisions recorded from the real vLLM 0.33.0 scheduler
(tools/vllm_oracle.py -> tests/fixtures/vllm-0.33.0.json.gz): per request the step and time of its
first and last token, its preemptions and prefix-cache hits; per step the tokens of every request
and the free blocks.

Our extension (not in V1, which only recomputes): `preemption: "swap"` moves a victim's computed
KV to host memory (`blocks x block_size x kv_bytes_per_token / pcie_gb_s` per direction, added to
the pass that moves it) and back when it is admitted again; blocks the prefix cache still holds
are not moved back.

Event-driven: a step is planned exactly at every event; between events the same batch repeats
(every request the same tokens, no admission, no preemption), and the core runs those steps as
one run. `horizon()` ends a run before the first step whose blocks would not fit (there a victim
must be chosen), and after one step when the next differs (a preemption, an async hand-over, a
waiting request whose prefix hit may grow). What a run did to the block pool is applied at once
when it ends (py_engine.policies.vllm.block_pool: who holds which block is only observable through the free queue
and the prefix cache, and no block is freed or looked up inside a run).

vLLM never finishes some traces (priority scheduling on a tight pool without full-prompt
admission: requests preempt each other forever). The engine proves it (the scheduler's whole state
repeats with no token produced and no arrival pending) and stops with a ScenarioError.
"""

import heapq
from collections import deque

from ...sim.exact import cdiv
from .block_pool import CountingPool, PrefixCachePool
from .block_view import BlockSamples, sample_cap
from ...sim.core import FINAL, PAUSED, PREFILL
from ...errors import ScenarioError
from ...sim.work import BLOCK_WORK

BULK_TOKENS = 1 << 20   # tokens a run of repeated steps may add to the prefix cache at once
from ..base import Policy, register
from .livelock import check_livelock

WAITING, RUNNING, PREEMPTED, FINISHED = 0, 1, 2, 3
VLLM_VERSION = "0.33.0"


def shared_spans(trace, block_size):
    """Per request (prefix id, tokens of the request that are the stream), or None."""
    pid, plen = getattr(trace, "prefix_id", None), getattr(trace, "prefix_len", None)
    if pid is None:
        return [None] * len(trace[0])
    prompt = trace[1]
    out = []
    for i, p in enumerate(pid):
        if p is None:
            out.append(None)
        elif plen[i] >= prompt[i]:   # a whole prompt of stream continues it with its outputs
            out.append((p, float("inf")))
        elif plen[i] >= block_size:
            out.append((p, plen[i]))
        else:                        # not one whole block of stream
            out.append(None)
    return out


@register("vllm")
class VLLM(Policy):
    label = "vLLM " + VLLM_VERSION
    summary = "its V1 scheduler, exactly: paged KV, token budget, prefix cache, preemption"
    order = 2

    def __init__(self, sim, scenario, trace=None):
        super().__init__(sim, scenario, trace)
        sv = scenario["server"]
        n, bs = sim.n, sv["block_size"]
        self.bs, self.budget, self.max_seqs = bs, sv["max_num_batched_tokens"], sv["slots"]
        self.fcfs = sv["policy"] == "fcfs"
        self.async_ = sv["async_scheduling"]
        self.full_fit = sv["scheduler_reserve_full_isl"]
        self.swap = sv["preemption"] == "swap"
        # ns per block each way: bytes / (GB/s) = ns; 1 tick = 1 ns when the cost unit is ms.
        self.swap_ticks = int(round(bs * sv["kv_bytes_per_token"] / sv["pcie_gb_s"]))
        pool = scenario.kv_pool
        total = None if pool is None else pool // bs
        self.spans = shared_spans(trace, bs) if trace is not None else [None] * n
        self.prefix_caching = sv["enable_prefix_caching"]
        # The prefix cache is observable only if a lookup can hit: a shared prefix, or a
        # preempted request finding its own blocks (which needs a finite pool to be preempted).
        observable = total is not None or any(sp is not None for sp in self.spans)
        self.pool = (PrefixCachePool(total, bs, self.spans) if self.prefix_caching and observable
                     else CountingPool(total, bs))
        self.pool_ops = 0
        prio = getattr(trace, "priority", None)
        self.prio = list(prio) if prio is not None else [0] * n
        self.P, self.O, self.arrive = sim.prompt, sim.out, sim.arrive
        self.C = [0] * n              # computed tokens (vLLM num_computed_tokens)
        self.T = list(sim.prompt)     # known tokens: prompt + outputs delivered (num_tokens)
        self.ph = [0] * n             # async: output placeholders (sampled, not yet delivered)
        self.inflight = [0] * n       # async: scheduled tokens whose step is not processed yet
        self.stale = [0] * n          # async: in-flight tokens of a preempted request
        self.status = [WAITING] * n
        self.saved = {}               # swap: request -> computed tokens kept on host
        self.thrown = {}              # recompute: request -> computed tokens it lost
        self.looked_up = [False] * n  # computed before (its own blocks may be cached)
        self.running = []             # vLLM's running list (async: with finished, unprocessed)
        self.waitq = deque() if self.fcfs else []   # visible waiting requests
        self.arrived = deque()        # released by the core, not yet visible (async)
        self.slot_of = {}
        self.step = []                # the planned step: [(request, tokens, samples)]
        self.unprocessed = None       # async: the step whose outputs are not processed yet
        self.plan_passes = 0          # sim.passes when the step was planned
        self.h = None                 # horizon of the planned step
        self.wants = True
        self.kv_used = 0              # blocks in use after the planned step (for kv_after)
        self.last_progress = 0        # pass of the last sampled token
        self.seen = {}                # livelock detection: state -> pass
        self.victims = set()          # preempted since the last sampled token
        # counters
        self.swap_out_blocks = self.swap_in_blocks = self.swap_extra = 0
        self.recomputed = 0
        self.pc = {"queries": 0, "hits": 0, "preempted_queries": 0, "preempted_hits": 0}
        self.plan_log = None          # tests: a list to record every planned step into
        self.samples = BlockSamples(sample_cap(self.max_seqs), bs, total)

    @classmethod
    def check(cls, scenario, trace):
        """A request whose prompt + out - 1 tokens exceed the pool could never finish."""
        sv = scenario["server"]
        kv_tokens, bs = scenario.kv_pool, sv["block_size"]
        if kv_tokens is None:
            return
        _, prompt, out = trace[:3]
        worst = max(range(len(prompt)), key=lambda i: prompt[i] + out[i])
        need = cdiv(prompt[worst] + out[worst] - 1, bs)
        if need > kv_tokens // bs:
            raise ScenarioError(
                "server.kv_tokens", kv_tokens,
                "at least %d (request %d needs prompt %d + output %d - 1 tokens = %d blocks of %d)"
                % (need * bs, worst, prompt[worst], out[worst], need, bs))

    # ------------------------------------------------------------ the core's hooks
    def schedule(self):
        sim = self.sim
        # work (py_engine/sim/work.py): _plan and _apply walk the running list; the pool counts the
        # blocks it touched since the last call
        pool = self.pool
        sim.work += len(self.running) + BLOCK_WORK * (pool.ops - self.pool_ops)
        self.pool_ops = pool.ops
        k = sim.passes - self.plan_passes
        if k:
            visible = sim.last_start       # async: what arrived before the last pass began
            self._bulk(k - 1)
            if self.async_:
                self.unprocessed = self.step
            else:
                self._update(self.step)
            self.step = []
        else:
            visible = sim.now
        self.arrived.extend(sim.waiting)
        sim.waiting.clear()
        self._release(visible if self.async_ else sim.now)
        preempted = []
        while True:
            sched, victims, admitted, info = self._plan()
            preempted += victims
            if sched or not (self.unprocessed or self.arrived):
                break
            # nothing to run: no pass; process the outputs now and plan again
            if self.unprocessed:
                self._update(self.unprocessed)
                self.unprocessed = None
            self._release(sim.now)
        self._after_schedule(sched)
        free = self.pool.num_free()           # as vLLM reports it right after schedule()
        if self.unprocessed:
            self._update(self.unprocessed)
            self.unprocessed = None
        self._apply(sched, preempted, admitted)
        self.plan_passes = sim.passes
        self._set_horizon(sched, preempted, info)
        if self.pool.caching and self.step:
            # a run's repeated steps are booked at once (_bulk), block by block: bound a run so
            # that booking stays a fraction of a second and the work cap can stop between runs
            # (any horizon gives the same decisions: the stepped benchmark is one pass a run)
            k = max(1, BULK_TOKENS // max(1, sum(n for _, n, _ in self.step)))
            if self.h is None or self.h > k:
                self.h = k
        if sched:
            slot_of = self.slot_of
            self.samples.take(sim.passes + 1, self.pool,
                              ((r, slot_of[r]) for r in self.running if r in slot_of))
        if self.plan_log is not None:
            self.plan_log.append({"pass": sim.passes + 1, "tokens": dict(sched),
                                  "preempted": preempted, "admitted": admitted,
                                  "free": free})
        if preempted:
            self.victims.update(preempted)
            self._livelock()

    def horizon(self):
        return self.h

    def block_view(self):
        return self.samples.document()

    def wants_arrivals(self):
        return self.wants

    def kv_after(self, k):
        """KV in use (tokens in allocated blocks, vLLM's KV usage) after k passes of this step."""
        if k <= 1:
            return self.pool.used() * self.bs
        bs, C = self.bs, self.C
        extra = sum(cdiv(C[r] + (k - 1) * n, bs) - cdiv(C[r], bs) for r, n, _ in self.step)
        return (self.pool.used() + extra) * bs

    def extra_metrics(self):
        pc = dict(self.pc)
        pc["hit_rate"] = pc["hits"] / pc["queries"] if pc["queries"] else None
        return {"swap_out_blocks": self.swap_out_blocks, "swap_in_blocks": self.swap_in_blocks,
                "swap_ms": (self.swap_out_blocks + self.swap_in_blocks) * self.swap_ticks / 1e6,
                "recomputed_tokens": self.recomputed, "prefix_cache": pc,
                "prefix_hit_rate": pc["hit_rate"], "kv_pool_tokens": self.scenario.kv_pool}

    # ------------------------------------------------------------ arrivals
    def _release(self, visible):
        arrived, arrive = self.arrived, self.arrive
        while arrived and arrive[arrived[0]] <= visible:
            self._enqueue(arrived.popleft())

    def _enqueue(self, r):
        if self.fcfs:
            self.waitq.append(r)
        else:
            heapq.heappush(self.waitq, (self.prio[r], self.arrive[r], r))

    def _prepend(self, r):
        if self.fcfs:
            self.waitq.appendleft(r)
        else:
            heapq.heappush(self.waitq, (self.prio[r], self.arrive[r], r))

    def _peek(self):
        return self.waitq[0] if self.fcfs else self.waitq[0][2]

    def _pop_waiting(self):
        return self.waitq.popleft() if self.fcfs else heapq.heappop(self.waitq)[2]

    # ------------------------------------------------------------ one step, exactly
    def _plan(self):
        """schedule(): -> (scheduled {request: tokens} in order, preempted, admitted {request:
        computed tokens at admission}, info for the horizon)."""
        C, T, ph, P, O = self.C, self.T, self.ph, self.P, self.O
        pool, bs, running = self.pool, self.bs, self.running
        budget = self.budget
        thr = self.chunk if len(running) + len(self.waitq) > 1 else 0
        sched, preempted, admitted = {}, [], {}
        try_grow, caching = pool.try_grow, pool.caching
        n_cached = pool.n_cached if caching else None
        lingering = 0
        i = 0
        while i < len(running) and budget > 0:
            r = running[i]
            c, p = C[r], ph[r]
            if p and c + 2 - p >= P[r] + O[r]:
                lingering += 1      # async: its last token is in flight
                i += 1
                continue
            n = T[r] + p - c
            if 0 < thr < n:
                n = thr
            if n > budget:
                n = budget
            ok = True
            while not try_grow(r, c + n):
                if self.fcfs:
                    v = running.pop()
                else:
                    v = max(running, key=lambda x: (self.prio[x], self.arrive[x]))
                    vi = running.index(v)
                    del running[vi]
                    if vi < i:
                        i -= 1
                    if v in sched:
                        budget += sched.pop(v)
                self._preempt(v)
                preempted.append(v)
                if v == r:
                    ok = False
                    break
            if not ok:
                if not self.fcfs:
                    continue
                break
            if caching and (c + n) // bs > n_cached.get(r, 0):   # a block filled: cache it
                pool.cache(r, c + n, T[r])
            sched[r] = n
            budget -= n
            i += 1
        blocked = None
        if not preempted:
            while budget > 0 and self.waitq:
                if len(running) >= self.max_seqs:
                    break
                r = self._peek()
                hits = pool.lookup(r, T[r]) if self._may_hit(r) else ()
                start = len(hits) * bs
                saved = self.saved.get(r)
                if saved is not None and saved > start:
                    start = saved
                n = T[r] - start
                if 0 < thr < n:
                    n = thr
                if n > budget:
                    n = budget
                free = pool.num_free()
                if (self.full_fit and pool.need(r, T[r], hits) > free) or \
                        pool.need(r, start + n, hits) > free:
                    blocked = r
                    break
                self._pop_waiting()
                pool.allocate(r, start + n, hits)
                pool.cache(r, start + n, T[r])
                self._admitted(r, len(hits) * bs, start)
                running.append(r)
                sched[r] = n
                admitted[r] = start
                budget -= n
        return sched, preempted, admitted, (lingering, blocked, budget)

    def _may_hit(self, r):
        """Can a lookup find anything? Only shared-prefix requests and ones computed before."""
        return self.pool.caching and (self.spans[r] is not None or self.looked_up[r])

    def _admitted(self, r, hit, start):
        key = "preempted_" if self.status[r] == PREEMPTED else ""
        if self.prefix_caching:   # vLLM counts every lookup, also those that cannot hit
            self.pc[key + "queries"] += self.T[r]
            self.pc[key + "hits"] += hit
        if not key:
            self.sim.cached_tokens[r] = hit
        saved = self.saved.pop(r, None)
        if saved is not None and start > hit:   # swap: the blocks the cache lost come back
            self.swap_in_blocks += cdiv(start, self.bs) - hit // self.bs
            self.swap_extra += (cdiv(start, self.bs) - hit // self.bs) * self.swap_ticks
        lost = self.thrown.pop(r, 0)
        if lost > start:
            self.recomputed += lost - start
        self.status[r] = RUNNING
        self.C[r] = start
        self.looked_up[r] = True

    def _preempt(self, v):
        if self.swap:
            blocks = self.pool.n_blocks(v)
            self.saved[v] = self.C[v]
            self.swap_out_blocks += blocks
            self.swap_extra += blocks * self.swap_ticks
        else:
            self.thrown[v] = self.C[v]
        self.pool.free_request(v, False)
        self.status[v] = PREEMPTED
        self.stale[v] = self.inflight[v]
        self.C[v] = 0
        self.ph[v] = 0
        self._prepend(v)

    def _after_schedule(self, sched):
        """_update_after_schedule: computed tokens advance; a request that samples gets a
        placeholder (async)."""
        C, T, ph, inflight = self.C, self.T, self.ph, self.inflight
        step = []
        for r, n in sched.items():
            samples = C[r] + n >= T[r] + ph[r]
            C[r] += n
            inflight[r] += n
            if samples and self.async_:
                ph[r] += 1
            step.append((r, n, samples))
        self.step = step

    def _update(self, step):
        """update_from_output for one step: sampled tokens are delivered; finished requests are
        freed, in scheduled order."""
        C, T, ph, P, O = self.C, self.T, self.ph, self.P, self.O
        status, inflight, stale, pool = self.status, self.inflight, self.stale, self.pool
        caching, bs = pool.caching, self.bs
        n_cached = pool.n_cached if caching else None
        done = []
        sampled = False
        for r, n, samples in step:
            inflight[r] -= n
            is_stale = stale[r] > 0
            if is_stale:
                stale[r] -= n
            if status[r] == FINISHED or not samples:
                continue
            sampled = True
            had_ph = ph[r] > 0
            T[r] += 1
            if not is_stale and had_ph:
                ph[r] -= 1
            if (not is_stale and status[r] == RUNNING and had_ph and caching
                    and (C[r] - inflight[r]) // bs > n_cached.get(r, 0)):
                pool.cache(r, C[r] - inflight[r], T[r])
            if T[r] - P[r] == O[r]:
                if status[r] == RUNNING:
                    done.append(r)
                else:                     # preempted with its last token in flight
                    self._drop_waiting(r)
                status[r] = FINISHED
                pool.free_request(r, True)
                self.slot_of.pop(r, None)
                self.saved.pop(r, None)
                self.thrown.pop(r, None)
        if done:
            gone = set(done)
            self.running = [r for r in self.running if r not in gone]
        if sampled:
            self._progress()

    def _progress(self):
        self.last_progress = self.sim.passes
        if self.seen:
            self.seen.clear()
        if self.victims:
            self.victims.clear()

    def _drop_waiting(self, r):
        if self.fcfs:
            self.waitq.remove(r)
        else:
            self.waitq = [e for e in self.waitq if e[2] != r]
            heapq.heapify(self.waitq)

    # ------------------------------------------------------------ runs of identical steps
    def _bulk(self, j):
        """Steps 2..j+1 of the run that just ended repeated the planned one: computed tokens,
        outputs (all but the last step's), blocks and the prefix cache, at once."""
        if j <= 0:
            return
        C, T, pool, bs, step = self.C, self.T, self.pool, self.bs, self.step
        late = self.async_          # an async decode's blocks are cached one step later
        ordered = pool.caching and self._shared_in(step)
        events = []
        for order, (r, n, samples) in enumerate(step):
            c0 = C[r]
            c1 = c0 + j * n
            pool.grow(r, c1)
            C[r] = c1
            if samples:
                T[r] += j
            if not pool.caching:
                continue
            upto = c1 - 1 if (late and samples) else c1
            if ordered and self.spans[r] is not None:
                lag = 1 if (late and samples) else 0
                first = pool.n_cached.get(r, 0)
                full = min(upto, T[r] - T[r] % bs) // bs
                for b in range(first, full):
                    m = max(1, cdiv((b + 1) * bs + lag - c0, n))
                    events.append((m, order, r, b))
                if full > first:
                    pool.n_cached[r] = full
            elif upto // bs > pool.n_cached.get(r, 0):
                pool.cache(r, upto, T[r])
        if events:
            events.sort()
            for _, _, r, b in events:
                pool.cache_block(r, b)
        if any(s for _, _, s in step):
            self._progress()

    def _shared_in(self, step):
        """True if two requests of this step share a prefix id (their blocks may carry the same
        hashes, and the prefix cache keeps duplicates in the order they were cached)."""
        seen = set()
        for r, _, _ in step:
            span = self.spans[r]
            if span is not None:
                if span[0] in seen:
                    return True
                seen.add(span[0])
        return False

    # ------------------------------------------------------------ the step -> the core
    def _apply(self, sched, preempted, admitted):
        sim, slot_of, res = self.sim, self.slot_of, self.sim.res
        for v in preempted:
            slot = slot_of.pop(v, None)
            if slot is not None:
                sim.evict(slot)
            else:        # async: preempted while its last token was in flight
                sim.preemptions[v] += 1
        for r in self.running:
            slot = slot_of.get(r)
            if slot is None or r in admitted:
                continue
            resident = res[slot]
            if resident is None or resident.rid != r:   # finished, output not processed yet
                continue
            n = sched.get(r)
            if n is None:
                sim.pause(slot)
            elif resident.phase == PAUSED:
                sim.unpause(slot, n)
            elif resident.phase == PREFILL:
                if resident.chunk != n:
                    sim.set_chunk(slot, n)
            elif resident.phase == FINAL and resident.pf_left != n:
                sim.set_chunk(slot, n)
        for r, start in admitted.items():
            slot_of[r] = sim.admit(r, sched[r], prefill=self.T[r] - start, kv0=start)
        if self.swap_extra:
            sim.add_cost(self.swap_extra)
            self.swap_extra = 0

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
            return
        total = self.pool.total
        if total is None or not sched:
            self.h = None
            return
        free, bs, C = self.pool.num_free(), self.bs, self.C
        step = [(C[r], n) for r, n, _ in self.step]
        res, slot_of, passes = sim.res, self.slot_of, sim.passes
        kmax = min((res[slot_of[r]].target for r, _, _ in self.step
                    if r in slot_of and res[slot_of[r]] is not None), default=passes + 1) - passes

        def demand(m):   # blocks the next m steps allocate
            return sum(cdiv(c + m * n, bs) - cdiv(c, bs) for c, n in step)

        if kmax <= 1 or demand(kmax - 1) <= free:
            self.h = None
            return
        lo, hi = 0, kmax - 1     # demand(lo) <= free < demand(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if demand(mid) <= free:
                lo = mid
            else:
                hi = mid
        self.h = lo + 1

    def _unstable(self, r):
        """May the blocked waiting head fit before the pool shrinks? Only if its prefix hit can
        grow (blocks of its shared prefix are being computed or duplicated) or, without
        full-prompt admission, shrink into a smaller first chunk."""
        if not self.pool.caching:
            return False
        return self.spans[r] is not None or (not self.full_fit and self.looked_up[r])

    # ------------------------------------------------------------ livelock
    def _livelock(self):
        check_livelock(self, VLLM_VERSION)
