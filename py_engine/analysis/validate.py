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
a model the fit never saw. Those fitted values are the deployments' defaults (roofline.FITTED);
`validate` re-fits and says whether they still agree.
"""

import math
import statistics

from ..data import measurements
from ..model.roofline import FITTED, TUNABLE, Deployment
from ..sim.exact import SUB, floor_sum

TRAIN_TP = (2, 8)             # Llama-2-70B at these tp: the fit; everything else: the test
BOUNDS = {"flops_eff": (0.05, 1.0), "attn_eff": (0.01, 1.0), "bw_eff": (0.1, 1.0),
          "link_eff": (0.05, 1.0), "overhead_ms": (0.0, 60.0), "layer_us": (0.0, 500.0),
          "row_us": (0.0, 2000.0), "allreduce_us": (0.0, 500.0)}
assert set(BOUNDS) == set(TUNABLE)
# where the fit starts (the search is deterministic: from here it finds roofline.FITTED)
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
    """Coordinate search of the tunables within BOUNDS, halving the steps: deterministic."""
    p = dict(start)
    best = _loss(points, p)
    step = {k: (hi - lo) / 4 for k, (lo, hi) in BOUNDS.items()}
    while max(step[k] / (BOUNDS[k][1] - BOUNDS[k][0]) for k in step) >= 1e-4:
        improved = False
        for k, (lo, hi) in BOUNDS.items():
            for sign in (1, -1):
                q = dict(p)
                q[k] = round(min(hi, max(lo, p[k] + sign * step[k])), 6)
                if q[k] != p[k]:
                    loss = _loss(points, q)
                    if loss < best:
                        best, p, improved = loss, q, True
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
        shipped = FITTED[gpu]
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
