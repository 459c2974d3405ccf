"""The planner (`python -m py_engine plan --gpus N ...`): every way to spend a GPU budget on the
scenario's deployment, colocated (replicas x TP) or disaggregated (prefill replicas x TP : decode
replicas x TP), each simulated on the same trace against the SLO, ranked by goodput per GPU, and
the verdict in words: which wins and what limits the other.

Candidates use the whole budget: colocated, N // tp replicas at each tp; disaggregated, every
P x tp_p + D x tp_d <= N with no room left for another replica of either pool. A tp is tried
when the model's weights leave a KV pool on that many GPUs (and at most 8: one node). The router
is the scenario's (round robin by default; the same for both pools). Points run through an
executor (app/parallel.py), so --workers and --ray give the serial answer.
"""

from ..api import drain, simulate_steps
from ..errors import ScenarioError
from ..sim.work import WORK_CAP
from ..scenario.prepared import prepare
from .parallel import serial

TPS = (1, 2, 4, 8)
IDLE_SHARE = 0.35        # a pool busy less than this share of the other's: the workload starves it
WAITS = ("prefill_queue", "transfer", "decode_queue")
WAIT_SHARE = 0.5         # a wait taking more than this share of the mean TTFT is the limit
MAX_GPUS = 64
MAX_CANDIDATES = 120
PART_WORDS = {"prefill_queue": "requests wait for a prefill replica (the prefill pool is "
                               "starved)",
              "prefill": "the prefills themselves (long prompts on a small TP)",
              "transfer": "the KV link (its bandwidth and queue)",
              "decode_queue": "requests wait for a decode replica's slots or blocks (the "
                              "decode pool is starved)",
              "first_decode": "the decode replicas' first step"}


def _tps(base, gpus):
    """The tp values whose deployment leaves a KV pool, within the budget."""
    out = []
    for tp in TPS:
        if tp > gpus:
            break
        sc = _with(base, {"server": {"cost": {"tp": tp}}})
        try:
            prepare(sc)
        except ScenarioError:
            continue
        out.append(tp)
    return out


def _with(base, over):
    """base with `over` merged into it (dicts merge, the rest replaces)."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _with(out[k], v)
        else:
            out[k] = v
    return out


def candidates(base, gpus):
    """[{"kind": "colocated", "replicas", "tp"} | {"kind": "disaggregated", "prefill": {"replicas",
    "tp"}, "decode": {...}}] for the budget."""
    tps = _tps(base, gpus)
    if not tps:
        raise ScenarioError("gpus", gpus, "enough GPUs for the model's weights to leave a KV "
                            "pool (at least %d here)" % (TPS[-1] * 2))
    out = [{"kind": "colocated", "replicas": gpus // tp, "tp": tp} for tp in tps]
    small = min(tps)
    for tp_p in tps:
        for tp_d in tps:
            for p in range(1, gpus // tp_p + 1):
                left = gpus - p * tp_p
                d = left // tp_d
                if d < 1 or left - d * tp_d >= small:
                    continue       # no decode replica fits, or the budget has room for more
                out.append({"kind": "disaggregated", "prefill": {"replicas": p, "tp": tp_p},
                            "decode": {"replicas": d, "tp": tp_d}})
    return out[:MAX_CANDIDATES]


def scenario_of(base, cand):
    """The candidate's scenario."""
    if cand["kind"] == "colocated":
        return _with(base, {"server": {"cost": {"tp": cand["tp"]}},
                            "cluster": {"replicas": cand["replicas"]}})
    return _with(base, {"cluster": {
        "prefill": {"replicas": cand["prefill"]["replicas"],
                    "server": {"cost": {"tp": cand["prefill"]["tp"]}}},
        "decode": {"replicas": cand["decode"]["replicas"],
                   "server": {"cost": {"tp": cand["decode"]["tp"]}}}}})


def _rate_field(base):
    """The workload's load knob and its value: a Poisson rate or a trace's rate scale."""
    wl = base["workload"]
    traced = wl.get("items") is None and wl["trace"]["name"] != "none"
    field, n = ("workload.trace.count", wl["trace"]["count"]) if traced else (
        "workload.requests", wl["requests"])
    if wl.get("items") is None and n < 2:     # one arrival has no rate (offered_rps: none)
        raise ScenarioError(field, n, "at least 2, to search the highest load meeting the SLO "
                            "(a load is a rate of arrivals)")
    if traced:
        return "rate_scale", wl["trace"]["rate_scale"]
    if wl.get("items") is None and wl["arrival"]["kind"] == "poisson":
        return "rate", wl["arrival"]["rate"]
    raise ScenarioError("workload.arrival.kind", wl["arrival"]["kind"], "poisson, or a "
                        "production trace, to search the highest load meeting the SLO")


def _at_load(sc, knob, value):
    wl = dict(sc["workload"])
    if knob == "rate":
        wl["arrival"] = dict(wl["arrival"], rate=value)
    else:
        wl["trace"] = dict(wl["trace"], rate_scale=value)
    return dict(sc, workload=wl)


def _meets_slo(r):
    return r["metrics"]["meets_slo"]


