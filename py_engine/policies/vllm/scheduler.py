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

Async scheduling, the pool, exactness and our swap extension: the package's docstring
(policies/vllm/__init__.py).

Event-driven: a step is planned exactly at every event; between events the same batch repeats and
the core runs those steps as one run (runs.py); where nothing binds, only the requests whose state
changes are touched (steady.py, and steady_prefills.py for long prompts' full chunks; with the
prefix cache, under async scheduling: the decoders that take a block are touched too). Where
every running request is walked (something binds, or sync scheduling with the prefix cache), a
walk skips what cannot change: the pool for a step within a request's last block, the core for a
resident told the same tokens as before (`told`), the horizon's search when the free blocks cover
every running request's final blocks (`need_total`). An event where the plan would repeat the
planned step does not plan (runs.py `_repeats`). Names follow vLLM's: num_computed_tokens,
num_tokens (prompt + outputs delivered), num_output_placeholders (async), max_tokens.

vLLM never finishes some traces (priority scheduling on a tight pool without full-prompt
admission: requests preempt each other forever). The engine proves it (the scheduler's whole state
repeats with no token produced and no arrival pending) and stops with a ScenarioError.
"""

from collections import deque

from ...errors import ScenarioError
from ...sim.exact import cdiv
from ...sim.work import BLOCKS_PER_UNIT
from ...workload.blocks import chains
from ..base import Policy, RunAgain, register
from .admission import Admission
from .apply import Apply
from .block_keys import shared_spans, span_of
from .block_pool import PrefixCachePool
from .block_view import BlockSamples, holders, sample_cap
from .counting_pool import CountingPool
from .fleet_probe import FleetProbe
from .livelock import check_livelock
from .outputs import Outputs
from .runs import Runs
from .status import PREEMPTED, WAITING
from .steady import Steady, Step
from .steady_prefills import SteadyPrefills
from .waiting import WaitQueue

VLLM_VERSION = "0.33.0"


@register("vllm")
class VLLM(Admission, Apply, Outputs, Steady, SteadyPrefills, Runs, FleetProbe, Policy):
    label = "vLLM " + VLLM_VERSION
    summary = "its V1 scheduler, exactly: paged KV, token budget, prefix cache, preemption"
    order = 2
    # an event where the plan would repeat the planned step does not plan (runs.py _repeats);
    # False plans at every event (the stepped benchmark, the reference the runs are held to)
    continues = True
    # steady decoders also with the prefix cache (async); False walks every running request
    # at every plan there (the path they are tested against)
    steady_tables = True
    # block counts until the first preemption where only that can make the prefix cache
    # observable, then the run starts over (SpeculativeVLLM: what a runner that can start over
    # runs)
    speculate = False
    # fcfs admissions where a lookup cannot hit, in one walk (admission.py); False: vLLM's
    # general loop (the path it is tested against)
    counted_admission = True
    # long prompts' full chunks in aggregate where nothing binds (steady_prefills.py); False:
    # each one walked at every plan (the path they are tested against)
    steady_prefills = True

    def __init__(self, sim, scenario, trace=None):
        super().__init__(sim, scenario, trace)
        sim = self.sim
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
        self.hashed = hashed = chains(trace) if trace is not None else None
        self.spans = shared_spans(trace, bs, hashed) if trace is not None else [None] * n
        self.prefix_caching = sv["enable_prefix_caching"]
        # The prefix cache is observable only if a lookup can hit: a shared prefix, or a
        # preempted request finding its own blocks (which needs a finite pool to be preempted).
        # A fleet's replica starts with no requests: its fleet's whole trace decides.
        whole = getattr(trace, "whole", None)
        shared = any(sp is not None for sp in self.spans) or (
            whole is not None and any(sp is not None for sp in shared_spans(
                whole, bs, chains(whole))))
        # Without shared content (in a fleet's whole trace) only a preempted request's lookup
        # can hit (its own blocks): until the first preemption the cache cannot be observed,
        # and a run that can start over (`speculate`) counts blocks until then (SpeculativeVLLM)
        self.speculating = (self.speculate and self.prefix_caching and total is not None
                            and not shared)
        self.pool = (PrefixCachePool(total, bs, self.spans, hashed,
                                     getattr(trace, "hash_block", None),
                                     chains(whole) if whole is not None else hashed)
                     if self.prefix_caching and (total is not None or shared)
                     and not self.speculating else CountingPool(total, bs))
        self.pool_ops = 0
        prio = getattr(trace, "priority", None)
        self.prio = list(prio) if prio is not None else [0] * n
        self.num_prompt_tokens, self.max_tokens, self.arrive = sim.prompt, sim.out, sim.arrive
        self.num_computed_tokens = [0] * n
        self.num_tokens = list(sim.prompt)    # prompt + outputs delivered
        self.num_output_placeholders = [0] * n   # async: sampled, not yet delivered
        self.inflight = [0] * n       # async: scheduled tokens whose step is not processed yet
        self.stale = [0] * n          # async: in-flight tokens of a preempted request
        self.status = [WAITING] * n
        self.saved = {}               # swap: request -> computed tokens kept on host
        self.remote = {}              # a decode replica: request -> tokens whose KV came over the
                                      # link (fleet/disagg.py), until it is admitted
        self.thrown = {}              # recompute: request -> computed tokens it lost
        self.looked_up = [False] * n  # computed before (its own blocks may be cached)
        self.need_total = 0           # sum of _final_blocks over the running list (runs.py)
        self.running = {}             # vLLM's running list, in order (async: with finished,
                                      # unprocessed); a dict: O(1) removal, insertion order
        self.waitq = WaitQueue(self.fcfs, self.prio, self.arrive)   # visible waiting requests
        self.arrived = deque()        # released by the core, not yet visible (async)
        self.slot_of = {}
        self.told = {}                # request -> the tokens its resident runs a pass, as last told
                                      # (_apply; 1 after a pass that samples: it decodes)
        self.tell = None              # the special requests _apply must tell (None: every one)
        self.step = Step()            # the planned step: {request: (tokens, samples)}
        self.unprocessed = None       # async: the step whose outputs are not processed yet
        self.plan_passes = 0          # sim.passes when the step was planned
        self.h = None                 # horizon of the planned step
        self.h_plan = None            # passes it repeats from its plan (runs.py _set_horizon)
        self.h_blocks = self.bulk_cap = None   # its parts: until blocks run out, the booking cap
        self.chunking = False         # the plan applied the chunk (more than one request)
        self.step_growth = None       # its blocks over m repeats (runs.Runs._step_growth)
        self.wants = True
        self.last_progress = 0        # pass of the last sampled token
        self.seen = {}                # livelock detection: state digest -> pass
        self.victims = set()          # preempted since the last sampled token
        # counters
        self.swap_out_blocks = self.swap_in_blocks = self.swap_extra = 0
        self.recomputed = 0
        self.pc = {"queries": 0, "hits": 0, "preempted_queries": 0, "preempted_hits": 0}
        self.plan_log = None          # tests: a list to record every planned step into
        self.samples = BlockSamples(sample_cap(self.max_seqs), bs, total)
        self.admission_order = [0] * n   # its place in the running list (a counter)
        self.admissions = 0
        # steady decoders: with block counts, or block tables under async scheduling (the
        # blocks a decoder caches while steady are cached when it leaves: steady.py)
        self._init_steady(isinstance(self.pool, CountingPool)
                          or (self.async_ and self.steady_tables))
        self._init_steady_prefills()
        if not self.lazy:
            self.special = self.running   # every running request is special: one dict

    def grow(self):
        """A fleet's router sent request r: its state, as __init__ gives every request."""
        r = self.sim.n - 1
        self.spans.append(span_of(self.trace, r, self.bs, self.hashed))
        prio = getattr(self.trace, "priority", None)
        self.prio.append(0 if prio is None else prio[r])
        self.num_computed_tokens.append(0)
        self.num_tokens.append(self.num_prompt_tokens[r])
        self.num_output_placeholders.append(0)
        self.inflight.append(0)
        self.stale.append(0)
        self.status.append(WAITING)
        self.looked_up.append(False)
        self.admission_order.append(0)
        remote = self.trace.remote_kv
        if remote is not None and remote[r]:
            self.remote[r] = remote[r]

    @classmethod
    def restartable(cls):
        return SpeculativeVLLM if cls is VLLM else cls

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
        if self.continues and self._repeats():
            return                        # the planned step again: the run goes on (runs.py)
        sim, pool = self.sim, self.pool
        # work (sim/work.py): the plan and _apply walk the running list; the pool counts the
        # blocks it touched since the last call
        blocks = (pool.ops - self.pool_ops) // BLOCKS_PER_UNIT
        self.pool_ops += blocks * BLOCKS_PER_UNIT        # the remainder counts next time
        sim.count_work(len(self.special) + len(self.sd_hist) + blocks)
        k = sim.passes - self.plan_passes
        if k:
            visible = sim.last_start       # async: what arrived before the last pass began
            self._bulk(k - 1)
            if self.async_:
                self.unprocessed = self.step
            else:
                self._update(self.step)
            self.step = Step()
        else:
            visible = sim.now
        self.arrived.extend(sim.waiting)
        sim.waiting.clear()
        self._release(visible if self.async_ else sim.now)
        if self.sd_linger:
            self._sd_lingering()
        if self.sp_leave:
            self._sp_leaving()
        preempted = []
        while True:
            sched, victims, admitted, info = self._plan()
            preempted += victims
            if sched or self.sd or self.sp or not (self.unprocessed or self.arrived):
                break
            # nothing to run: no pass; process the outputs now and plan again
            if self.unprocessed:
                self._update(self.unprocessed)
                self.unprocessed = None
            self._release(sim.now)
        self._after_schedule(sched)
        # the free blocks as vLLM reports them right after schedule() (the tests' plan log)
        free = pool.num_free() if self.plan_log is not None else None
        if self.unprocessed:
            self._update(self.unprocessed)
            self.unprocessed = None
        self._apply(sched, preempted, admitted)
        self.plan_passes = sim.passes
        self._set_horizon(sched, preempted, info)
        if (sched or self.sd or self.sp) and self.samples.next <= sim.passes + 1:
            self.samples.take(sim.passes + 1, pool, holders(self))
        if self.plan_log is not None:
            # the steady decoders: one token each; the steady prefillers: a chunk each
            tokens = {**self._sd_tokens(), **self._sp_tokens(), **sched}
            self.plan_log.append({"pass": sim.passes + 1, "tokens": tokens,
                                  "preempted": preempted, "admitted": admitted,
                                  "free": free})
        if preempted:
            self.victims.update(preempted)
            check_livelock(self, VLLM_VERSION)

    def horizon(self):
        return self.h

    def block_view(self):
        return self.samples.document()

    def hide_block_view(self):
        self.samples.stop()     # (a sample copies the running requests' tables: ~6% of a fleet)
        if self.pool.caching:
            self.pool.stop_counting_cached()

    def wants_arrivals(self):
        return self.wants

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
            self.waitq.add(arrived.popleft())

    # ------------------------------------------------------------ one step, exactly
    def _plan(self):
        """schedule(): -> (scheduled {request: tokens} in order, preempted, admitted {request:
        computed tokens at admission}, info for the horizon)."""
        self.chunking = len(self.running) + len(self.waitq) > 1
        threshold = self.chunk if self.chunking else 0
        if self.sp and not self.chunking:   # a steady prefiller takes a chunk no more
            self._sp_materialize_all()
        if self.lazy:
            planned = self._schedule_running_at_once(threshold)
            if planned is not None:
                sched, budget, lingering, self.tell = planned
                admitted = {}
                budget, blocked = self._schedule_waiting(sched, admitted, budget, threshold)
                return sched, [], admitted, (lingering, blocked, budget)
            self._sd_materialize_all()      # something binds: vLLM's walk, in running order
            self._sp_materialize_all()
        self.tell = None         # _apply walks every special request
        sched, preempted = {}, []
        running = list(self.running)
        budget, lingering = self._schedule_running(running, sched, preempted, self.budget,
                                                   threshold)
        if self.lazy:            # the materialized decoders are special again, in running order
            self.running = dict.fromkeys(running)
            self.special = dict.fromkeys(running)
            self.special_in_order = True
        elif preempted:          # without steady decoders every running request is special
            self.running = self.special = dict.fromkeys(running)
        admitted, blocked = {}, None
        if not preempted:    # vLLM admits nobody in a step that preempted
            budget, blocked = self._schedule_waiting(sched, admitted, budget, threshold)
        return sched, preempted, admitted, (lingering, blocked, budget)

    def _schedule_running(self, running, sched, preempted, budget, threshold):
        """The RUNNING loop: each request in list order takes what it lacks, preempting from the
        back (fcfs) or the worst (priority) until its blocks fit. -> (budget left, lingering)."""
        computed, num_tokens = self.num_computed_tokens, self.num_tokens
        placeholders = self.num_output_placeholders
        prompt, max_tokens = self.num_prompt_tokens, self.max_tokens
        pool, bs = self.pool, self.bs
        try_grow, caching = pool.try_grow, pool.caching
        n_cached = pool.n_cached if caching else None
        lingering = 0
        i = 0
        while i < len(running) and budget > 0:
            r = running[i]
            c, p = computed[r], placeholders[r]
            if p and c + 2 - p >= prompt[r] + max_tokens[r]:
                lingering += 1      # async: its last token is in flight
                i += 1
                continue
            n = num_tokens[r] + p - c
            if 0 < threshold < n:
                n = threshold
            if n > budget:
                n = budget
            ok = True
            # its blocks cover its computed tokens: only a step into a new block can fail
            while n > -c % bs and not try_grow(r, c + n):
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
                pool.cache(r, c + n, num_tokens[r])
            sched[r] = n
            budget -= n
            i += 1
        return budget, lingering

    def _final_blocks(self, r):
        """Blocks r holds when it has computed all but its last token (at most, ever)."""
        return -(-(self.num_prompt_tokens[r] + self.max_tokens[r] - 1) // self.bs)

    def _preempt(self, v):
        if self.speculating:     # v's blocks could be found again: the cache is observable now
            raise RunAgain(VLLM)
        self.need_total -= self._final_blocks(v)
        if self.swap:
            blocks = self.pool.n_blocks(v)
            self.saved[v] = self.num_computed_tokens[v]
            self.swap_out_blocks += blocks
            self.swap_extra += blocks * self.swap_ticks
        else:
            self.thrown[v] = self.num_computed_tokens[v]
        self.pool.free_request(v, False)
        self.status[v] = PREEMPTED
        self.stale[v] = self.inflight[v]
        self.num_computed_tokens[v] = 0
        self.num_output_placeholders[v] = 0
        self.waitq.prepend(v)


class SpeculativeVLLM(VLLM):
    """VLLM for a runner that can start over (Policy.restartable: api.run_steps, a fleet's
    run_fleet_steps): where only a preemption can make the prefix cache observable (a finite
    pool, no shared content), it counts blocks (counting_pool.py: no block ids, keys or free
    queue, ~40% of a 10,000-request Azure run's CPU) and raises RunAgain(VLLM) at its first
    preemption. Until then every decision is the same, and so is every number a result shows
    (the block view's cached free blocks are none with either pool: a finished request's own keys
    leave the cache; a router reads no cached prefix from either)."""

    speculate = True
