"""A fleet: N replicas of the server behind a router, on one clock (SPEC §8).

Each replica is a whole single server (sim/core.py Sim and its own policy: scheduler, KV pool,
prefix cache) whose requests are added as the router sends them (`Sim.add_request`, the policy's
`grow`). The fleet routes the requests in arrival order (ties by id). Before it routes a request
arriving at t, every replica is advanced, event-driven as the single server runs, through each
decision it takes before t; the router then reads each replica as of its last scheduler step
(`Replica.observe`, older by `cluster.staleness_ms` when that is set) and picks one.

Exactness. A single server cuts a run of identical passes at the first pass starting at or after
its next arrival, when that arrival could change the batch (no one waiting, the policy wants
arrivals). A replica cannot know its next arrival before the router decides, so a run whose last
pass starts at or after t is *held*, planned but not executed, until the router has decided: a
request sent to that replica cuts it exactly where the single server would have, and a request
sent elsewhere leaves it whole. So one replica is the single server number for number, and under
round robin every replica is the single-server run of its own sub-trace (both are tests).
"""

import gc
import time
from collections import deque
from contextlib import contextmanager

from ..policies import policy_class
from ..policies.base import RunAgain
from ..sim.core import Sim, _first_pass_at as _first_pass_roofline
from ..sim.exact import SUB, floor_sum
from ..sim.progress import Progress
from ..sim.work import CHECK_WORK, EVENT_WORK, Probes
from ..workload.blocks import chains, stream_chains
from ..workload.generator import Trace
from .routers import make_router

CHECK_EVERY = 64           # requests routed between checks of the work cap and the deadline
# work (sim/work.py) of routing one request, ~0.55 us a unit natively: a pick and the loop that
# wakes the replicas (round robin: 1.5 us, +2.5 us over 64 replicas), per replica 1 unit when the
# router scores them (llm_d: 15 us over 8 replicas, 54 over 64) and 2 when their prefix caches
# are asked (the Mooncake trace: +1.2 us a replica); and a replica's taking it (SEND_WORK: its
# columns, the core's and the policy's per-request state). Counted, a fleet of many replicas
# meets its cap in about the seconds the cap says, as one server does.
ROUTE_WORK, SCORED_WORK, ASKED_WORK, SEND_WORK = 3, 1, 2, 10
IDLE = float("inf")        # Replica.wake of a replica with nothing to do until it is sent more
FLEET_GEN0 = 50_000        # allocations between Python's young-generation collections in a fleet


