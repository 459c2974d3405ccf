"""`python -m py_engine validate`: the roofline cost model against public measurements.

Data: py_engine/data/measurements.py, the Splitwise paper's measured prompt (prefill) times and
per-token (decode) times of Llama-2-70B (tensor parallel 2, 4, 8) and BLOOM-176B (tp 8) on
DGX-A100 and DGX-H100 (see that file for the source, its license and what was left out).

What is compared, per configuration (model, GPU, tp, prompt P, batch B, output T):
- prefill: one pass of B rows of P prompt tokens each, from an empty cache, vs the prompt time;
- decode: the mean of the T - 1 passes after the first token (B rows, each context P, P + 1,
  ..., one token per row), vs the per-token time.

Protocol: per GPU, the efficiency factors and overheads (roofline.TUNABLE) are fitted on
Llama-2-70B at tp 2 and 8 (least squares of the log error, a deterministic coordinate search
within physical bounds); the errors reported are on the rest: Llama-2-70B at tp 4 and BLOOM-176B,
a model the fit never saw. Those fitted values are the fit splitwise-2023 (roofline.SPLITWISE_2023);
`validate` re-fits and says whether they still agree.
"""

import math
import statistics

from ..data import measurements
from ..model.roofline import FIT_OF, SPLITWISE_2023, TUNABLE, VLLM_2025, Deployment
from . import served
from ..sim.exact import SUB, floor_sum

TRAIN_TP = (2, 8)             # Llama-2-70B at these tp: the fit; everything else: the test
BOUNDS = {"flops_eff": (0.05, 1.0), "attn_eff": (0.01, 1.0), "bw_eff": (0.1, 1.0),
          "link_eff": (0.05, 1.0), "overhead_ms": (0.0, 60.0), "layer_us": (0.0, 500.0),
          "row_us": (0.0, 2000.0), "allreduce_us": (0.0, 500.0)}
assert set(BOUNDS) == set(TUNABLE)
# where the fit starts (the search is deterministic: from here it finds roofline.SPLITWISE_2023)
START = {"flops_eff": 0.5, "attn_eff": 0.3, "bw_eff": 0.7, "link_eff": 0.7, "overhead_ms": 4.0,
         "layer_us": 60.0, "row_us": 100.0, "allreduce_us": 20.0}


def decode_mean_ms(d, batch, prompt, tokens):
    """Mean cost of the tokens - 1 decode passes after the prefill (exact, via run lines)."""
    n = tokens - 1
    if n <= 0:
        return None
    total, i = 0, 0
    while i < n:
        ctx = prompt + i
        K, a, b, cross = d.run_line(batch, batch, batch * ctx, batch * (ctx + 1), batch, batch)
        k = n - i if cross is None else min(n - i, cross)
        total += k * K + floor_sum(k, SUB, b, a + SUB - 1)
        i += k
    return total / n / 1e6


