"""Public API: simulate / compare / sweep. JSON in, JSON out, no other state.

Each call also exists as a *steps* generator (simulate_steps, compare_steps, sweep_steps): it does
the same work in slices of at most `slice_s` seconds, yielding between them, and returns the same
document. The page's worker runs those, so a run can be cancelled between slices and the worker
stays responsive; `slice_s=None` runs straight through (what simulate / compare / sweep do).
What they yield is their progress (sim/progress.py: requests finished of the total, from the
core's state), which the page shows while a run takes long.
`fmt` chooses how a run becomes a document: analysis.results.result (rows, JSON) or
analysis.results.columns (typed columns for the page's worker); the documents, their caps and
layouts: analysis/results.py, sim/records.py.

The lower layers this facade puts together: a scenario is prepared (scenario/prepared.py), its
trace generated (workload/), a policy (policies/) drives the core (sim/) under a cost model
(model/), and the finished run becomes metrics and a document (analysis/).
"""

import math
import time
from typing import NamedTuple

from .analysis import slo as _slo
from .analysis.results import RESULT_CAPS, columns, result, run_metrics
from .analysis.slo_memo import RUN_BUDGET, SloMemo
from .errors import ScenarioError
from .fleet.disagg import run_disagg_steps
from .fleet.result import DisaggRun, FleetRun
from .fleet.run import fewer_collections, run_fleet_steps
from .model.cost import Cost
from .policies import CUSTOM, SPEEDUP, base_schedulers, policy_class, scheduler_names
from .policies.base import RunAgain
from .scenario import fields
from .scenario.normalize import holds
from .scenario.prepared import Scenario, prepare
from .scenario.presets import presets
from .sim.core import Sim
from .sim.progress import Progress, counted, within
from .sim.work import WORK_CAP, Probes, WorkCapExceeded, too_much
from .workload.generator import Trace, generate

MAX_SWEEP_POINTS = 200


class Run:
    """A finished simulation: the core's state and the policy that drove it."""

    __slots__ = ("sim", "policy", "scenario")

    def __init__(self, sim: Sim, policy, scenario: Scenario):
        self.sim, self.policy, self.scenario = sim, policy, scenario


def drain(steps):
    """Run a steps generator to its end and return its value."""
    while True:
        try:
            next(steps)
        except StopIteration as e:
            return e.value


def run_steps(scenario, trace: Trace | None = None, slice_s: float | None = None,
              work_cap: int | None = WORK_CAP):
    """Scenario (prepared, or a dict to prepare) + optional pre-generated trace -> finished Run,
    in slices; more work than work_cap (None: no cap) is a ScenarioError saying what to lower
    (sim/work.py)."""
    scenario = prepare(scenario)
    if work_cap is not None and (type(work_cap) is not int or work_cap < 1):
        raise ScenarioError("work_cap", work_cap, "an integer >= 1, or None (no cap)")
    if trace is None:
        trace = generate(scenario["workload"])
    if scenario["cluster"]["replicas"] > 1 or scenario["cluster"]["prefill"]["replicas"]:
        return (yield from fleet_steps(scenario, trace, slice_s, work_cap))
    cls = policy_class(scenario)
    cls.check(scenario, trace)

    def start(cls):
        """A run from nothing: its Sim and policy, the work cap at the first probe (probes
        first, to refuse a hopeless run seconds in rather than at the cap)."""
        sim = Sim(trace, scenario["server"]["slots"], Cost.from_scenario(scenario),
                  seg_cap=RESULT_CAPS["segments"], log_cap=RESULT_CAPS["passes_log"])
        probes = Probes(work_cap)
        sim.work_cap, sim.work_cap_final = probes.limit(), work_cap
        return sim, cls(sim, scenario, trace), probes

    sim, policy, probes = start(cls.restartable())
    while True:
        until = None if slice_s is None else time.perf_counter() + slice_s
        try:
            if sim.run(policy, until):
                yield Progress(sim.n_done, sim.n)       # every request: the run ends at its total
                return Run(sim, policy, scenario)
        except RunAgain as again:       # policies/base.py: from nothing, probes and all
            sim, policy, probes = start(again.policy_class)
            continue
        except WorkCapExceeded as e:
            try:
                probes.check(e.work, e.done, e.n)
            except WorkCapExceeded:
                raise too_much(scenario, e.work, e.done, e.n, work_cap) from None
            sim.work_cap = probes.limit()   # the estimate fits (or there is none yet): go on
            continue
        except OverflowError:
            raise ScenarioError("workload", "<trace>", "a run whose simulated time fits in 2^63 "
                                "ticks", "the simulated time overflows: use fewer or shorter "
                                "requests or a cheaper cost model") from None
        yield Progress(sim.n_done, sim.n)