class Replica:
    """One server of the fleet: its core, its policy, its run held for the router, and the
    snapshots of its load the router may read (staleness)."""

    def __init__(self, index, scenario, fleet_trace, chain, cost, seg_cap, log_cap,
                 remote=False, policy=None):
        """remote: a disaggregated fleet's decode replica (its requests bring their KV);
        policy: the policy class (a reader's code is compiled once for the fleet)."""
        self.index = index
        t = fleet_trace
        own = Trace([], [], [], None if t.prefix_id is None else [],
                    None if t.prefix_len is None else [], None if t.priority is None else [],
                    None if t.hash_ids is None else [], t.hash_block)
        own.whole = t
        if chain is not None:
            own.chain = []
        if remote:
            own.remote_kv = []
        self.trace = own
        # the optional columns a sent request brings: (the replica's list, the fleet's)
        self.columns = [(getattr(own, name), getattr(t, name))
                        for name in ("prefix_id", "prefix_len", "priority", "hash_ids")
                        if getattr(own, name) is not None]
        self.ids = []                 # fleet ids of its requests, in the order sent (local id)
        self.sim = sim = Sim(own, scenario["server"]["slots"], cost, seg_cap, log_cap)
        sim.open = True
        self.policy = (policy or policy_class(scenario))(sim, scenario, own)
        # A router reads the replica between its events (its prefix cache, its load) as its last
        # plan left it: every event plans here (vllm's `continues` goes on through an event whose
        # plan would repeat, leaving the cache as an older plan left it: other hits at routing)
        if getattr(self.policy, "continues", False):
            self.policy.continues = False
        # policy.cached_prefix (None: the policy has no prefix cache), looked up once: the fleet
        # asks every replica about every request
        self.cached_prefix = getattr(self.policy, "cached_prefix", None)
        self.plan = None              # a run held for the router (_held)
        # advance(t) does nothing for t <= wake (the loop skips the call): set where advance
        # stops, and reset by send (a request may cut the held run or wake an idle replica)
        self.wake = -1
        # requests a router picked this replica for that are not sent yet: a P/D request in its
        # prefill or on the link (fleet/disagg.py); the router counts them from its choice
        self.coming = 0
        self.last_end = (0, 0)        # (end, requests done there) of the last run executed
        # the fleet's check of its work cap, called every CHECK_WORK units of this replica's work
        # (watch): between two routed requests, and in its tail, a replica may do any amount
        self.on_check, self.check_at = None, float("inf")
        self.snapshots = deque()      # (time, waiting, running, kv tokens) at each decision
        self.kv_pool = scenario.kv_pool

    # ------------------------------------------------------------ running
    def advance(self, t):
        """Take every decision before t (t None: run to the end). A run that an arrival at t
        could cut is held (self.plan) until the router has decided."""
        sim, policy = self.sim, self.policy
        while True:
            if self.plan is not None:
                k, cost, K, a, b, _, last = self.plan
                if t is not None and last >= t:
                    self.wake = last
                    return                      # pass k starts at or after t: hold it
                self.plan = None
                done = sim.n_done
                sim._execute(policy, k, cost, K, a, b)
                sim._end_phases()
                self.last_end = (sim.now, sim.n_done - done)
            if t is not None and sim.now >= t:
                self.wake = sim.now
                return
            if sim.n_done == sim.n and not sim.waiting:
                self.wake = IDLE
                return                          # idle until the router sends more
            sim.work += EVENT_WORK
            if sim.work >= self.check_at:
                self.check_at = sim.work + CHECK_WORK
                self.on_check()
            sim._release_arrivals()
            before = sim.now
            if not sim._decide(policy):
                if sim.now == before:           # idle (open): nothing to do before t
                    return
                continue
            cuttable = not sim.waiting and policy.wants_arrivals()
            self.plan = _held(sim, _plan_without_arrivals(sim, policy), cuttable)
            self._snapshot()

    def watch(self, check):
        """From now on check() (the fleet's work against its cap: WorkCapExceeded) is called
        every CHECK_WORK units of this replica's work, as a single server's loop checks its own."""
        self.on_check, self.check_at = check, self.sim.work + CHECK_WORK

    def send(self, fleet_id, arrive, prompt, out, trace, chain, remote=0):
        """The router sent this request (remote: tokens whose KV it brings, a decode replica's):
        it joins the replica, and cuts a held run where the single server's arrival cut would
        (sim/core.py Sim._run_length)."""
        sim, own = self.sim, self.trace
        if own.remote_kv is not None:
            own.remote_kv.append(remote)
        for mine, whole in self.columns:
            mine.append(whole[fleet_id])
        if chain is not None:
            own.chain.append(chain[fleet_id])
        self.ids.append(fleet_id)
        self.wake = -1
        sim.work += SEND_WORK
        sim.add_request(arrive, prompt, out)
        self.policy.grow()
        plan = self.plan
        if plan is not None and plan[5] and sim.next_arrival == sim.n - 1:
            k, cost, K, a, b, _, _ = plan
            ka = _first_pass_at(arrive - sim.now, cost, K, a, b, k)
            if ka < k:
                self.plan = _held(sim, (ka, cost, K, a, b), False)

    def finish(self):
        """No more requests will come: run to the end."""
        self.sim.open = False
        self.advance(None)

    # ------------------------------------------------------------ what the router reads
    def _snapshot(self):
        """The load a scheduler step publishes (vLLM: after each step): its time, requests
        waiting (sent, not done, holding no slot), running (holding one) and KV tokens."""
        sim = self.sim
        running = sim.n_in_slot
        self.snapshots.append((sim.now, sim.n - sim.n_done - running, running, sim.kv))

    def load(self, t, staleness):
        """(time, waiting, running, kv tokens) as the router sees them at t: the last snapshot at
        or before t - staleness ((-1, 0, 0, 0): none yet)."""
        seen, snaps = t - staleness, self.snapshots
        while len(snaps) > 1 and snaps[1][0] <= seen:
            snaps.popleft()
        if not snaps or snaps[0][0] > seen:
            return (-1, 0, 0, 0)
        return snaps[0]

    def outstanding(self, t):
        """Its requests routed and not done at t (the router's own count: it sees each response
        end; a P/D request counts from the router's choice, `coming`). Every request done so far
        ended by t, but for those ending a run that started before t and ends after it (a run no
        arrival could cut)."""
        sim = self.sim
        end, late = self.last_end
        return sim.n - sim.n_done + (late if end > t else 0) + self.coming


def _held(sim, run, cuttable):
    """A run held for the router: (k, cost, K, a, b, cuttable, the tick its last pass starts),
    that start computed once (the router asks at every request while the run is held)."""
    k, cost, K, a, b = run
    return (k, cost, K, a, b, cuttable, sim.now + _elapsed(k - 1, cost, K, a, b))


def _elapsed(j, cost, K, a, b):
    """Ticks from a run's start to the end of its j-th pass (sim/core.py's cost forms)."""
    if K is None:
        return j * cost
    return j * K + floor_sum(j, SUB, b, a + SUB - 1)