def capacity_steps(sc, work_cap, steps=None, slice_s=None, meets=_meets_slo):
    """The highest load (Poisson rate, or trace rate scale) at which the scenario meets its SLO:
    doubling or halving from the given one to bracket it, then `steps` bisections in log scale
    -> (load, its result), or (None, the lowest load's result) when no load tried meets it.
    `meets(result)` judges a load (default: the result's own verdict; a paper may define its
    own). A steps generator (each simulation in slices; its progress is not the search's, so
    not passed on)."""
    sc = prepare(sc).doc
    knob, v = _rate_field(sc)
    steps = CAPACITY_STEPS if steps is None else steps

    def run(x):
        sim = simulate_steps(_at_load(sc, knob, x), slice_s, None, work_cap)
        while True:
            try:
                next(sim)
            except StopIteration as e:
                return e.value
            yield
    r = yield from run(v)
    good = bad = None                        # (load, result) meeting the SLO; a load failing
    if meets(r):
        good = (v, r)
        for _ in range(CAPACITY_RANGE):
            x = min(good[0] * 2, LOAD_MAX[knob])
            if x == good[0]:
                return good                  # meets it at the most load the field takes
            r = yield from run(x)
            if not meets(r):
                bad = x
                break
            good = (x, r)
        else:
            return good
    else:
        bad = v
        for _ in range(CAPACITY_RANGE):
            x = bad / 2
            r = yield from run(x)
            if meets(r):
                good = (x, r)
                break
            bad = x
        else:
            return None, r
    for _ in range(steps):
        mid = (good[0] * bad) ** 0.5
        r = yield from run(mid)
        if meets(r):
            good = (mid, r)
        else:
            bad = mid
    return good


def capacity(sc, work_cap, steps=None, meets=_meets_slo):
    """capacity_steps run to its end."""
    return drain(capacity_steps(sc, work_cap, steps, meets=meets))


CAPACITY_STEPS = 5       # bisections: the load to within 2^(1/32), about 2 %
CAPACITY_RANGE = 8       # doublings or halvings to bracket it
LOAD_MAX = {"rate": 1e6, "rate_scale": 100.0}


def plan_point(job, cand):
    """One candidate simulated -> its row (the function an executor maps). With capacity: at
    the highest load meeting the SLO (DistServe's goodput: that rate per GPU)."""
    base, work_cap, search = job
    return drain((capacity_point_steps if search else point_steps)(base, cand, work_cap))


def capacity_point_steps(base, cand, work_cap=WORK_CAP, slice_s=None):
    """One candidate at its capacity, in slices -> its row (goodput per GPU at that load)."""
    load, r = yield from capacity_steps(scenario_of(base, cand), work_cap, slice_s=slice_s)
    m = r["metrics"]
    row = dict(cand, capacity_load=load,
               capacity_rps=m["offered_rps"] if load is not None else 0.0)
    row.update(row_of(cand, r))
    # goodput per GPU at capacity: the requests meeting the SLO there
    row["goodput_per_gpu"] = row["capacity_rps"] * m["slo_attainment"] / m["gpus"] \
        if load is not None else 0.0
    return row


def point_steps(base, cand, work_cap=WORK_CAP, slice_s=None):
    """One candidate at the scenario's load, in slices (the page's planner runs its candidates
    one by one through these) -> its row."""
    r = yield from simulate_steps(scenario_of(base, cand), slice_s, None, work_cap)
    return row_of(cand, r)


def row_of(cand, r):
    """A candidate's row from its result (rows format)."""
    m = r["metrics"]
    row = dict(cand)
    row.update({"gpus": m["gpus"], "goodput_rps": m["goodput_rps"],
                "goodput_per_gpu": m["goodput_per_gpu"], "meets_slo": m["meets_slo"],
                "slo_attainment": m["slo_attainment"], "throughput_tok_s": m["throughput_tok_s"],
                "itl_p99": m["itl"]["p99"],
                # the p95s every other figure and the SLO verdict's words use (over every request)
                "ttft_p95": m["ttft"]["p95"], "tpot_p95": m["tpot"]["p95"],
                "failing": m["slo"]["failing"]})
    if "ttft_parts" in m:
        row["ttft_parts_mean"] = {k: v["mean"] for k, v in m["ttft_parts"].items()}
        row["busy"] = _busy(r)
    return row


def _busy(r):
    """Per pool the share of the run its replicas spent running passes (mean over replicas)."""
    span = r["metrics"]["makespan"]
    out = {}
    for pool in ("prefill", "decode"):
        shares = []
        for rep in r["replicas"]:
            if rep["pool"] != pool:
                continue
            log = rep["passes_log"]
            busy = sum(k * (a + b) / 2 for k, a, b in zip(log["count"], log["cost"],
                                                           log["cost_last"]))
            shares.append(busy / span if span else 0.0)
        out[pool] = sum(shares) / len(shares)
    return out


def _label(c):
    """A candidate as the page's table names it (web/ui/plan.js candidateWords)."""
    if c["kind"] == "colocated":
        return "colocated %d \u00d7 TP %d" % (c["replicas"], c["tp"])
    return "P/D %d prefill (TP %d) : %d decode (TP %d)" % (
        c["prefill"]["replicas"], c["prefill"]["tp"], c["decode"]["replicas"], c["decode"]["tp"])


