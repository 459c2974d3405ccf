"""Public API: simulate / compare / sweep. JSON in, JSON out, no other state.

Each call also exists as a *steps* generator (simulate_steps, compare_steps, sweep_steps): it does
the same work in slices of at most `slice_s` seconds, yielding between them, and returns the same
document. The page's worker runs those, so a run can be cancelled between slices and the worker
stays responsive; `slice_s=None` runs straight through (what simulate / compare / sweep do).
`fmt` chooses how a run becomes a document: `result` (rows, JSON) or columns.result (typed columns
for the page's worker).

Result caps (so a huge run cannot produce a huge document): `requests` lists at most
RESULT_CAPS["requests"] records, `segments` at most RESULT_CAPS["segments"] and `passes_log` at most
RESULT_CAPS["passes_log"] runs; metrics always cover the whole run. result["truncated"] says which
lists were cut ({"requests": bool, "segments": bool, "passes_log": bool}). Record layouts:
records.py.
"""

import math
import time

from . import fields
from . import metrics as _metrics
from . import slo as _slo
from .core import Sim
from .cost import TICKS, Cost, cost_unit
from .errors import ScenarioError
from .policies import get as _get_policy, scheduler_names
from .presets import presets
from .scenario import normalize, public
from .work import PROBES, WORK_CAP, WorkCapExceeded, estimate, too_much
from .workload import generate

RESULT_CAPS = {"requests": 100_000, "segments": 250_000, "passes_log": 250_000}
MAX_SWEEP_POINTS = 200


class Run:
    """A finished simulation: the core's state and the policy that drove it."""

    __slots__ = ("sim", "policy", "scenario")

    def __init__(self, sim, policy, scenario):
        self.sim, self.policy, self.scenario = sim, policy, scenario


def drain(steps):
    """Run a steps generator to its end and return its value."""
    while True:
        try:
            next(steps)
        except StopIteration as e:
            return e.value


def run_steps(scenario, trace=None, slice_s=None, work_cap=WORK_CAP):
    """Normalised scenario (+ optional pre-generated trace) -> finished Run, in slices; more work
    than work_cap (None: no cap) is a ScenarioError saying what to lower (work.py)."""
    if trace is None:
        trace = generate(scenario["workload"])
    cls = _get_policy(scenario["scheduler"])
    cls.check(scenario, trace)
    sim = Sim(trace, scenario["server"]["slots"], Cost.from_scenario(scenario),
              seg_cap=RESULT_CAPS["segments"], log_cap=RESULT_CAPS["passes_log"])
    policy = cls(sim, scenario, trace)
    probes = list(PROBES) if work_cap is not None else []
    # probes first, to refuse a hopeless run seconds in rather than at the cap
    sim.work_cap = None if work_cap is None else max(1, int(work_cap * probes[0][0]))
    while True:
        until = None if slice_s is None else time.perf_counter() + slice_s
        try:
            if sim.run(policy, until):
                return Run(sim, policy, scenario)
        except WorkCapExceeded as e:
            if not probes:
                raise too_much(scenario, e.work, e.done, e.n, work_cap) from None
            guess = estimate(e.work, e.done, e.n)
            if guess is not None and guess > probes[0][1] * work_cap:
                raise too_much(scenario, e.work, e.done, e.n, work_cap) from None
            probes.pop(0)              # the estimate fits (or there is none yet): go on
            sim.work_cap = int(work_cap * probes[0][0]) if probes else work_cap
            continue
        except OverflowError:
            raise ScenarioError("workload", "<trace>", "a run whose simulated time fits in 2^63 "
                                "ticks", "the simulated time overflows: use fewer or shorter "
                                "requests or a cheaper cost model") from None
        yield


def run_sim(scenario, trace=None, work_cap=WORK_CAP):
    """Normalised scenario (+ optional pre-generated trace) -> finished Run (no JSON building)."""
    return drain(run_steps(scenario, trace, None, work_cap))