def _first_pass_at(dt, cost, K, a, b, k):
    """The run's first pass boundary at or after dt ticks from its start (1..k, k + 1: none)."""
    if K is None:
        return -(-dt // cost)
    return _first_pass_roofline(dt, K, a, b, k)


def _plan_without_arrivals(sim, policy):
    """Sim._run_length with no arrival cut: the replica's next arrival is the router's to give."""
    n = sim.n
    sim.n = sim.next_arrival          # hide the (not yet released) requests from the cut
    try:
        return sim._run_length(policy)
    finally:
        sim.n = n


@contextmanager
def fewer_collections():
    """Python's cyclic collector runs less often while a fleet runs: its replicas allocate
    containers by the million (block tables, slices of the free queue), none in a cycle, and
    every collection walks the young ones item by item. 8 replicas x 12,031 Mooncake requests:
    6.8 -> 6.4 s of CPU (gen-0 collections 519 -> 41). The old thresholds come back after."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], FLEET_GEN0), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def hide_block_views(replicas):
    """The result shows a replica's block view for a fleet of one only (result.py _Counters):
    the replicas of a larger one need not sample theirs."""
    if len(replicas) > 1:
        for rep in replicas:
            rep.policy.hide_block_view()


def run_fleet_steps(scenario, trace, slice_s=None, work_cap=None, seg_cap=None, log_cap=None):
    """Scenario (prepared) + its trace -> Fleet (finished), in slices of at most slice_s seconds
    (a generator, as api.run_steps). A replica's policy that asks to start over (RunAgain,
    policies/base.py: the vllm policy counting blocks until a preemption) starts the whole
    fleet over, as api.run_steps does a single server."""
    cls = policy_class(scenario)
    cls.check(scenario, trace)
    cls = cls.restartable()
    while True:
        try:
            return (yield from _run_fleet(cls, scenario, trace, slice_s, work_cap, seg_cap,
                                          log_cap))
        except RunAgain as again:
            cls = again.policy_class


def _run_fleet(cls, scenario, trace, slice_s, work_cap, seg_cap, log_cap):
    from ..model.cost import Cost   # cycle-free: model is below; kept local for reading
    n_rep = scenario["cluster"]["replicas"]
    chain = chains(trace)
    fleet = Fleet(scenario, trace, chain)
    fleet.replicas = [Replica(i, scenario, trace, chain, Cost.from_scenario(scenario),
                              seg_cap, log_cap, policy=cls) for i in range(n_rep)]
    hide_block_views(fleet.replicas)
    fleet.router = make_router(scenario, fleet)
    arrive, prompt, out = trace
    n = len(arrive)
    slices = Slices(slice_s)
    probes = Probes(work_cap)
    watch_all(fleet.replicas, fleet, probes, slices)
    for g in range(n):
        t = arrive[g]
        for rep in fleet.replicas:
            if t > rep.wake:
                yield from sliced(fleet, slices, rep.advance, t)
        k = fleet.route(g, t)
        fleet.replicas[k].send(g, t, prompt[g], out[g], trace, chain)
        fleet.router.sent(g, t, k)
        if g % CHECK_EVERY == CHECK_EVERY - 1:
            fleet.check_work(probes)
            if slices.due():
                yield fleet.progress()
                slices.next()
    for rep in fleet.replicas:
        yield from sliced(fleet, slices, rep.finish)
        fleet.check_work(probes)
    yield fleet.progress()
    return fleet


class SliceDue(Exception):
    """A replica's check (Replica.watch) found the slice's time up: the fleet's generator
    yields, then calls the same advance again, which goes on where it stopped (the check comes
    between two of its events)."""


class Slices:
    """The time slices of a run (slice_s: None, one slice)."""

    def __init__(self, slice_s):
        self.slice_s = slice_s
        self.until = None if slice_s is None else time.perf_counter() + slice_s

    def due(self):
        return self.until is not None and time.perf_counter() > self.until

    def next(self):
        self.until = time.perf_counter() + self.slice_s


def watch_all(replicas, fleet, probes, slices):
    """Every CHECK_WORK units of its work each replica has the fleet (a Fleet, or a Disagg)
    check its cap, and end the time slice when it is due (Replica.watch)."""
    def check():
        fleet.check_work(probes)
        if slices.due():
            raise SliceDue
    for rep in replicas:
        rep.watch(check)


def sliced(fleet, slices, step, *args):
    """step(*args), a replica's advance or finish, to its end: each time a replica's check finds
    the slice over, the fleet's progress is yielded and the step called again."""
    while True:
        try:
            return step(*args)
        except SliceDue:
            yield fleet.progress()
            slices.next()


