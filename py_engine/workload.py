"""Seeded trace generator (and explicit traces), bit-identical natively and in Pyodide.

A trace is three equal-length integer lists in arrival order: `arrive` (ticks), `prompt` and `out`
(tokens). Request i has id i.

Generator, for n = workload.requests, s = workload.skew, rng = numpy.random.default_rng(seed):

    u_out    = rng.random(n)      # draw 1: output lengths
    u_prompt = rng.random(n)      # draw 2: prompt lengths
    (poisson only) e = rng.exponential(1.0, n)   # draw 3: inter-arrival gaps

    heavy(u) = min(1 / sqrt(1 - u), CAP) / (2 - 1/CAP)       # CAP = 40
    length   = max(1, rint(mean * ((1 - s) + s * heavy(u))))

`1/sqrt(1-u)` with u uniform in [0, 1) is a Pareto(alpha = 2, x_min = 1) variable; truncated at CAP
its mean is exactly 2 - 1/CAP, so heavy() has mean 1 and the mixture keeps the mean (up to rounding)
while s moves weight from the constant part to the heavy tail. skew 0 gives exactly `mean` for every
request (the factor is exactly 1.0). The longest possible request is about
mean * (1 - s + s * CAP / (2 - 1/CAP)) (skew 0.6: ~12.6 x the mean).

Only draws that numpy produces bit-identically on every platform (random, exponential) and only
IEEE-exact operations (+ - * / sqrt, min, rint) are used, so the integers cannot differ by platform.

Arrivals (in ticks; 1 tick = 1e-6 of the cost unit):
- burst: everyone at 0.
- gap(every): request i at rint(i * every * 1e6) ticks.
- poisson(rate req/s): gaps rint(e_i * 1000 / rate * 1e6) ticks (the unit is ms; under the `unit` cost
  one pass counts as 1 ms, so rate is per 1000 passes); the first request arrives at 0.
"""

import numpy as np

from .scenario import TICKS

CAP = 40.0


def heavy(u):
    """Heavy-tailed factor with mean exactly 1 from uniforms u in [0, 1) (vectorised)."""
    x = np.minimum(1.0 / np.sqrt(1.0 - u), CAP)
    return x / (2.0 - 1.0 / CAP)


def lengths(mean, skew, u):
    factor = (1.0 - skew) + skew * heavy(u)
    return np.maximum(1, np.rint(mean * factor)).astype(np.int64)


def generate(workload):
    """Normalised workload dict -> (arrive_ticks, prompt, out) as Python int lists."""
    if workload.get("items") is not None:
        items = workload["items"]
        return ([int(round(it["arrive"] * TICKS)) for it in items],
                [it["prompt"] for it in items], [it["out"] for it in items])
    n, skew = workload["requests"], workload["skew"]
    rng = np.random.default_rng(workload["seed"])
    out = lengths(workload["output_mean"], skew, rng.random(n))
    prompt = lengths(workload["prompt_mean"], skew, rng.random(n))
    arrival = workload["arrival"]
    if arrival["kind"] == "burst":
        arrive = [0] * n
    elif arrival["kind"] == "gap":
        arrive = np.rint(np.arange(n, dtype=np.float64) * (arrival["every"] * TICKS))
        arrive = arrive.astype(np.int64).tolist()
    else:
        gaps = np.rint(rng.exponential(1.0, n) * (1000.0 / arrival["rate"] * TICKS))
        gaps = gaps.astype(np.int64)
        gaps[0] = 0
        arrive = np.cumsum(gaps).tolist()
    return arrive, prompt.tolist(), out.tolist()
