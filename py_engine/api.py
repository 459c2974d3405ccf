"""Public API: simulate / compare / sweep / presets. JSON in, JSON out, no other state.

Result caps (so a huge run cannot produce a huge document): `requests` lists at most
RESULT_CAPS["requests"] records, `segments` at most RESULT_CAPS["segments"] and `passes_log` at most
RESULT_CAPS["passes_log"] runs; metrics always cover the whole run. result["truncated"] says which
lists were cut ({"requests": bool, "segments": bool, "passes_log": bool}).
"""

import copy

from . import metrics as _metrics
from . import slo as _slo
from .core import EngineError, Sim
from .cost import Cost
from .policies import get as _get_policy
from .scenario import TICKS, ScenarioError, _choice, cost_unit, normalize, public
from .workload import generate

RESULT_CAPS = {"requests": 100_000, "segments": 250_000, "passes_log": 250_000}
SWEEP_PARAMS = {
    "skew": "workload.skew", "requests": "workload.requests", "seed": "workload.seed",
    "output_mean": "workload.output_mean", "prompt_mean": "workload.prompt_mean",
    "rate": "workload.arrival.rate", "every": "workload.arrival.every",
    "slots": "server.slots", "chunk": "server.chunk",
    "max_num_batched_tokens": "server.max_num_batched_tokens", "kv_tokens": "server.kv_tokens",
    "block_size": "server.block_size",
}
MAX_SWEEP_POINTS = 200


def run_sim(scenario, trace=None):
    """Normalised scenario (+ optional pre-generated trace) -> finished Sim (no JSON building)."""
    if trace is None:
        trace = generate(scenario["workload"])
    sim = Sim(trace, scenario["server"]["slots"], Cost.from_scenario(scenario),
              seg_cap=RESULT_CAPS["segments"], log_cap=RESULT_CAPS["passes_log"])
    policy = _get_policy(scenario["scheduler"])(sim, scenario)
    try:
        sim.run(policy)
    except OverflowError:
        raise ScenarioError("workload", "<trace>", "a run whose simulated time fits in 2^63 ticks",
                            "the simulated time overflows: use fewer or shorter requests or a "
                            "cheaper cost model")
    sim.policy = policy
    return sim


def _result(sim, scenario):
    m = _metrics.compute(sim, scenario)
    extra = getattr(getattr(sim, "policy", None), "extra_metrics", None)
    if extra is not None:  # additive policy counters (vllm: swap / recompute)
        m.update(extra())
    n = min(sim.n, RESULT_CAPS["requests"])
    arrive, prompt, out = sim.arrive, sim.prompt, sim.out
    at, ft, dt = sim.admit_tick, sim.first_tick, sim.done_tick
    fp, dp, pre = sim.first_pass, sim.done_pass, sim.preemptions
    reqs = []
    for i in range(n):
        a, f, d, o = arrive[i], ft[i], dt[i], out[i]
        reqs.append({
            "id": i, "arrive": a / TICKS, "prompt": prompt[i], "out": o,
            "admit": at[i] / TICKS, "first_token": f / TICKS, "done": d / TICKS,
            "admit_pass": sim.admit_pass[i], "first_token_pass": fp[i], "done_pass": dp[i],
            "ttft": (f - a) / TICKS, "tpot": 0.0 if o == 1 else (d - f) / TICKS / (o - 1),
            "e2e": (d - a) / TICKS, "preemptions": pre[i],
        })
    log = sim.log
    passes_log = {k: list(v) for k, v in log.items() if k not in ("cost", "start")}
    passes_log["cost"] = [c / TICKS for c in log["cost"]]
    passes_log["start"] = [s / TICKS for s in log["start"]]
    return {
        "scheduler": scenario["scheduler"],
        "scenario": public(scenario),
        "requests": reqs,
        "metrics": m,
        "segments": [list(s) for s in sim.segments],
        "passes_log": passes_log,
        "truncated": {"requests": sim.n > n, "segments": sim.seg_truncated,
                      "passes_log": sim.log_truncated},
        "unit": cost_unit(scenario),
    }


def _norm(scenario):
    if isinstance(scenario, dict) and "_ticks" in scenario:
        scenario = public(scenario)
    return normalize(scenario)


def simulate(scenario=None):
    """Scenario dict (untrusted) -> result dict (SPEC section 4)."""
    s = _norm(scenario)
    return _result(run_sim(s), s)


def _check_schedulers(schedulers):
    if isinstance(schedulers, str) or not isinstance(schedulers, (list, tuple)) or not schedulers:
        raise ScenarioError("schedulers", schedulers, "a non-empty list of scheduler names")
    for name in schedulers:
        _choice("scheduler", name)