def _requests(sim, n):
    """The first n request records (layout records.REQUEST)."""
    arrive, prompt, out = sim.arrive, sim.prompt, sim.out
    at, ft, dt = sim.admit_tick, sim.first_tick, sim.done_tick
    ap, fp, dp, pre = sim.admit_pass, sim.first_pass, sim.done_pass, sim.preemptions
    last, cached = sim.last_tick, sim.cached_tokens
    reqs = []
    for i in range(n):
        a, f, d, o = arrive[i], ft[i], dt[i], out[i]
        lt = last[i]
        reqs.append({
            "id": i, "arrive": a / TICKS, "prompt": prompt[i], "out": o,
            "admit": at[i] / TICKS, "first_token": f / TICKS, "last_token": lt / TICKS,
            "done": d / TICKS, "admit_pass": ap[i], "first_token_pass": fp[i],
            "done_pass": dp[i], "ttft": (f - a) / TICKS,
            "tpot": 0.0 if o == 1 else (lt - f) / (o - 1) / TICKS,
            "e2e": (d - a) / TICKS, "preemptions": pre[i], "cached_tokens": cached[i],
        })
    return reqs


def result_meta(run, n):
    """Everything of a result but its three tables: scheduler, scenario, metrics, truncated, unit,
    kv_blocks."""
    sim, scenario, rec = run.sim, run.scenario, run.sim.rec
    m = _metrics.compute(sim, scenario)
    m.update(run.policy.extra_metrics())
    from .traces import credit
    return {
        "scheduler": scenario["scheduler"],
        "scenario": public(scenario),
        "credit": credit(scenario["workload"]),    # a production trace's attribution, or None
        "metrics": m,
        "truncated": {"requests": sim.n > n, "segments": rec.seg_truncated,
                      "passes_log": rec.log_truncated},
        "unit": cost_unit(scenario),
        "kv_blocks": run.policy.block_view(),   # the paged pool over the run (vllm), or None
    }


def result(run):
    """A finished Run -> the result document: scheduler, scenario, requests, metrics, segments,
    passes_log, truncated, unit (layouts: records.py; metrics: metrics.py)."""
    sim, rec = run.sim, run.sim.rec
    n = min(sim.n, RESULT_CAPS["requests"])
    doc = result_meta(run, n)
    log = rec.log
    passes_log = {k: list(v) for k, v in log.items() if k not in ("cost", "start", "cost_last")}
    for k in ("cost", "start", "cost_last"):
        passes_log[k] = [c / TICKS for c in log[k]]
    doc["requests"] = _requests(sim, n)
    doc["segments"] = [list(s) for s in rec.segments]
    doc["passes_log"] = passes_log
    return doc


def _norm(scenario):
    if isinstance(scenario, dict) and "_ticks" in scenario:
        scenario = public(scenario)
    return normalize(scenario)


def simulate_steps(scenario=None, slice_s=None, fmt=None, work_cap=WORK_CAP):
    s = _norm(scenario)
    run = yield from run_steps(s, None, slice_s, work_cap)
    return (fmt or result)(run)


def simulate(scenario=None, work_cap=WORK_CAP):
    """Scenario dict (untrusted) -> result dict (see result())."""
    return drain(simulate_steps(scenario, work_cap=work_cap))


def _check_schedulers(schedulers):
    names = scheduler_names()
    if isinstance(schedulers, str) or not isinstance(schedulers, (list, tuple)) or not schedulers:
        raise ScenarioError("schedulers", schedulers, "a non-empty list of scheduler names")
    for name in schedulers:
        if not isinstance(name, str) or name not in names:
            raise ScenarioError("scheduler", name, "one of " + ", ".join(names))


def compare_steps(scenario=None, schedulers=("static", "continuous"), slice_s=None, fmt=None,
                  work_cap=WORK_CAP):
    s = _norm(scenario)
    _check_schedulers(schedulers)
    return (yield from _compare(s, schedulers, slice_s, fmt or result, work_cap))


def compare(scenario=None, schedulers=("static", "continuous"), work_cap=WORK_CAP):
    """The same trace through several schedulers; speedup = static / continuous."""
    return drain(compare_steps(scenario, schedulers, work_cap=work_cap))


