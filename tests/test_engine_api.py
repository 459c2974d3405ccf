"""Article numbers, invariants, metrics definitions, determinism and golden numbers."""

import doctest
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import py_engine
from py_engine import compare, cost, simulate, sweep
from py_engine.scenario import normalize
from py_engine.workload import generate
from test_engine_reference import brute_force, static_closed_form


# ------------------------------------------------------------------ the article's numbers

def test_step_cost_article_values():
    assert round(cost.step_cost_ms(1, 0), 2) == 22.35       # article rounds to 22.4
    assert round(cost.step_cost_ms(32, 0), 2) == 33.2
    assert round(cost.step_cost_ms(16, 4000), 2) == 267.6   # ~268 ms prefill stall
    assert round(cost.step_cost_ms(16, 0), 2) == 27.6
    t = normalize({})["_ticks"]
    assert (t["fixed"], t["per_row"], t["per_prefill_token"]) == (22_000_000, 350_000, 60_000)
    c = cost.Cost.from_scenario(normalize({}))
    assert [c.pass_ticks(*a) for a in ((1, 0), (32, 0), (16, 4000), (16, 0))] == [
        22_350_000, 33_200_000, 267_600_000, 27_600_000]


def test_prefill_steps_article():
    assert [cost.prefill_steps(p, 512) for p in (0, 1, 511, 512, 513, 1024, 1025, 4000)] == [
        1, 1, 1, 1, 2, 2, 3, 8]


def test_cost_doctests():
    assert doctest.testmod(cost).failed == 0


def test_unit_cost_is_the_step_counter():
    r = simulate({"scheduler": "continuous", "server": {"cost": "unit"}})
    assert r["metrics"]["makespan"] == r["metrics"]["passes"]
    assert r["unit"] == "pass"


# ------------------------------------------------------------------ invariants

@settings(max_examples=60)
@given(st.integers(0, 10_000), st.sampled_from([0.0, 0.3, 0.6, 0.9]), st.integers(1, 40),
       st.sampled_from(["burst", "poisson", "gap"]), st.integers(1, 1024))
def test_one_slot_gives_speedup_exactly_one(seed, skew, n, kind, chunk):
    arrival = {"kind": kind, "rate": 5.0, "every": 30.0}
    arrival = {k: v for k, v in arrival.items() if k == "kind" or
               (kind == "poisson" and k == "rate") or (kind == "gap" and k == "every")}
    r = compare({"workload": {"seed": seed, "skew": skew, "requests": n, "arrival": arrival},
                 "server": {"slots": 1, "chunk": chunk}})
    assert r["speedup"] == {"passes": 1.0, "time": 1.0}


@settings(max_examples=60)
@given(st.integers(1, 80), st.integers(1, 16), st.integers(1, 600), st.integers(1, 300),
       st.integers(1, 1024), st.sampled_from(["article", "unit"]))
def test_identical_lengths_give_speedup_exactly_one(n, slots, prompt, out, chunk, cost_model):
    items = [{"arrive": 0, "prompt": prompt, "out": out}] * n
    r = compare({"workload": {"items": items},
                 "server": {"slots": slots, "chunk": chunk, "cost": cost_model}})
    assert r["speedup"]["passes"] == 1.0
    if n % slots == 0:  # otherwise static pays for the empty rows of its short last group
        assert r["speedup"]["time"] == 1.0


def test_skew_zero_gives_exact_means_and_sweep_shape():
    sc = normalize({"workload": {"skew": 0.0, "requests": 100, "output_mean": 77,
                                 "prompt_mean": 333}})
    arrive, prompt, out = generate(sc["workload"])
    assert set(out) == {77} and set(prompt) == {333} and set(arrive) == {0}
    sp = [p["speedup"]["passes"] for p in sweep({}, "skew", [0.0, 0.2, 0.4, 0.6, 0.8])["points"]]
    assert sp[0] == 1.0
    assert all(a < b for a, b in zip(sp, sp[1:])), sp


def test_generator_keeps_the_mean_as_skew_grows():
    for skew in (0.0, 0.3, 0.6, 0.9):
        sc = normalize({"workload": {"skew": skew, "requests": 200_000, "seed": 5}})
        _, prompt, out = generate(sc["workload"])
        assert abs(np.mean(out) / 96 - 1) < 0.02, (skew, np.mean(out))
        assert abs(np.mean(prompt) / 200 - 1) < 0.02


def test_generator_follows_its_documented_formula():
    """Recompute the lengths with scalar Python math from the same uniforms (workload docstring)."""
    sc = normalize({"workload": {"seed": 11, "requests": 500, "skew": 0.45}})
    _, prompt, out = generate(sc["workload"])
    rng = np.random.default_rng(11)
    draws = [rng.random(500) for _ in range(4)]

    def length(mean, u, w, s=0.45, p=0.15, cap=3.0):
        a = (1 - s) * (1 - s)
        x = 0.0
        if u >= 1 - p:
            v = (u - (1 - p)) / p
            x = min(1 / math.sqrt(1 - v), cap) / (2 - 1 / cap) / p
        return max(1, round(mean * ((a + a * s * (w - 0.5)) + (1 - a) * x)))

    assert out == [length(96, u, w) for u, w in zip(draws[0], draws[1])]
    assert prompt == [length(200, u, w) for u, w in zip(draws[2], draws[3])]