def fleet_steps(scenario, trace, slice_s=None, work_cap=WORK_CAP):
    """A fleet (fleet/run.py; disaggregated: fleet/disagg.py) -> its finished FleetRun or
    DisaggRun, in slices; the work cap bounds the replicas' work together."""
    disagg = scenario["cluster"]["prefill"]["replicas"] > 0
    steps = run_disagg_steps if disagg else run_fleet_steps
    try:
        with fewer_collections():
            fleet = yield from steps(scenario, trace, slice_s, work_cap, RESULT_CAPS["segments"],
                                     RESULT_CAPS["passes_log"])
    except WorkCapExceeded as e:
        raise too_much(scenario, e.work, e.done, e.n, work_cap) from None
    except OverflowError:
        raise ScenarioError("workload", "<trace>", "a run whose simulated time fits in 2^63 "
                            "ticks", "the simulated time overflows: use fewer or shorter "
                            "requests or a cheaper cost model") from None
    return DisaggRun(fleet) if disagg else FleetRun(fleet)


def run_sim(scenario, trace: Trace | None = None, work_cap: int | None = WORK_CAP) -> Run:
    """Scenario (+ optional pre-generated trace) -> finished Run (no JSON building)."""
    return drain(run_steps(scenario, trace, None, work_cap))


# What this process answered, to score again under another SLO (analysis/slo_memo.py): the
# sweep points, and the documents of simulate and compare (the main comparison, the fleet's run
# and every router's), which the page asks again at each change
POINTS = SloMemo()
RUNS = SloMemo(RUN_BUDGET)
FORMATS = {result: "rows", columns: "columns"}     # the documents RUNS remembers (fmt: their kind)


def _runs_key(s, schedulers, work_cap, fmt, call):
    """RUNS's key of a call (None: a format it does not remember)."""
    kind = FORMATS.get(fmt)
    return RUNS.key(s, schedulers, work_cap, kind and call + " " + kind,
                    sorted(RESULT_CAPS.items()))


def _remembered(key, s, steps, echoes):
    """A call's document through RUNS: run before under another SLO, scored again; refused
    before, the same refusal (no SLO changes either); else steps(keep) run (keep: the list its
    formats add their SLO columns to, None when not remembered) and the answer remembered."""
    doc = RUNS.get(key, s)
    if doc is not None:
        return doc
    refused = RUNS.refused(key)
    if refused is not None:
        raise refused
    keep = None if key is None else []
    try:
        doc = yield from steps(keep)
    except ScenarioError as e:
        RUNS.refuse(key, e)
        raise
    if key is not None:
        RUNS.put(key, doc, keep, echoes, s)
    return doc


def simulate_steps(scenario=None, slice_s=None, fmt=None, work_cap=WORK_CAP):
    s = prepare(scenario)
    fmt = fmt or result

    def steps(keep):
        run = yield from run_steps(s, None, slice_s, work_cap)
        return fmt(run) if keep is None else fmt(run, keep=keep)
    key = _runs_key(s, (s["scheduler"],), work_cap, fmt, "simulate")
    return (yield from _remembered(key, s, steps, [("scenario",)]))