def _why_not(c, best):
    """What limits candidate c against the best, in words."""
    if c["kind"] == "colocated":
        if best["kind"] == "disaggregated" and c["itl_p99"] and best["itl_p99"]:
            return ("decode steps wait behind prefills on the same GPUs: ITL p99 %.0f ms against "
                    "%.0f ms on decode-only replicas" % (c["itl_p99"], best["itl_p99"]))
        return "its replicas fall short of the SLO (%s)" % ", ".join(c["failing"] or ["none"])
    parts = c.get("ttft_parts_mean") or {}
    if not parts:
        return "it falls short of the SLO"
    top = max(parts, key=parts.get)
    if top in WAITS and parts[top] > WAIT_SHARE * sum(parts.values()):
        # requests stuck on the link or in a queue leave the pool after it idle too: name the
        # wait, not the idle pool it causes
        return _mostly(parts, top)
    busy = c["busy"]
    idle = min(busy, key=busy.get)
    if busy[idle] < IDLE_SHARE * busy[max(busy, key=busy.get)]:
        return ("its %s GPUs sit idle most of the time (busy %.0f%% of the run against %.0f%% "
                "for the %s pool): a pool the workload cannot keep busy" % (
                    idle, 100 * busy[idle], 100 * max(busy.values()),
                    "decode" if idle == "prefill" else "prefill"))
    return _mostly(parts, top)


def _mostly(parts, top):
    return "its TTFT goes mostly to %s (%.0f of %.0f ms on average)" % (
        PART_WORDS[top], parts[top], sum(parts.values()))


# At the scenario's load, a load every candidate serves within the SLO ranks them by little more
# than how fast each run drains: the verdict says so and names the ranking that separates them.
ALL_MEET = ("; every candidate meets the SLO at this load, so goodput per GPU is about the "
            "offered load over the GPUs: rank at capacity to see what each sustains")


def verdict(rows, search=False):
    """(recommended row, reason in words); search: the rows are at each one's capacity."""
    meeting = [r for r in rows if r["meets_slo"]]
    order = ranked(rows)
    best = order[0]
    other = next((r for r in order if r["kind"] != best["kind"]), None)
    head = "%s: %.3f requests within the SLO per second per GPU%s" % (
        _label(best), best["goodput_per_gpu"],
        "" if meeting else " (no candidate meets the SLO: the best share is %.1f%%)"
        % (100 * best["slo_attainment"]))
    tail = ALL_MEET if not search and len(meeting) == len(rows) > 1 else ""
    if other is None:
        return best, head + tail
    ratio = (best["goodput_per_gpu"] / other["goodput_per_gpu"]
             if other["goodput_per_gpu"] else float("inf"))
    return best, "%s, \u00d7%s the best %s candidate (%s, %.3f): %s%s" % (
        head, "%.2f" % ratio if ratio != float("inf") else "inf", other["kind"], _label(other),
        other["goodput_per_gpu"], _why_not(other, best), tail)


def setup(scenario, gpus, search=False):
    """The plan's checks -> (base scenario: the cluster's router, staleness and link only,
    candidates). search: ranked at capacity, which needs a load to search (before any candidate
    runs: the first one's refusal named a candidate for what is the workload's)."""
    if type(gpus) is not int or not 1 <= gpus <= MAX_GPUS:
        raise ScenarioError("gpus", gpus, "an integer from 1 to %d" % MAX_GPUS)
    base = prepare(scenario).doc
    cost = base["server"]["cost"]
    if not (isinstance(cost, dict) and cost.get("kind") == "roofline"):
        raise ScenarioError("server.cost", cost if isinstance(cost, str) else cost.get("kind"),
                            "a roofline deployment (a plan is about real GPUs: give --model "
                            "and --gpu)")
    cl = base["cluster"]      # the router, its staleness and the link apply to every candidate
    base = dict(base, cluster={k: cl[k] for k in ("router", "transfer", "staleness_ms")})
    if search:
        _rate_field(base)
    return base, candidates(base, gpus)


def ranked(rows):
    """Rows best first: meeting the SLO, then goodput per GPU, then fewer GPUs."""
    return sorted(rows, key=lambda r: (not r["meets_slo"], -r["goodput_per_gpu"], r["gpus"]))


def document(gpus, rows, search=False):
    """The plan's answer from its candidates' rows (in candidate order)."""
    best, reason = verdict(rows, search)
    return {"gpus": gpus, "capacity": search, "candidates": ranked(rows), "recommended": best,
            "reason": reason}


def plan(scenario, gpus, work_cap=None, executor=None, search=False):
    """-> {"gpus", "candidates": [rows, best first], "recommended": row, "reason": words}.
    search: rank at each candidate's capacity (the highest load meeting the SLO) instead of at
    the scenario's load."""
    base, cands = setup(scenario, gpus, search)
    rows = (executor or serial)(plan_point, (base, work_cap, search), cands)
    return document(gpus, rows, search)
