"""Self-verification, natively (`python -m py_engine check`) and in the browser (protocol "check").

The engine (event-driven core + policies) is compared with `verify/reference.py` — the article's closed
form and its brute-force step loop, written independently — on seeded random traces, plus the
article's published numbers and the invariants it states, and the vllm policy with decisions
recorded from the real vLLM 0.33.0 scheduler (`verify/vllm_cases.py`). Returns
{"passed": n, "failed": m, "checks": [{"name", "ok", "detail"}]}; never raises.
Quick mode (the default) runs in well under a second natively.
"""

import random
import time

from ..model import kv
from ..api import compare, drain, run_sim, simulate, sweep
from ..model.cost import Cost, prefill_steps, step_cost_ms
from ..errors import ScenarioError
from ..scenario.prepared import prepare
from ..sim.progress import Progress
from . import reference, vllm_cases, vllm_checks


class _Checks:
    def __init__(self):
        self.items = []

    def add(self, name, ok, detail=""):
        self.items.append({"name": name, "ok": bool(ok), "detail": detail})

    def run(self, name, fn):
        try:
            ok, detail = fn()
        except Exception as e:  # a crash is a failed check, reported as data
            ok, detail = False, "%s: %s" % (type(e).__name__, e)
        self.add(name, ok, detail)


def _article_numbers():
    got = [round(step_cost_ms(*a), 2) for a in ((1, 0), (32, 0), (16, 4000), (16, 0))]
    c = Cost(22_000_000, 350_000, 60_000)
    ticks = [c.pass_ticks(*a) for a in ((1, 0), (32, 0), (16, 4000), (16, 0))]
    ok = got == [22.35, 33.2, 267.6, 27.6] and ticks == [22_350_000, 33_200_000, 267_600_000,
                                                         27_600_000]
    return ok, "step_cost_ms(1,0), (32,0), (16,4000), (16,0) = %s ms" % got


def _prefill_numbers():
    got = [prefill_steps(p, 512) for p in (0, 1, 512, 513, 4000)]
    return got == [1, 1, 1, 2, 8], "prefill_steps(0|1|512|513|4000, 512) = %s" % got


def _kv_numbers():
    r = kv.kv_capacity(layers=32, kv_heads=8, head_dim=128, dtype="bf16", gpu_bytes=80e9,
                       gpu_mem_utilization=0.92, weight_bytes=16e9, context_len=2048)
    ok = (kv.kv_bytes_per_token(32, 8, 128) == 131_072 and r["tokens"] == 439_453
          and r["sequences"] == 214)
    return ok, "Llama-3-8B bf16: %d B/token, %d tokens, %d sequences of 2k" % (
        kv.kv_bytes_per_token(32, 8, 128), r["tokens"], r["sequences"])


def _random_scenario(rng, i):
    n = rng.randint(1, 24)
    staggered = i % 2 == 1
    items = [{"arrive": rng.randint(0, 300) / 4 if staggered else 0.0,
              "prompt": rng.randint(1, 300), "out": rng.randint(1, 40)} for _ in range(n)]
    cost = ["unit", "article", {"fixed_ms": 1.5, "per_row_ms": 0.25,
                                "per_prefill_token_ms": 0.125}][i % 3]
    return {"workload": {"items": items},
            "server": {"slots": rng.randint(1, 6), "chunk": rng.randint(1, 128), "cost": cost}}


def _engine_vs_reference(raw, scheduler):
    sc = prepare(dict(raw, scheduler=scheduler))
    sim = run_sim(sc).sim
    t = sc.ticks
    ref = reference.RUNNERS[scheduler](list(sim.arrive), list(sim.prompt), list(sim.out),
                                       sc["server"]["slots"], sc["server"]["chunk"],
                                       tuple(t))
    bad = []
    if sim.passes != ref["passes"]:
        bad.append("passes %d != %d" % (sim.passes, ref["passes"]))
    if sim.t_useful != ref["useful"]:
        bad.append("useful %d != %d" % (sim.t_useful, ref["useful"]))
    for key, mine in (("first_pass", sim.first_pass), ("done_pass", sim.done_pass),
                      ("first_tick", sim.first_tick), ("done_tick", sim.done_tick)):
        if list(mine) != ref[key]:
            bad.append(key + " differs")
    if scheduler == "static":
        unit = dict(raw, scheduler="static", server=dict(raw["server"], cost="unit"))
        usim = run_sim(prepare(unit)).sim
        reqs = [{"arrive": a / 1_000_000, "prompt": p, "out": o}
                for a, p, o in zip(usim.arrive, usim.prompt, usim.out)]
        cf = reference.static_makespan(reqs, sc["server"]["slots"], sc["server"]["chunk"])
        if max(usim.done_tick) != round(cf * 1_000_000):
            bad.append("closed form %s != engine %s" % (cf, max(usim.done_tick) / 1e6))
    return not bad, "; ".join(bad) or "%d requests, %d passes, identical" % (sim.n, sim.passes)