class SharedBlocks:
    """fleet.blocks[g]: request g's shared-content block nodes (workload/blocks.py
    stream_chains), computed as a router first asks (most routers never do), in arrival order,
    each request's counted as the fleet's work: a unit a node, for computing it (~0.35 us
    natively) and the router's walks of it. A trace of long shared prompts has millions of
    nodes: computed up front, they were seconds no cap saw."""

    def __init__(self, fleet, trace):
        self.fleet, self.made, self.rest = fleet, [], stream_chains(trace)

    def __getitem__(self, g):
        made = self.made
        while len(made) <= g:
            nodes = next(self.rest)
            made.append(nodes)
            self.fleet.work += len(nodes)
        return made[g]


class Fleet:
    """The replicas, the router and what the router decided."""

    def __init__(self, scenario, trace, chain):
        self.scenario, self.trace, self.chain = scenario, trace, chain
        self.staleness = round(scenario["cluster"]["staleness_ms"] * 1_000_000)   # ms -> ticks
        self.replicas = []
        self.router = None
        self.work = 0                  # the routing's own work (ROUTE_WORK); the replicas count theirs
        n = len(trace[0])
        self.replica_of = [0] * n
        self.local_of = [0] * n
        self.reason = [None] * n       # the router's reason for each decision
        self.scores = []               # (fleet id, [score per replica]) for the first requests
        self.forgone = 0               # prefix tokens another replica held beyond the chosen one's
        self.hit_at_route = 0          # prefix tokens the chosen replica held at routing
        self.reasons = {}
        self.blocks = SharedBlocks(self, trace)   # what prefix-aware routers match
        self._precise = None
        self._asks = None              # per replica its cached_prefix ([]: no prefix caches)
        self._probe = None             # the replicas' prefix_probe (one scenario: any one's)
        # 1 + the largest trie node of the requests routed so far: a replica caches only blocks
        # of those (the probe's bound), or None without hash ids
        self._routed = None if chain is None else 0

    def route(self, g, t):
        held = self.cached_all(g)
        k, reason, scores = self.router.pick(g, t)
        n = len(self.replicas)
        self.work += ROUTE_WORK + n // 8 + n * ((SCORED_WORK if scores is not None else 0)
                                                + (ASKED_WORK if held is not None else 0))
        if not 0 <= k < len(self.replicas):
            raise AssertionError("router %s picked replica %r" % (self.router.name, k))
        if self._routed is not None and self.chain[g]:   # its nodes increase: the last is largest
            self._routed = max(self._routed, self.chain[g][-1] + 1)
        self.replica_of[g] = k
        self.local_of[g] = self.replicas[k].sim.n
        self.reason[g] = reason
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if scores is not None and len(self.scores) < MAX_SCORES:
            self.scores.append((g, scores))
        if held is not None:
            best = max(held)
            self.forgone += best - held[k]
            self.hit_at_route += held[k]
        self.router.chosen(g, t, k)
        return k

    def cached_all(self, g):
        """Per replica the prompt tokens of request g its prefix cache holds (memoised for the
        request being routed), or None when no replica has a prefix cache."""
        if self._precise is not None and self._precise[0] == g:
            return self._precise[1]
        asks = self._asks
        if asks is None:    # the replicas' pools do not change: who has a cache, found once
            caching = [r for r in self.replicas
                       if getattr(getattr(r.policy, "pool", None), "caching", False)]
            asks = self._asks = ([r.cached_prefix or _none_cached for r in self.replicas]
                                 if caching else [])
            if caching:
                self._probe = caching[0].policy.prefix_probe
        if not asks:
            held = None
        else:   # the request's span and key tags once, then each replica's search
            probe = self._probe(self.trace, g, self.chain, self._routed)
            held = [0] * len(asks) if probe is None else [ask(probe) for ask in asks]
        self._precise = (g, held)
        return held

    def progress(self):
        """Requests every replica has finished, of the fleet's trace."""
        return Progress(sum(r.sim.n_done for r in self.replicas), len(self.trace[0]))

    def work_done(self):
        """(work so far: the routing's and every replica's, requests the replicas finished)."""
        return (self.work + sum(r.sim.work for r in self.replicas),
                sum(r.sim.n_done for r in self.replicas))

    def check_work(self, probes):
        """WorkCapExceeded when the fleet's work is past its cap, or estimated far above it at a
        probe (sim/work.py Probes: a hopeless fleet stops seconds in, as one server does)."""
        probes.check(*self.work_done(), len(self.trace[0]))


def _none_cached(probe):
    """cached_prefix of a policy without a prefix cache."""
    return 0


MAX_SCORES = 2000          # requests whose router scores the result keeps (the page's hover)

__all__ = ["run_fleet_steps", "Fleet", "Replica"]
