"""The article's invariants (speedup exactly 1 with one slot or identical lengths; the skew
sweep's shape) and the golden numbers of the default scenario, each explained by the references."""

import pytest
from hypothesis import given, settings, strategies as st

from py_engine import compare, sweep
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import generate
from references.batching import brute_force, static_closed_form


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
    sc = prepare({"workload": {"skew": 0.0, "requests": 100, "output_mean": 77,
                                 "prompt_mean": 333}})
    arrive, prompt, out = generate(sc["workload"])
    assert set(out) == {77} and set(prompt) == {333} and set(arrive) == {0}
    sp = [p["speedup"]["passes"] for p in sweep({}, "skew", [0.0, 0.2, 0.4, 0.6, 0.8])["points"]]
    assert sp[0] == 1.0
    assert all(a < b for a, b in zip(sp, sp[1:])), sp


def test_golden_default_scenario_seed0_explained_by_the_reference():
    """Pinned numbers for the default scenario, and the independent brute force and closed form
    reproduce every one of them from the same trace."""
    r = compare({})
    s, c = r["static"]["metrics"], r["continuous"]["metrics"]
    golden = {"static_passes": 3892, "continuous_passes": 1258, "output_tokens": 7552,
              "static_makespan": 99931.04, "continuous_makespan": 30910.67}
    assert (s["passes"], c["passes"], c["output_tokens"]) == (
        golden["static_passes"], golden["continuous_passes"], golden["output_tokens"])
    assert s["makespan"] == pytest.approx(golden["static_makespan"], abs=1e-6)
    assert c["makespan"] == pytest.approx(golden["continuous_makespan"], abs=1e-6)
    assert round(s["utilization"], 3) == 0.243 and round(c["utilization"], 3) == 0.750
    assert round(r["speedup"]["passes"], 3) == 3.094

    sc = prepare({})
    arrive, prompt, out = generate(sc["workload"])
    t = sc.ticks
    costs = tuple(t)
    bs = brute_force("static", arrive, prompt, out, 8, 512, costs)
    bc = brute_force("continuous", arrive, prompt, out, 8, 512, costs)
    assert (bs["passes"], bc["passes"]) == (3892, 1258)
    assert bs["makespan"] == 99_931_040_000 and bc["makespan"] == 30_910_670_000
    assert bs["tally"]["useful"] == bc["tally"]["useful"] == sum(out) == 7552
    assert bc["tally"]["useful"] / (8 * 1258) == c["utilization"]
    reqs = [{"arrive": 0, "prompt": p, "out": o} for p, o in zip(prompt, out)]
    assert static_closed_form(reqs, 8, 512) == 3892
    # the article's regime (static 0.22 vs continuous 0.69, x3.11 in the article)
    assert 0.2 <= s["utilization"] <= 0.3 and 0.6 <= round(c["utilization"], 2) <= 0.75
    assert 2.5 <= r["speedup"]["passes"] <= 3.6


def test_version_and_exports():
    import py_engine
    assert py_engine.__version__
    for name in ("simulate", "compare", "sweep", "presets", "schema", "ScenarioError"):
        assert hasattr(py_engine, name)