def _invariants_default():
    r = compare({})
    s, c = r["static"]["metrics"], r["continuous"]["metrics"]
    ok = (0.2 <= s["utilization"] <= 0.3 and 0.6 <= round(c["utilization"], 2) <= 0.75
          and 2.5 <= r["speedup"]["passes"] <= 3.6)
    return ok, "default: static %.3f, continuous %.3f, speedup x%.2f (passes %d vs %d)" % (
        s["utilization"], c["utilization"], r["speedup"]["passes"], s["passes"], c["passes"])


def _invariant_speedup_one(overrides, label):
    def fn():
        r = compare(overrides)
        sp = r["speedup"]["passes"]
        return sp == 1.0, "%s: speedup x%r" % (label, sp)
    return fn


def _shares():
    bad = []
    for sched in ("static", "continuous"):
        m = simulate({"scheduler": sched, "workload": {"requests": 40, "seed": 3,
                                                       "arrival": {"kind": "poisson",
                                                                   "rate": 30}}})["metrics"]
        if abs(sum(m["shares"].values()) - 1.0) > 1e-12:
            bad.append(sched + " shares sum %r" % sum(m["shares"].values()))
        if m["slot_steps"]["useful"] != m["output_tokens"]:
            bad.append(sched + " useful != output tokens")
    return not bad, "; ".join(bad) or "shares sum to 1; useful slot-steps = output tokens"


def _skew_sweep():
    r = sweep({}, "skew", [0.0, 0.3, 0.6, 0.9])
    sp = [p["speedup"]["passes"] for p in r["points"]]
    ok = sp[0] == 1.0 and all(a < b for a, b in zip(sp, sp[1:]))
    return ok, "skew 0/0.3/0.6/0.9 -> x" + " / x".join("%.2f" % x for x in sp)


def _determinism():
    a = simulate({"workload": {"seed": 7, "requests": 50}})
    b = simulate({"workload": {"seed": 7, "requests": 50}})
    return a == b, "same seed, same result"


def _bad_inputs():
    cases = [({"server": {"slots": 0}}, "server.slots"),
             ({"server": {"slots": True}}, "server.slots"),
             ({"workload": {"skew": float("nan")}}, "workload.skew"),
             ({"workload": {"items": []}}, "workload.items"),
             ({"scheduler": "fifo"}, "scheduler"),
             ({"server": {"chunks": 4}}, "server.chunks")]
    bad = []
    for raw, field in cases:
        try:
            prepare(raw)
            bad.append(field + " accepted")
        except ScenarioError as e:
            if e.field != field:
                bad.append("%s reported as %s" % (field, e.field))
    return not bad, "; ".join(bad) or "%d bad inputs rejected, field named" % len(cases)


def run_steps(quick=True, seed=20260101):
    """The self-check, yielding after each check (so the page's worker can be cancelled)."""
    t0 = time.perf_counter()
    ch = _Checks()
    rng = random.Random(seed)
    todo = [("article step costs 22.35 / 33.2 / 267.6 / 27.6 ms", _article_numbers),
            ("article prefill_steps", _prefill_numbers),
            ("article KV capacity 131,072 B / 439,453 tokens / 214 seqs", _kv_numbers)]
    for i in range(20 if quick else 150):
        raw = _random_scenario(rng, i)
        for sched in ("static", "continuous"):
            todo.append(("trace %d %s: engine == brute force%s" % (
                i, sched, " == closed form" if sched == "static" else ""),
                lambda raw=raw, sched=sched: _engine_vs_reference(raw, sched)))
    todo += [
        ("default scenario in the article's regime", _invariants_default),
        ("slots = 1 -> speedup exactly 1.00",
         _invariant_speedup_one({"server": {"slots": 1}, "workload": {"requests": 24}}, "slots=1")),
        ("identical lengths -> speedup exactly 1.00",
         _invariant_speedup_one({"workload": {"skew": 0.0}}, "skew=0")),
        ("shares sum to 1, useful = output tokens", _shares),
        ("skew sweep: x1.00 at 0, rising", _skew_sweep),
        ("determinism", _determinism),
        ("bad inputs raise ScenarioError naming the field", _bad_inputs),
    ]
    todo += vllm_checks.checks(rng, quick)
    todo += vllm_cases.checks(quick)
    for i, (name, fn) in enumerate(todo, 1):
        ch.run(name, fn)
        yield Progress(i, len(todo), "checks")
    passed = sum(c["ok"] for c in ch.items)
    return {"passed": passed, "failed": len(ch.items) - passed, "checks": ch.items,
            "seconds": round(time.perf_counter() - t0, 3), "quick": quick}


def run(quick=True, seed=20260101):
    """The self-check: {"passed", "failed", "checks": [{"name", "ok", "detail"}], ...}."""
    return drain(run_steps(quick, seed))