def simulate(scenario: dict | None = None, work_cap: int | None = WORK_CAP) -> dict:
    """Scenario dict (untrusted) -> result dict (see result())."""
    return drain(simulate_steps(scenario, work_cap=work_cap))


def _check_schedulers(schedulers):
    """The scheduler names asked for (None: the base ones), checked."""
    if schedulers is None:
        return base_schedulers()
    names = scheduler_names() + [CUSTOM]
    if isinstance(schedulers, str) or not isinstance(schedulers, (list, tuple)) or not schedulers:
        raise ScenarioError("schedulers", schedulers, "a non-empty list of scheduler names")
    for name in schedulers:
        if not isinstance(name, str) or name not in names:
            raise ScenarioError("scheduler", name, "one of " + ", ".join(names))
    return tuple(schedulers)


def compare_steps(scenario=None, schedulers=None, slice_s=None, fmt=None,
                  work_cap=WORK_CAP):
    s = prepare(scenario)
    schedulers = _check_schedulers(schedulers)
    fmt = fmt or result
    key = _runs_key(s, schedulers, work_cap, fmt, "compare")
    return (yield from _remembered(
        key, s, lambda keep: _compare(s, schedulers, slice_s, fmt, work_cap, keep),
        [(name, "scenario") for name in schedulers]))


def compare(scenario: dict | None = None, schedulers: list[str] | None = None,
            work_cap: int | None = WORK_CAP) -> dict:
    """The same trace through several schedulers (None: the base ones, policies.base_schedulers);
    speedup = static / continuous (policies.SPEEDUP), when both ran."""
    return drain(compare_steps(scenario, schedulers, work_cap=work_cap))


def _compare(s, schedulers, slice_s, fmt, work_cap=WORK_CAP, keep=None):
    """compare on an already normalised scenario and checked scheduler names (steps); keep: a
    list to add each lane's SLO columns to, as (path, columns) (fmt(run, keep=...))."""
    trace = generate(s["workload"])
    out, ticks = {}, {}
    n = len(trace[0])
    for i, name in enumerate(schedulers):   # lanes one after the other: lanes x requests in all
        sn = s.with_scheduler(name)
        run = yield from within(run_steps(sn, trace, slice_s, work_cap), i * n,
                                len(schedulers) * n)
        if keep is None:
            out[name] = fmt(run)
        else:
            lane = []
            out[name] = fmt(run, keep=lane)
            keep.extend(((name,) + path, cols) for path, cols in lane)
        ticks[name] = (run.sim.passes, max(run.sim.done_tick))   # passes, makespan in ticks
    slow, fast = SPEEDUP
    if slow in out and fast in out:
        (pa, ta), (pb, tb) = ticks[slow], ticks[fast]
        out["speedup"] = {"passes": pa / pb, "time": ta / tb}
    return out


def set_field(scenario, dotted, value):
    """scenario["a"]["b"] = value for dotted "a.b", creating the inner objects on the way."""
    d = scenario
    parts = dotted.split(".")
    for p in parts[:-1]:
        if not isinstance(d.get(p), dict):
            d[p] = {}
        d = d[p]
    d[parts[-1]] = value


SWEEP_METRICS = ("passes", "makespan", "utilization", "throughput_tok_s", "ttft", "tpot", "itl",
                 "e2e", "goodput_rps", "slo_attainment", "meets_slo", "slo", "preemptions",
                 "kv_peak_tokens", "prefix_hit_rate", "offered_rps", "served_rps", "backlog",
                 "peak_running", "peak_concurrency")


class SweepPlan(NamedTuple):
    """A sweep's points before any is run (sweep_plan): the checked request and the scenario
    every point shares; each point is that scenario with the swept field set to one value."""
    param: str                  # as asked (a URL name or a dotted path)
    path: str                   # the swept field's dotted path
    values: list                # one point per value, in this order
    schedulers: tuple           # checked names
    base: dict                  # the normalised scenario, in the variant the field needs


