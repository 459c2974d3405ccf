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