def compare(scenario=None, schedulers=("static", "continuous")):
    """The same trace through several schedulers; speedup = static / continuous."""
    s = _norm(scenario)
    _check_schedulers(schedulers)
    return _compare(s, schedulers)


def _compare(s, schedulers):
    """compare() on an already normalised scenario and checked scheduler names."""
    trace = generate(s["workload"])
    out = {}
    for name in schedulers:
        sn = dict(s, scheduler=name)  # nothing in normalize depends on the scheduler but its name
        out[name] = _result(run_sim(sn, trace), sn)
    if "static" in out and "continuous" in out:
        a, b = out["static"]["metrics"], out["continuous"]["metrics"]
        out["speedup"] = {"passes": a["passes"] / b["passes"],
                          "time": a["makespan_ticks"] / b["makespan_ticks"]}
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


def sweep(scenario=None, param="skew", values=(0.0, 0.3, 0.6), schedulers=("static", "continuous")):
    """Compare static vs continuous at each value of one parameter.

    Returns {"param", "path", "values", "points": [{"value", "<scheduler>": {metrics subset},
    "speedup": {...} (only when both static and continuous ran)}]}. param is a leaf name (see
    SWEEP_PARAMS) or its dotted path; schedulers may be any non-empty subset, e.g. ["continuous"].
    """
    _check_schedulers(schedulers)
    path = SWEEP_PARAMS.get(param, param) if isinstance(param, str) else None
    if path not in SWEEP_PARAMS.values():
        raise ScenarioError("param", param, "one of " + ", ".join(SWEEP_PARAMS))
    if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= MAX_SWEEP_POINTS:
        raise ScenarioError("values", values, "a list of 1 to %d values" % MAX_SWEEP_POINTS)
    base = public(_norm(scenario))
    kind = {"workload.arrival.rate": "poisson", "workload.arrival.every": "gap"}.get(path)
    if kind:  # sweeping a rate or a gap implies that arrival process
        base["workload"]["arrival"] = {"kind": kind}
    parts = path.split(".")
    points = []
    for v in values:
        sc = d = dict(base)  # copy only the dicts on the path; the trace items are shared, read-only
        for p in parts[:-1]:
            d[p] = dict(d[p])
            d = d[p]
        d[parts[-1]] = v
        res = _compare(normalize(sc), schedulers)
        pt = {"value": v}
        for name in schedulers:
            m = res[name]["metrics"]
            pt[name] = {k: m[k] for k in ("passes", "makespan", "utilization", "throughput_tok_s",
                                          "ttft", "tbt", "e2e", "goodput_rps", "slo_attainment",
                                          "preemptions", "kv_peak_tokens")}
        if "speedup" in res:
            pt["speedup"] = res["speedup"]
        points.append(pt)
    # SLO sizing (py_engine/slo.py): meets_slo per point, best = largest value meeting it
    return _slo.annotate({"param": param, "path": path, "values": list(values), "points": points},
                         schedulers, base["slo"])


PRESETS = {
    "article": {"label": "Article default",
                "description": "64 requests arriving together, 8 slots, chunk 512, long-tail "
                               "lengths (skew 0.6), the article's cost model.",
                "scenario": {}},
    "equal": {"label": "Equal lengths",
              "description": "Every request has the same prompt and output: static wastes nothing, "
                             "speedup exactly 1.00.",
              "scenario": {"workload": {"skew": 0.0}}},
    "single": {"label": "One slot",
               "description": "slots = 1: both schedulers run one request at a time, speedup 1.00.",
               "scenario": {"server": {"slots": 1}}},
    "chat": {"label": "Chat (Poisson arrivals)",
             "description": "256 requests arriving as a Poisson stream at 4 req/s on 16 slots "
                            "(about 60% busy): continuous keeps TTFT low, static queues.",
             "scenario": {"workload": {"requests": 256, "arrival": {"kind": "poisson",
                                                                     "rate": 4.0}},
                          "server": {"slots": 16}}},
    "kv_pressure": {"label": "KV pressure (vllm)",
                    "description": "The vllm policy with a KV cache of 3,000 tokens: the batch "
                                   "fits at admission, overflows later, and requests are "
                                   "preempted (recompute).",
                    "scenario": {"scheduler": "vllm", "server": {"kv_tokens": 3000}}},
    "long_docs": {"label": "Long documents",
                  "description": "Prompts of ~4,000 tokens with short answers: prefill dominates, "
                                 "chunked prefill matters.",
                  "scenario": {"workload": {"prompt_mean": 4000, "output_mean": 64}}},
}


def presets():
    return copy.deepcopy(PRESETS)


__all__ = ["simulate", "compare", "sweep", "presets", "ScenarioError", "EngineError", "run_sim"]