def sweep_plan(scenario=None, param="skew", values=(0.0, 0.3, 0.6),
               schedulers=None) -> SweepPlan:
    """The first part of a sweep: the request checked and the shared scenario built. Each point's
    own scenario is made where the point runs (sweep_point_steps), from `base`: it is small to
    send to another process, and a trace of a million items is not copied once per point."""
    schedulers = _check_schedulers(schedulers)
    path = fields.SWEEPS.get(param, param) if isinstance(param, str) else None
    if path not in fields.SWEEPS.values():
        raise ScenarioError("param", param, "one of " + ", ".join(fields.SWEEPS))
    if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= MAX_SWEEP_POINTS:
        raise ScenarioError("values", values, "a list of 1 to %d values" % MAX_SWEEP_POINTS)
    base = dict(prepare(scenario).doc)
    # sweeping a field that exists only in one variant (a Poisson rate) implies that variant;
    # a scenario already in one of its variants keeps it, with all its other fields
    for cond, allowed in fields.BY_PATH[path].when.items():
        if not holds({cond: allowed}, base):
            parent, _, key = cond.rpartition(".")
            set_field(base, parent, {key: allowed[0]})
    return SweepPlan(param, path, list(values), schedulers, base)


def sweep_point_steps(plan: SweepPlan, value, slice_s=None, work_cap=WORK_CAP):
    """The second part: one point of the sweep (steps) -> {"value", "<scheduler>": {metrics
    subset}, "speedup" (when static and continuous ran)}, and "rank" for a value that is not a
    number (null or a word: what it resolves to; sweep_result drops it). A point depends on
    nothing but the plan and its value, so the points may run anywhere in any order."""
    parts = plan.path.split(".")
    sc = d = dict(plan.base)  # copy only the dicts on the path; the trace items are shared, read-only
    for p in parts[:-1]:
        d[p] = dict(d[p])
        d = d[p]
    d[parts[-1]] = value
    norm = prepare(sc)
    key = POINTS.key(norm, plan.schedulers, work_cap)
    pt = POINTS.get(key, norm)
    if pt is not None:                      # run before under another SLO: scored again
        pt["value"] = value                 # as asked (8, not the 8.0 of the run remembered)
        return pt
    kept = {}

    def measured(run):
        kept[run.scenario["scheduler"]] = keep = {}
        return run_metrics(run, keep=keep)

    res = yield from _compare(norm, plan.schedulers, slice_s, measured, work_cap)
    pt = {"value": value}
    if not isinstance(value, (int, float)):        # null or a word: rank by what it resolves to
        effective = norm
        for p in parts:
            effective = effective[p]
        pt["rank"] = math.inf if effective is None else effective
    for name in plan.schedulers:
        m = res[name]
        pt[name] = {k: m[k] for k in SWEEP_METRICS}
    if "speedup" in res:
        pt["speedup"] = res["speedup"]
    POINTS.put(key, pt, [((name,), cols) for name, cols in kept.items()], (), norm)
    return pt


def sweep_point(job, value):
    """sweep_point_steps run straight through; job = (plan, work_cap). The function an executor
    maps over the plan's values (sweep(executor=...), app/parallel.py)."""
    plan, work_cap = job
    return drain(sweep_point_steps(plan, value, None, work_cap))


CAP = "server.slots"     # max_num_seqs: the most requests running at once (peak_running)


def sweep_result(plan: SweepPlan, points: list) -> dict:
    """The third part: the points, in the plan's order, as the sweep's document, with the SLO
    sizing (analysis/slo.py: best = largest value meeting it)."""
    doc = {"param": plan.param, "path": plan.path, "values": list(plan.values), "points": points}
    # a sweep of another field than max_num_seqs: the batch's cap, as set (it may bind instead);
    # not for a fleet, whose peak_running adds its replicas' peaks (and whose pools may set
    # their own slots)
    cluster = plan.base["cluster"]
    fleet = cluster["replicas"] > 1 or cluster["prefill"]["replicas"]
    cap = None if plan.path == CAP or fleet else {"path": CAP, "label": _words(fields.BY_PATH[CAP]),
                                                  "value": plan.base["server"]["slots"]}
    _slo.annotate(doc, plan.schedulers, plan.base["slo"], _words(fields.BY_PATH[plan.path]), cap)
    for pt in points:
        pt.pop("rank", None)
    return doc


