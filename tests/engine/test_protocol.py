"""protocol.handle_json, the Web Worker's entry point: the same answers as the dict API, as text."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from py_engine.app import protocol

REQUESTS = [
    {"method": "compare", "params": {"scenario": {}}},
    {"method": "simulate", "params": {"scenario": {"scheduler": "vllm",
                                                   "server": {"kv_tokens": 3000}}}},
    {"method": "sweep", "params": {"scenario": {}, "param": "slots", "values": [2, 4],
                                   "schedulers": ["continuous"]}},
    {"method": "schema"},
    {"method": "kv", "params": {}},
    {"method": "simulate", "params": {"scenario": {"server": {"slots": 0}}}},  # ScenarioError
    {"method": "nope"},
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r["method"])
def test_same_text_as_the_dict_api(request_):
    text = protocol.handle_json(json.dumps(request_))
    assert text == json.dumps(protocol.handle(request_), allow_nan=False)


def test_results_that_are_not_plain_json_are_cleaned(monkeypatch):
    odd = {"nan": math.nan, "inf": -math.inf, "np_int": np.int64(7), "np_float": np.float64(0.5),
           "tuple": (1, 2.5), 3: "int key"}
    monkeypatch.setitem(protocol.METHODS, "odd", protocol._now(lambda p: odd))
    out = json.loads(protocol.handle_json('{"method": "odd"}'))
    assert out == {"ok": True, "result": {"nan": None, "inf": None, "np_int": 7, "np_float": 0.5,
                                          "tuple": [1, 2.5], "3": "int key"}}
    assert out == protocol.handle({"method": "odd"})


def test_a_method_that_raises_is_an_engine_error(monkeypatch):
    def boom(params):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setitem(protocol.METHODS, "boom", protocol._now(boom))
    out = json.loads(protocol.handle_json('{"method": "boom"}'))
    assert out["ok"] is False and out["error"]["type"] == "EngineError"
    assert "ZeroDivisionError" in out["error"]["message"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40) | st.just("[" * 5000) | st.just('{"method": "compare", "params": 3}'))
def test_any_text_gets_a_json_answer(text):
    out = json.loads(protocol.handle_json(text))  # never raises, always JSON
    if not out["ok"]:
        err = out["error"]
        assert err["message"] and err["type"] in ("ScenarioError", "EngineError")


def test_a_job_in_slices_gives_the_same_numbers_as_one_call():
    """The worker's door: a compare worked in many small slices returns the result of one call,
    its tables as typed columns."""
    from array import array
    req = {"method": "compare", "params": {"scenario": {"workload": {"requests": 400, "arrival":
                                                                       {"kind": "poisson",
                                                                        "rate": 30}}},
                                           "schedulers": ["static", "continuous", "vllm"]}}
    job = protocol.Job(json.dumps(req), slice_s=1e-6)   # stop at every clock check
    steps = 0
    while (done := job.step()) is None:
        steps += 1
    assert steps > 3, "the job was not sliced"
    text, buffers = done
    got, want = json.loads(text), protocol.handle(req)
    assert got["ok"] and want["ok"]

    def column(ref):
        a = array("B" if ref["type"] == "u8" else "d")
        a.frombytes(buffers[ref["$buf"]])
        return list(a)

    for name in ("static", "continuous", "vllm"):
        g, w = got["result"][name], want["result"][name]
        assert g["metrics"] == w["metrics"] and g["scenario"] == w["scenario"]
        cols = {k: column(v) for k, v in g["requests"]["columns"].items()}
        rows = [{k: cols[k][i] for k in cols} for i in range(g["requests"]["$table"])]
        assert rows == w["requests"]
        log = {k: column(v) for k, v in g["passes_log"]["columns"].items()}
        assert log == w["passes_log"]
        seg = {k: column(v) for k, v in g["segments"]["columns"].items()}
        phases = py_engine_phases()
        assert [[seg["slot"][i], seg["request"][i], phases[seg["phase"][i]], seg["first_pass"][i],
                 seg["last_pass"][i]] for i in range(g["segments"]["$table"])] == w["segments"]
    assert got["result"]["speedup"] == want["result"]["speedup"]


def py_engine_phases():
    from py_engine.sim.records import PHASES
    return PHASES


def progress_of(req, slice_s=1e-6):
    """Work `req` as the worker does, in tiny slices, reading job.progress() after every step
    (the host sends it to the page) -> (the progress documents in order, the response)."""
    job = protocol.Job(json.dumps(req), slice_s=slice_s)
    seen = []
    while (done := job.step()) is None:
        text = job.progress()
        if text is not None:
            seen.append(json.loads(text))
    return seen, json.loads(done[0])


BURST = {"workload": {"requests": 300, "output_mean": 200}}
FLEET = {"workload": {"requests": 300, "output_mean": 200}, "cluster": {"replicas": 3}}
DISAGG = {"workload": {"requests": 200, "output_mean": 100},
          "cluster": {"prefill": {"replicas": 1}, "decode": {"replicas": 2}}}


@pytest.mark.parametrize("method,params,total", [
    ("compare", {"scenario": BURST}, 600),
    ("compare", {"scenario": BURST, "schedulers": ["static", "continuous", "vllm"]}, 900),
    ("simulate", {"scenario": BURST}, 300),
    ("simulate", {"scenario": FLEET}, 300),
    ("simulate", {"scenario": DISAGG}, 200),
    ("sweep", {"scenario": BURST, "param": "slots", "values": [4]}, 600),
    ("plan_point", None, None),
])
def test_a_jobs_progress_counts_requests_up_to_the_total(method, params, total):
    """The progress a long run reports (the page's "N of M requests"): requests finished, from the
    simulator's state, never going back, one total throughout, ending at that total before the
    answer; a compare's lanes run one after the other, so its total is lanes x requests."""
    if method == "plan_point":            # a candidate of the planner: one run of the trace
        sc = {"workload": {"requests": 300, "arrival": {"kind": "poisson", "rate": 5}},
              "server": {"cost": {"kind": "roofline", "model": "llama-3.1-8b",
                                  "gpu": "h100-80gb"}}}
        cands = protocol.handle({"method": "plan_candidates", "params": {"scenario": sc,
                                                                         "gpus": 2}})["result"]
        params = {"scenario": sc, "gpus": 2, "candidate": cands["candidates"][0]}
        total = 300
    seen, response = progress_of({"method": method, "params": params})
    assert response["ok"], response
    assert len({p["done"] for p in seen}) >= 3, "too few distinct counts: %r" % seen[:5]
    assert all(p["total"] == total and p["unit"] == "requests" for p in seen), seen[:3]
    dones = [p["done"] for p in seen]
    assert dones == sorted(dones), "progress went back"
    assert 0 <= dones[0] and dones[-1] == total


def test_the_progress_of_a_compare_is_the_count_of_finished_requests():
    """Not a timer: at every step, done is what the cores have finished (lane i adds i x n)."""
    from py_engine import api
    steps = api.compare_steps(BURST, None, 1e-6)
    seen = []
    while True:
        try:
            seen.append(next(steps))
        except StopIteration as e:
            result = e.value
            break
    n = 300
    lanes = [p.done for p in seen if p is not None]
    assert lanes[-1] == 2 * n
    # the first lane's part of the count ends exactly at n (its last request), then the second's
    assert n in lanes and min(d for d in lanes if d > n) > n
    assert result["continuous"]["metrics"]["passes"] > 0


def test_a_sweep_of_several_points_counts_points():
    seen, response = progress_of({"method": "sweep", "params": {
        "scenario": {"workload": {"requests": 60}}, "param": "requests", "values": [20, 40, 60]}})
    assert response["ok"]
    assert {p["unit"] for p in seen} == {"points"} and {p["total"] for p in seen} == {3}
    dones = [p["done"] for p in seen]
    assert dones == sorted(dones) and dones[-1] == 3


def test_a_check_counts_its_checks_and_quick_methods_say_nothing():
    ids = ["article-skew-zero", "article-one-slot", "article-default", "sarathi-stall-free"]
    seen, response = progress_of({"method": "papers", "params": {"ids": ids}}, slice_s=0.03)
    assert response["ok"]
    n = len(ids)
    assert [p["done"] for p in seen] == list(range(1, n + 1)) and seen[-1]["unit"] == "checks"
    seen, response = progress_of({"method": "schema", "params": {}})
    assert response["ok"] and seen == []