def _compare(s, schedulers, slice_s, fmt, work_cap=WORK_CAP):
    """compare on an already normalised scenario and checked scheduler names (steps)."""
    trace = generate(s["workload"])
    out, ticks = {}, {}
    for name in schedulers:
        sn = dict(s, scheduler=name)  # nothing in normalize depends on the scheduler but its name
        run = yield from run_steps(sn, trace, slice_s, work_cap)
        out[name] = fmt(run)
        ticks[name] = (run.sim.passes, max(run.sim.done_tick))   # passes, makespan in ticks
    if "static" in out and "continuous" in out:
        (pa, ta), (pb, tb) = ticks["static"], ticks["continuous"]
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
                 "kv_peak_tokens", "prefix_hit_rate", "offered_rps", "served_rps", "backlog")


def sweep_steps(scenario=None, param="skew", values=(0.0, 0.3, 0.6),
                schedulers=("static", "continuous"), slice_s=None, work_cap=WORK_CAP):
    _check_schedulers(schedulers)
    path = fields.SWEEPS.get(param, param) if isinstance(param, str) else None
    if path not in fields.SWEEPS.values():
        raise ScenarioError("param", param, "one of " + ", ".join(fields.SWEEPS))
    if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= MAX_SWEEP_POINTS:
        raise ScenarioError("values", values, "a list of 1 to %d values" % MAX_SWEEP_POINTS)
    base = public(_norm(scenario))
    # sweeping a field that exists only in one variant (a Poisson rate) implies that variant
    for cond, allowed in fields.BY_PATH[path].when.items():
        parent, _, key = cond.rpartition(".")
        set_field(base, parent, {key: allowed[0]})
    parts = path.split(".")
    points = []
    for v in values:
        sc = d = dict(base)  # copy only the dicts on the path; the trace items are shared, read-only
        for p in parts[:-1]:
            d[p] = dict(d[p])
            d = d[p]
        d[parts[-1]] = v
        norm = normalize(sc)
        res = yield from _compare(norm, schedulers, slice_s, _metrics_only, work_cap)
        pt = {"value": v}
        if not isinstance(v, (int, float)):        # null or a word: rank by what it resolves to
            effective = norm
            for p in parts:
                effective = effective[p]
            pt["rank"] = math.inf if effective is None else effective
        for name in schedulers:
            m = res[name]
            pt[name] = {k: m[k] for k in SWEEP_METRICS}
        if "speedup" in res:
            pt["speedup"] = res["speedup"]
        points.append(pt)
    # SLO sizing (py_engine/slo.py): best = largest value meeting it
    result = {"param": param, "path": path, "values": list(values), "points": points}
    _slo.annotate(result, schedulers, base["slo"], _words(fields.BY_PATH[path]))
    for pt in points:
        pt.pop("rank", None)
    return result


def _words(field):
    """A swept field's name in a sentence: vLLM's name when the label gives it ("Slots
    (max_num_seqs)"), else the field's own (max_num_batched_tokens)."""
    label = field.label
    return label[label.index("(") + 1:label.rindex(")")] if "(" in label else field.leaf


def sweep(scenario=None, param="skew", values=(0.0, 0.3, 0.6), schedulers=("static", "continuous"),
          work_cap=WORK_CAP):
    """Compare the schedulers at each value of one parameter.

    Returns {"param", "path", "values", "points": [{"value", "<scheduler>": {metrics subset},
    "speedup": {...} (only when both static and continuous ran)}], "slo", "best", "lowest"}.
    param is a sweepable field's URL name (fields.SWEEPS) or its dotted path; schedulers may be any
    non-empty subset, e.g. ["continuous"].
    """
    return drain(sweep_steps(scenario, param, values, schedulers, None, work_cap))


def _metrics_only(run):
    m = _metrics.compute(run.sim, run.scenario)
    m.update(run.policy.extra_metrics())
    return m


__all__ = ["simulate", "compare", "sweep", "simulate_steps", "compare_steps", "sweep_steps",
           "presets", "run_sim", "run_steps", "drain", "result", "Run"]