def sweep_steps(scenario=None, param="skew", values=(0.0, 0.3, 0.6),
                schedulers=None, slice_s=None, work_cap=WORK_CAP):
    plan = sweep_plan(scenario, param, values, schedulers)
    points, m = [], len(plan.values)
    for i, v in enumerate(plan.values):
        steps = sweep_point_steps(plan, v, slice_s, work_cap)
        # one point says its requests; more say points (a point's size may be its value)
        points.append((yield from (steps if m == 1 else counted(steps, i, m, "points"))))
        if m > 1:
            yield Progress(i + 1, m, "points")
    return sweep_result(plan, points)


def _words(field):
    """A swept field's name in a sentence: vLLM's name when the label gives it ("Slots
    (max_num_seqs)"), else the field's own (max_num_batched_tokens)."""
    label = field.label
    return label[label.index("(") + 1:label.rindex(")")] if "(" in label else field.leaf


def sweep(scenario: dict | None = None, param: str = "skew", values=(0.0, 0.3, 0.6),
          schedulers: list[str] | None = None, work_cap: int | None = WORK_CAP,
          executor=None) -> dict:
    """Compare the schedulers at each value of one parameter.

    Returns {"param", "path", "values", "points": [{"value", "<scheduler>": {metrics subset},
    "speedup": {...} (only when both static and continuous ran)}], "slo", "best", "lowest"}.
    param is a sweepable field's URL name (fields.SWEEPS) or its dotted path; schedulers may be any
    non-empty subset, e.g. ["continuous"].

    executor: None runs the points here, one after another. Otherwise a callable
    executor(fn, job, items) that returns [fn(job, item) for item in items], in that order, or
    raises what the first failing call in that order raises (app/parallel.py: local processes,
    a Ray cluster); the result is the same either way, to the byte.
    """
    if executor is None:
        return drain(sweep_steps(scenario, param, values, schedulers, None, work_cap))
    plan = sweep_plan(scenario, param, values, schedulers)
    return sweep_result(plan, list(executor(sweep_point, (plan, work_cap), plan.values)))


def sizing(scenario: dict | None = None, param: str = "slots", points=(),
           schedulers: list[str] | None = None) -> dict:
    """The verdict of a sweep whose points were run one by one elsewhere (the page runs a sweep
    point by point, to show progress and to cancel it): the points as sweep() gives them
    ({"value", "<scheduler>": its metrics}), back as the sweep's document with "best", "lowest"
    and "recommendation", by the one rule of analysis/slo.py."""
    if not isinstance(points, (list, tuple)) or not points:
        raise ScenarioError("points", points, "a list of sweep points")
    values = [pt.get("value") if isinstance(pt, dict) else None for pt in points]
    plan = sweep_plan(scenario, param, values, schedulers)
    own = []
    for i, pt in enumerate(points):
        for name in plan.schedulers:
            m = pt.get(name) if isinstance(pt, dict) else None
            if not isinstance(m, dict) or any(k not in m for k in SWEEP_METRICS):
                raise ScenarioError("points[%d].%s" % (i, name), "<%s>" % type(m).__name__,
                                    "the metrics of a sweep point (%s)" % ", ".join(SWEEP_METRICS))
        own.append({k: v for k, v in pt.items() if k != "rank"})
    return sweep_result(plan, own)


__all__ = ["simulate", "compare", "sweep", "simulate_steps", "compare_steps", "sweep_steps",
           "sweep_plan", "sweep_point_steps", "sweep_point", "sweep_result", "SweepPlan", "sizing",
           "presets", "run_sim", "run_steps", "drain", "result", "Run", "RESULT_CAPS"]