def predict(point, params):
    """(prefill ms, decode ms) the roofline gives for one measured configuration."""
    model, gpu, tp, prompt, batch, tokens = point[:6]
    d = Deployment(model, gpu, tp, **params)
    prefill = d.pass_ticks(batch * prompt, batch, 0, batch * (prompt * (prompt + 1) // 2)) / 1e6
    return prefill, decode_mean_ms(d, batch, prompt, tokens)


def _loss(points, params):
    s = 0.0
    for pt in points:
        pf, dc = predict(pt, params)
        s += math.log(pf / pt[6]) ** 2 + math.log(dc / pt[7]) ** 2
    return s / len(points)


def fit(points, start):
    """Coordinate search of the tunables within BOUNDS on the Splitwise points."""
    return _search(lambda p: _loss(points, p), start)


def _search(loss, start):
    """Coordinate search of the tunables within BOUNDS, halving the steps: deterministic."""
    p = dict(start)
    best = loss(p)
    step = {k: (hi - lo) / 4 for k, (lo, hi) in BOUNDS.items()}
    while max(step[k] / (BOUNDS[k][1] - BOUNDS[k][0]) for k in step) >= 1e-4:
        improved = False
        for k, (lo, hi) in BOUNDS.items():
            for sign in (1, -1):
                q = dict(p)
                q[k] = round(min(hi, max(lo, p[k] + sign * step[k])), 6)
                if q[k] != p[k]:
                    got = loss(q)
                    if got < best:
                        best, p, improved = got, q, True
        if not improved:
            step = {k: v / 2 for k, v in step.items()}
    return p, best


def split(gpu):
    pts = [pt for pt in measurements.SPLITWISE if pt[1] == gpu]
    train = [pt for pt in pts if pt[0] == "llama-2-70b" and pt[2] in TRAIN_TP]
    return train, [pt for pt in pts if pt not in train]


def errors(points, params):
    """{group: ([prefill APE], [decode APE])} with groups 'model tp'."""
    out = {}
    for pt in points:
        pf, dc = predict(pt, params)
        g = out.setdefault("%s tp%d" % (pt[0], pt[2]), ([], []))
        g[0].append(abs(pf - pt[6]) / pt[6])
        g[1].append(abs(dc - pt[7]) / pt[7])
    return out


def run(refit=True):
    """The report as data: per GPU the fitted values and the errors per group."""
    out = {"source": measurements.SOURCE, "license": measurements.LICENSE, "gpus": {}}
    for gpu in sorted({pt[1] for pt in measurements.SPLITWISE}):
        train, test = split(gpu)
        shipped = SPLITWISE_2023[gpu]
        params, _ = fit(train, START) if refit else (shipped, None)
        groups = errors(test, shipped)
        all_p = [e for g in groups.values() for e in g[0]]
        all_d = [e for g in groups.values() for e in g[1]]
        out["gpus"][gpu] = {
            "train": len(train), "test": len(test), "shipped": shipped, "refit": params,
            "agrees": all(abs(params[k] - shipped[k]) <= 1e-3 * max(1, abs(shipped[k]))
                          for k in shipped),
            "groups": {g: {"points": len(v[0]), "prefill_median": statistics.median(v[0]),
                           "prefill_worst": max(v[0]), "decode_median": statistics.median(v[1]),
                           "decode_worst": max(v[1])} for g, v in groups.items()},
            "prefill_median": statistics.median(all_p), "prefill_worst": max(all_p),
            "decode_median": statistics.median(all_d), "decode_worst": max(all_d)}
    return out


def report(r):
    lines = ["roofline cost model vs measurements", "data: " + r["source"],
             "      " + r["license"],
             "protocol: per GPU, fit on Llama-2-70B tp %s; errors on the rest (Llama-2-70B tp 4, "
             "BLOOM-176B tp 8: a model the fit never saw)" % " and ".join(map(str, TRAIN_TP)),
             "absolute percentage error of the shipped (fitted) defaults on the held-out points:"]
    for gpu, g in r["gpus"].items():
        lines.append("%s: %d fit points, %d test points" % (gpu, g["train"], g["test"]))
        for name, e in g["groups"].items():
            lines.append("  %-20s %3d points  prefill median %5.1f%%  worst %5.1f%%   decode "
                         "median %5.1f%%  worst %5.1f%%" % (
                             name, e["points"], 100 * e["prefill_median"], 100 * e["prefill_worst"],
                             100 * e["decode_median"], 100 * e["decode_worst"]))
        lines.append("  %-20s %3d points  prefill median %5.1f%%  worst %5.1f%%   decode median "
                     "%5.1f%%  worst %5.1f%%" % (
                         "all held out", g["test"], 100 * g["prefill_median"],
                         100 * g["prefill_worst"], 100 * g["decode_median"],
                         100 * g["decode_worst"]))
        lines.append("  fitted: " + ", ".join("%s %g" % kv for kv in g["shipped"].items()))
        lines.append("  a re-fit now %s the shipped values" % (
            "agrees with" if g["agrees"] else "DIFFERS from"))
    lines.append("targets: decode median <= 10%, prefill median <= 15%")
    return "\n".join(lines)


# ---------------------------------------------------------------- TTFT/TPOT of a served model
# AIConfigurator's silicon measurements (data/measurements.py SERVED): vLLM deployments under a
# closed-loop benchmark, simulated as such (served.py). The fit "vllm-2025" (roofline.VLLM_2025):
# the tunables fitted to the mean TPOT of SERVED_TRAIN; the errors reported are on the rest.
SERVED_TRAIN = {("qwen3-32b", "h100-80gb", "bf16"): (2, 8), ("llama-3.1-70b", "h100-80gb", "fp8"): (2, 8)}
SERVED_PER_CLIENT = 2


def served_split():
    """(train, test) of measurements.SERVED."""
    train = [pt for pt in measurements.SERVED if pt[2] in SERVED_TRAIN.get(pt[:2] + (pt[3],), ())]
    return train, [pt for pt in measurements.SERVED if pt not in train]


def served_loop(pt):
    """The closed loop of one measurement, under the shipped vllm-2025 fit (the batches it runs
    do not depend on the fit: served.Loop.reprice)."""
    model, gpu, tp, dtype, prompt, output, concurrency = pt[:7]
    sc = served.scenario({"model": model, "gpu": gpu, "tp": tp, "dtype": dtype,
                          "kv_dtype": "bf16"})
    return served.Loop(sc, concurrency, prompt, output, SERVED_PER_CLIENT), sc


def served_predict(loop, sc, params):
    """(mean TTFT ms, mean TPOT ms) of a recorded loop under other tunables."""
    return loop.reprice(served.deployment_of(sc)(params))


def _served_loss(loops, params):
    s = 0.0
    for pt, loop, sc in loops:
        s += math.log(served_predict(loop, sc, params)[1] / pt[8]) ** 2
    return s / len(loops)


def served_fit(loops, start=START):
    """The coordinate search of fit(), on the TPOT of served measurements."""
    return _search(lambda p: _served_loss(loops, p), start)


def served_errors(loops, params):
    """{group: ([TTFT APE], [TPOT APE])}, groups 'model dtype gpu tpN'."""
    out = {}
    for pt, loop, sc in loops:
        ttft, tpot = served_predict(loop, sc, params)
        g = out.setdefault("%s %s %s tp%d" % (pt[0], pt[3], pt[1], pt[2]), ([], []))
        g[0].append(abs(ttft - pt[7]) / pt[7])
        g[1].append(abs(tpot - pt[8]) / pt[8])
    return out


def _summary(groups):
    ttft = [e for g in groups.values() for e in g[0]]
    tpot = [e for g in groups.values() for e in g[1]]
    return {"points": len(tpot), "ttft_median": statistics.median(ttft), "ttft_worst": max(ttft),
            "tpot_median": statistics.median(tpot), "tpot_worst": max(tpot)}


def served_run(refit=True):
    """The served group as data: the shipped vllm-2025 fit's errors per held-out group, the
    splitwise-2023 fit's on the same points, and whether a re-fit agrees."""
    train, test = served_split()
    test_loops = [(pt,) + served_loop(pt) for pt in test]
    shipped = dict(VLLM_2025)
    out = {"source": measurements.SERVED_SOURCE, "license": measurements.SERVED_LICENSE,
           "train": len(train), "test": len(test), "shipped": shipped}
    groups = served_errors(test_loops, shipped)
    out["groups"] = {g: _summary({g: v}) for g, v in groups.items()}
    out["all"] = _summary(groups)
    out["splitwise"] = _summary(_flat(
        [(pt, loop, sc, SPLITWISE_2023[FIT_OF[pt[1]]]) for pt, loop, sc in test_loops]))
    if refit:
        params, _ = served_fit([(pt,) + served_loop(pt) for pt in train])
        out["refit"] = params
        out["agrees"] = _agrees(params, shipped)
    return out


def _flat(rows):
    """Errors of (point, loop, scenario, params) rows as one group."""
    ttft, tpot = [], []
    for pt, loop, sc, params in rows:
        a, b = served_predict(loop, sc, params)
        ttft.append(abs(a - pt[7]) / pt[7])
        tpot.append(abs(b - pt[8]) / pt[8])
    return {"all": (ttft, tpot)}


def _agrees(params, shipped):
    return all(abs(params[k] - shipped[k]) <= 1e-3 * max(1, abs(shipped[k])) for k in shipped)


def served_report(r):
    lines = ["TTFT/TPOT of a served model: the roofline, simulated as a served vLLM deployment "
             "(closed loop), vs measurements",
             "data: " + r["source"], "      " + r["license"],
             "protocol: vllm-2025 fitted to the mean TPOT of %s (%d points); errors on the other "
             "%d points (other tp, H200: a GPU the fit never saw, Llama-3.1-8B, fp8 Qwen3-32B)" % (
                 ", ".join("%s %s %s tp %s" % (m, d, g, "/".join(map(str, tps)))
                           for (m, g, d), tps in SERVED_TRAIN.items()), r["train"], r["test"])]
    fmt = "  %-34s %3d points  TTFT median %6.1f%%  worst %7.1f%%   TPOT median %5.1f%%  worst %6.1f%%"
    for name, e in r["groups"].items():
        lines.append(fmt % (name, e["points"], 100 * e["ttft_median"], 100 * e["ttft_worst"],
                            100 * e["tpot_median"], 100 * e["tpot_worst"]))
    for name, e in (("all held out, vllm-2025", r["all"]),
                    ("all held out, splitwise-2023", r["splitwise"])):
        lines.append(fmt % (name, e["points"], 100 * e["ttft_median"], 100 * e["ttft_worst"],
                            100 * e["tpot_median"], 100 * e["tpot_worst"]))
    lines.append("  fitted (vllm-2025): " + ", ".join("%s %g" % kv for kv in r["shipped"].items()))
    if "refit" in r:
        lines.append("  a re-fit now %s the shipped values" % (
            "agrees with" if r["agrees"] else "DIFFERS from"))
    lines.append("TTFT: the simulated clients all start at once (the benchmark's protocol beyond "
                 "concurrency, prompt and output is not recorded), so its first requests queue "
                 "behind each other's prompts")
    return "\n".join(lines)
