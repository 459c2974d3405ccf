"""Metric definitions: percentiles by nearest rank, goodput, throughput, pooled TBT."""

import json
import math

import pytest

from py_engine import simulate
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import generate
from references.batching import brute_force


def _nearest_rank(values, p):
    s = sorted(values)
    return s[math.ceil(p / 100 * len(s)) - 1]


def test_metrics_follow_their_definitions():
    sc = {"workload": {"requests": 120, "seed": 9, "arrival": {"kind": "poisson", "rate": 12}},
          "server": {"slots": 6}, "slo": {"ttft_ms": 3000, "tpot_ms": 30}}
    for sched in ("static", "continuous"):
        r = simulate(dict(sc, scheduler=sched))
        m, reqs = r["metrics"], r["requests"]
        assert [q["id"] for q in reqs] == list(range(120))
        for key in ("ttft", "e2e", "tpot"):
            vals = [q[key] for q in reqs if key != "tpot" or q["out"] > 1]
            for p in (50, 95, 99):
                assert m[key]["p%d" % p] == pytest.approx(_nearest_rank(vals, p), rel=1e-12)
            assert m[key]["mean"] == pytest.approx(sum(vals) / len(vals), rel=1e-12)
        for q in reqs:   # tpot runs from the first to the last token (static: not the group end)
            if q["out"] > 1:
                assert q["tpot"] == pytest.approx((q["last_token"] - q["first_token"]) /
                                                  (q["out"] - 1), rel=1e-12)
        good = [q for q in reqs if q["ttft"] <= 3000 + 1e-9 and q["tpot"] <= 30 + 1e-9]
        assert m["slo_attainment"] == len(good) / 120
        assert m["goodput_rps"] == pytest.approx(len(good) / (m["makespan"] / 1000), rel=1e-12)
        assert m["throughput_tok_s"] == pytest.approx(
            sum(q["out"] for q in reqs) / (m["makespan"] / 1000), rel=1e-12)
        assert m["makespan"] == max(q["done"] for q in reqs)
        for q in reqs:
            assert q["e2e"] == pytest.approx(q["done"] - q["arrive"], abs=1e-6)
            assert q["first_token_pass"] <= q["done_pass"]
        # pooled ITL: per-request gaps from the brute force, nearest rank
        norm = prepare(dict(sc, scheduler=sched))
        t = norm.ticks
        arrive, prompt, out = generate(norm["workload"])
        ref = brute_force(sched, arrive, prompt, out, 6, 512,
                          tuple(t))
        gaps = sorted(ref["gaps"].elements())
        for p in (50, 95, 99):
            assert m["itl"]["p%d" % p] == _nearest_rank(gaps, p) / 1e6
        assert m["itl"]["mean"] == pytest.approx(sum(gaps) / len(gaps) / 1e6, rel=1e-12)


def test_goodput_counts_the_end_to_end_limit_when_given():
    sc = {"workload": {"requests": 80, "seed": 4, "arrival": {"kind": "poisson", "rate": 10}},
          "slo": {"ttft_ms": 1e6, "tpot_ms": 1e6}}
    free = simulate(sc)
    assert free["scenario"]["slo"]["e2el_ms"] is None and free["metrics"]["slo_attainment"] == 1.0
    limit = sorted(q["e2e"] for q in free["requests"])[40]
    r = simulate({**sc, "slo": {**sc["slo"], "e2el_ms": limit}})
    assert r["metrics"]["slo_attainment"] == sum(q["e2e"] <= limit for q in r["requests"]) / 80
    assert r["metrics"]["goodput_rps"] < free["metrics"]["goodput_rps"]


def test_itl_and_tpot_null_when_every_request_has_one_token():
    r = simulate({"workload": {"items": [{"arrive": 0, "prompt": 5, "out": 1}] * 3}})
    for key in ("itl", "tpot"):
        assert r["metrics"][key] == {"p50": None, "p95": None, "p99": None, "mean": None}
    assert r["requests"][0]["tpot"] == 0.0
    json.dumps(r, allow_nan=False)


def test_pooled_gap_percentiles_equal_the_expanded_samples():
    """_weighted_pcts (single gaps and lines of growing gaps, the bisection narrowed by bounds
    from the lines' lowest and highest gaps) gives the nearest-rank percentiles of every sample
    written out one by one, on random pools with many ties and many straddling lines."""
    import random
    from py_engine.analysis.metrics import PCTS, _weighted_pcts
    from py_engine.model.cost import TICKS
    from py_engine.sim.exact import SUB
    rng = random.Random(18)
    for trial in range(400):
        wide = trial % 2
        top = 10 ** 6 if wide else 60
        lines = [(rng.randrange(top), rng.randrange(40 * (top if wide else 100)),
                  rng.randrange(1, (top if wide else 5) * 1000), rng.randrange(1, 40),
                  rng.randrange(1, 6)) for _ in range(rng.randrange(0, 50))]
        weights = {rng.randrange(2 * top): rng.randrange(1, 9) for _ in range(rng.randrange(4))}
        samples = [v for v, c in weights.items() for _ in range(c)]
        for K, a, b, n, w in lines:
            samples += [K + -(-(a + b * i) // SUB) for i in range(n)] * w
        if not samples:
            continue
        got = _weighted_pcts(weights, lines)
        for p in PCTS:
            assert got["p%d" % p] == _nearest_rank(samples, p) / TICKS, (trial, p)
