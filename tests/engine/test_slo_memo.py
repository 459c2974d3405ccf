"""A sweep point asked again with only another SLO is scored from what its runs kept, not run
again (analysis/slo_memo.py), and gives exactly what a fresh run gives."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import py_engine
from py_engine import api
from py_engine.analysis.results import run_metrics
from py_engine.analysis.slo_memo import SloMemo, copied

LOAD = {"requests": 60, "skew": 0.7, "prompt_mean": 400, "output_mean": 80,
        "arrival": {"kind": "poisson", "rate": 15.0}}
# one server under three schedulers (vllm on a tight pool: preemptions), and a fleet
CASES = [({"workload": LOAD, "server": {"kv_tokens": 6000}}, "slots", [2, 8],
          ["static", "continuous", "vllm"]),
         ({"workload": LOAD, "scheduler": "vllm", "cluster": {"replicas": 2}}, "slots", [4],
          ["vllm"]),
         ({"workload": LOAD}, "skew", [0.0, 0.9], None)]
limit = st.one_of(st.none(), st.sampled_from([50.0, 400.0, 1500.0, 6000.0, 30000.0]))
slos = st.fixed_dictionaries({"ttft_ms": limit, "tpot_ms": st.one_of(st.none(), st.sampled_from(
    [2.0, 10.0, 40.0, 200.0])), "e2el_ms": limit, "attainment": st.sampled_from([0.5, 0.9, 0.99])})


def _sweep(case, slo):
    scenario, param, values, schedulers = case
    return json.dumps(api.sweep(dict(scenario, slo=slo), param, values, schedulers))


@pytest.fixture
def runs(monkeypatch):
    """A fresh memo, and the number of lanes run since (api._compare's calls)."""
    monkeypatch.setattr(api, "POINTS", SloMemo())
    count = {"compares": 0}
    real = api._compare

    def counting(*a, **k):
        count["compares"] += 1
        return (yield from real(*a, **k))

    monkeypatch.setattr(api, "_compare", counting)
    return count


@settings(max_examples=12, deadline=None)
@given(case=st.sampled_from(CASES), first=slos, second=slos)
def test_a_point_scored_again_equals_a_fresh_run(case, first, second):
    memo = SloMemo()
    api.POINTS, saved = memo, api.POINTS
    try:
        _sweep(case, first)
        again = _sweep(case, second)           # every point from the memo
        assert len(memo.points) == len(case[2])
        api.POINTS = SloMemo()
        assert again == _sweep(case, second)   # run afresh
    finally:
        api.POINTS = saved


def test_only_the_slo_is_scored_again(runs):
    case = CASES[0]
    _sweep(case, {"ttft_ms": 2000.0})
    assert runs["compares"] == 2
    _sweep(case, {"ttft_ms": 500.0, "tpot_ms": 20.0})          # scored: no run
    assert runs["compares"] == 2
    scenario, param, values, schedulers = case
    other = dict(scenario, slo={"ttft_ms": 500.0}, workload=dict(LOAD, seed=1))
    api.sweep(other, param, values, schedulers)
    assert runs["compares"] == 4                               # another trace: run


def test_the_readers_own_policy_is_always_run(runs):
    code = (Path(py_engine.__file__).parent / "policies" / "examples" / "fcfs.py").read_text()
    sc = {"scheduler": "custom", "custom": {"name": "mine", "code": code},
          "workload": {"requests": 20}}
    for ttft in (100.0, 200.0):
        api.sweep(dict(sc, slo={"ttft_ms": ttft}), "slots", [4], ["custom"])
    assert runs["compares"] == 2


def _point(n):
    """A sweep point of n requests under continuous batching, what its run kept, its scenario."""
    run = api.run_sim({"workload": {"requests": n}, "scheduler": "continuous"})
    cols = {}
    m = run_metrics(run, keep=cols)
    return {"value": n, "continuous": {k: m[k] for k in api.SWEEP_METRICS}}, cols, run.scenario


def test_the_memo_keeps_the_latest_points_within_its_budget():
    pts = {n: _point(n) for n in (60, 30, 40, 200)}
    # a point's size: its columns (4 a request) and every value of its document
    size = {n: 4 * n + copied(pt)[1] for n, (pt, _, _) in pts.items()}
    memo = SloMemo(budget=size[60] + size[30])

    def put(key, n, cols=None):
        pt, kept, sc = pts[n]
        memo.put(key, pt, [(("continuous",), cols or kept)], (), sc)

    put("a", 60)
    put("b", 30)
    assert list(memo.points) == ["a", "b"] and memo.size == size[60] + size[30]
    put("c", 40)                                 # a goes
    assert list(memo.points) == ["b", "c"] and memo.size == size[30] + size[40]
    put("d", 200)                                # too big alone: not kept
    assert list(memo.points) == ["b", "c"] and memo.size == size[30] + size[40]
    put("e", 30, dict(pts[30][1], whole=False))  # a column that did not fit in 8 bytes
    assert "e" not in memo.points


def test_a_place_the_columns_do_not_give_back_is_not_remembered():
    pt, kept, sc = _point(30)
    pt["continuous"]["goodput_rps"] *= 2         # as if something but the SLO's rule set it
    memo = SloMemo()
    memo.put("a", pt, [(("continuous",), kept)], (), sc)
    assert not memo.points


def test_a_scored_point_says_its_value_as_asked_and_keeps_the_memo_whole(runs):
    scenario, param = {"workload": LOAD}, "slots"
    api.sweep(dict(scenario, slo={"ttft_ms": 900.0}), param, [8.0], ["continuous"])
    again = api.sweep(dict(scenario, slo={"ttft_ms": 400.0}), param, [8], ["continuous"])
    assert runs["compares"] == 1 and again["points"][0]["value"] == 8
    assert type(again["points"][0]["value"]) is int
    again["points"][0]["continuous"]["ttft"]["p95"] = -1       # a caller's change stays its own
    third = api.sweep(dict(scenario, slo={"ttft_ms": 400.0}), param, [8], ["continuous"])
    assert third["points"][0]["continuous"]["ttft"]["p95"] > 0