def test_poisson_and_gap_arrivals():
    sc = normalize({"workload": {"requests": 5000, "arrival": {"kind": "poisson", "rate": 50}}})
    arrive, _, _ = generate(sc["workload"])
    assert arrive[0] == 0 and arrive == sorted(arrive)
    mean_gap_ms = arrive[-1] / 4999 / 1e6
    assert abs(mean_gap_ms / 20.0 - 1) < 0.05  # 50 req/s = one per 20 ms
    sc = normalize({"workload": {"requests": 4, "arrival": {"kind": "gap", "every": 12.5}}})
    assert generate(sc["workload"])[0] == [0, 12_500_000, 25_000_000, 37_500_000]


def test_determinism_same_seed_same_result():
    a = simulate({"workload": {"seed": 3, "arrival": {"kind": "poisson", "rate": 7}}})
    b = simulate({"workload": {"seed": 3, "arrival": {"kind": "poisson", "rate": 7}}})
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    c = simulate({"workload": {"seed": 4, "arrival": {"kind": "poisson", "rate": 7}}})
    assert c["requests"] != a["requests"]


# ------------------------------------------------------------------ metric definitions

def _nearest_rank(values, p):
    s = sorted(values)
    return s[math.ceil(p / 100 * len(s)) - 1]


def test_metrics_follow_their_definitions():
    sc = {"workload": {"requests": 120, "seed": 9, "arrival": {"kind": "poisson", "rate": 12}},
          "server": {"slots": 6}, "slo": {"ttft_ms": 3000, "tbt_ms": 30}}
    for sched in ("static", "continuous"):
        r = simulate(dict(sc, scheduler=sched))
        m, reqs = r["metrics"], r["requests"]
        assert [q["id"] for q in reqs] == list(range(120))
        for key in ("ttft", "e2e"):
            vals = [q[key] for q in reqs]
            for p in (50, 95, 99):
                assert m[key]["p%d" % p] == pytest.approx(_nearest_rank(vals, p), rel=1e-12)
        good = [q for q in reqs if q["ttft"] <= 3000 + 1e-9 and q["tpot"] <= 30 + 1e-9]
        assert m["slo_attainment"] == len(good) / 120
        assert m["goodput_rps"] == pytest.approx(len(good) / (m["makespan"] / 1000), rel=1e-12)
        assert m["throughput_tok_s"] == pytest.approx(
            sum(q["out"] for q in reqs) / (m["makespan"] / 1000), rel=1e-12)
        assert m["makespan"] == max(q["done"] for q in reqs)
        for q in reqs:
            assert q["e2e"] == pytest.approx(q["done"] - q["arrive"], abs=1e-6)
            assert q["first_token_pass"] <= q["done_pass"]
        # pooled TBT: per-request gaps from the brute force, nearest rank
        norm = normalize(dict(sc, scheduler=sched))
        t = norm["_ticks"]
        arrive, prompt, out = generate(norm["workload"])
        ref = brute_force(sched, arrive, prompt, out, 6, 512,
                          (t["fixed"], t["per_row"], t["per_prefill_token"]))
        gaps = sorted(ref["gaps"].elements())
        for p in (50, 95, 99):
            assert m["tbt"]["p%d" % p] == _nearest_rank(gaps, p) / 1e6


def test_tbt_null_when_every_request_has_one_token():
    r = simulate({"workload": {"items": [{"arrive": 0, "prompt": 5, "out": 1}] * 3}})
    assert r["metrics"]["tbt"] == {"p50": None, "p95": None, "p99": None}
    assert r["requests"][0]["tpot"] == 0.0
    json.dumps(r, allow_nan=False)


# ------------------------------------------------------------------ golden numbers

def test_golden_default_scenario_seed0_explained_by_the_reference():
    """Pinned numbers for the default scenario, and the independent brute force and closed form
    reproduce every one of them from the same trace."""
    r = compare({})
    s, c = r["static"]["metrics"], r["continuous"]["metrics"]
    golden = {"static_passes": 3597, "continuous_passes": 1057, "output_tokens": 6078,
              "static_makespan": 93713.28, "continuous_makespan": 26334.55}
    assert (s["passes"], c["passes"], c["output_tokens"]) == (
        golden["static_passes"], golden["continuous_passes"], golden["output_tokens"])
    assert s["makespan"] == pytest.approx(golden["static_makespan"], abs=1e-6)
    assert c["makespan"] == pytest.approx(golden["continuous_makespan"], abs=1e-6)
    assert round(s["utilization"], 3) == 0.211 and round(c["utilization"], 3) == 0.719
    assert round(r["speedup"]["passes"], 3) == 3.403

    sc = normalize({})
    arrive, prompt, out = generate(sc["workload"])
    t = sc["_ticks"]
    costs = (t["fixed"], t["per_row"], t["per_prefill_token"])
    bs = brute_force("static", arrive, prompt, out, 8, 512, costs)
    bc = brute_force("continuous", arrive, prompt, out, 8, 512, costs)
    assert (bs["passes"], bc["passes"]) == (3597, 1057)
    assert bs["makespan"] == 93_713_280_000 and bc["makespan"] == 26_334_550_000
    assert bs["tally"]["useful"] == bc["tally"]["useful"] == sum(out) == 6078
    assert bc["tally"]["useful"] / (8 * 1057) == c["utilization"]
    reqs = [{"arrive": 0, "prompt": p, "out": o} for p, o in zip(prompt, out)]
    assert static_closed_form(reqs, 8, 512) == 3597
    # the article's regime (SPEC section 6)
    assert 0.2 <= s["utilization"] <= 0.3 and 0.6 <= c["utilization"] <= 0.75
    assert 2.5 <= r["speedup"]["passes"] <= 3.6


def test_version_and_exports():
    assert py_engine.__version__
    for name in ("simulate", "compare", "sweep", "presets", "schema", "ScenarioError"):
        assert hasattr(py_engine, name)
