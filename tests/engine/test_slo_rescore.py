"""The main comparison and the fleet's runs asked again with only another SLO are scored from what
their runs kept (analysis/slo_memo.py, api.RUNS), not simulated again, and answer exactly what a
fresh run answers: the same JSON text through the protocol's doors (handle_json: the API's rows;
Job: the page's worker, typed columns and their bytes)."""

import json
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given, settings, strategies as st

import py_engine
from py_engine import api
from py_engine.analysis.slo_memo import RUN_BUDGET, SloMemo
from py_engine.app import protocol
from py_engine.scenario import fields

LOAD = {"requests": 60, "skew": 0.7, "prompt_mean": 400, "output_mean": 80,
        "arrival": {"kind": "poisson", "rate": 15.0}}
SHARED = dict(LOAD, prefix={"kind": "system", "tokens": 256, "groups": 3})
LLAMA = {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}
ROUTERS = fields.BY_PATH["cluster.router.kind"].choices


def _compare(slo):
    """The main comparison: three schedulers, vllm on a tight pool (it preempts)."""
    return [{"method": "compare", "params": {
        "scenario": {"workload": LOAD, "server": {"kv_tokens": 6000}, "slo": slo},
        "schedulers": ["static", "continuous", "vllm"]}}]


def _routers(slo):
    """The fleet figure's runs (web/engine/requests.js fleetRequests): one per router kind."""
    return [{"method": "simulate", "params": {"scenario": {
        "scheduler": "vllm", "workload": SHARED, "server": {"kv_tokens": 8000}, "slo": slo,
        "cluster": {"replicas": 3, "router": {"kind": kind}}}}} for kind in ROUTERS]


def _pooled(slo):
    """A prefill/decode disaggregated fleet."""
    return [{"method": "simulate", "params": {"scenario": {
        "scheduler": "vllm", "workload": LOAD, "slo": slo,
        "server": {"cost": LLAMA, "kv_tokens": "auto", "slots": 32},
        "cluster": {"prefill": {"replicas": 1}, "decode": {"replicas": 2}}}}}]


CASES = [_compare, _routers, _pooled]


def _rows(req):
    return protocol.handle_json(json.dumps(req))


def _columns(req):
    job = protocol.Job(json.dumps(req))
    while (out := job.step()) is None:
        pass
    return out


def _sorted(answer):
    """The JSON text with its keys sorted (and a Job's buffers beside it)."""
    text, bufs = (answer, []) if isinstance(answer, str) else answer
    return json.dumps(json.loads(text), sort_keys=True), bufs


@contextmanager
def _runs(memo=None):
    """A fresh memo (or `memo`), and the number of runs started since (api.run_steps)."""
    saved_memo, real = api.RUNS, api.run_steps
    count = {"runs": 0}

    def counting(*a, **k):
        count["runs"] += 1
        return (yield from real(*a, **k))

    api.RUNS, api.run_steps = memo or SloMemo(RUN_BUDGET), counting
    try:
        yield count
    finally:
        api.RUNS, api.run_steps = saved_memo, real


limit = st.one_of(st.none(), st.sampled_from([50.0, 400.0, 1500.0, 6000.0, 30000.0]))
tpots = st.one_of(st.none(), st.sampled_from([2.0, 10.0, 40.0, 200.0]))
slos = st.fixed_dictionaries({"ttft_ms": limit, "tpot_ms": tpots, "e2el_ms": limit, "attainment": st.sampled_from([0.5, 0.9, 0.99])})


def _latencies(case, slo):
    """Every TTFT, TPOT and E2E latency a request of the case shows (ms), sorted: limits there
    are a request's own latency, where an off-by-one in a limit shows."""
    got = {"ttft": set(), "tpot": set(), "e2e": set()}
    with _runs():
        for req in case(slo):
            res = json.loads(_rows(req))["result"]
            for doc in ([res] if "requests" in res else
                        [d for d in res.values() if "requests" in d]):
                for row in doc["requests"]:
                    for k in got:
                        got[k].add(row[k])
    return {k: sorted(v - {0.0}) for k, v in got.items()}


def _boundary(data, lat):
    """An SLO whose limits are often a request's own latency (else one of `limit`'s)."""
    def one(k, others):
        return data.draw(st.one_of(st.sampled_from(lat[k]), others))
    return {"ttft_ms": one("ttft", limit), "tpot_ms": one("tpot", tpots), "e2el_ms": one("e2e", limit),
            "attainment": data.draw(st.sampled_from([0.5, 0.9, 0.99]))}


@settings(max_examples=24, deadline=None)
@given(case=st.sampled_from(CASES), door=st.sampled_from([_rows, _columns]), first=slos,
       data=st.data())
def test_a_run_scored_again_equals_a_fresh_run(case, door, first, data):
    second = _boundary(data, _latencies(case, first))
    with _runs() as count:
        for req in case(first):
            door(req)
        ran = count["runs"]
        again = [door(req) for req in case(second)]
        assert count["runs"] == ran                  # every answer from the memo
    with _runs():
        fresh = [door(req) for req in case(second)]
    assert [_sorted(a) for a in again] == [_sorted(f) for f in fresh]
    assert again == fresh                            # the page's bytes, key order and all


def test_the_cases_preempt_route_and_pool():
    """What the cases are for: vllm preempts in the comparison, the routers send the same
    requests differently, the P/D fleet's replicas are in two pools."""
    cmp = json.loads(_rows(_compare({})[0]))["result"]
    assert cmp["vllm"]["metrics"]["preemptions"] > 0
    sent = {json.dumps([r["requests"] for r in json.loads(_rows(req))["result"]["replicas"]])
            for req in _routers({})}
    assert len(sent) > 2
    pools = [r["pool"] for r in json.loads(_rows(_pooled({})[0]))["result"]["replicas"]]
    assert pools == ["prefill", "decode", "decode"]


def _refusing(*a, **k):
    raise AssertionError("simulated")
    yield  # unreachable: a generator as run_steps


def test_another_slo_simulates_nothing(monkeypatch):
    monkeypatch.setattr(api, "RUNS", SloMemo(RUN_BUDGET))
    cmp = {"workload": LOAD, "slo": {"ttft_ms": 900.0}}
    fleet = dict(cmp, scheduler="vllm", cluster={"replicas": 2, "router": {"kind": "llm_d"}})
    first = api.compare(cmp), api.simulate(fleet)
    monkeypatch.setattr(api, "run_steps", _refusing)       # from here, a run fails the test
    slo = {"ttft_ms": 150.0, "tpot_ms": 12.0, "attainment": 0.75}
    again = api.compare(dict(cmp, slo=slo)), api.simulate(dict(fleet, slo=slo))
    assert again[0]["continuous"]["scenario"]["slo"]["ttft_ms"] == 150.0
    assert again[1]["metrics"]["slo"]["target"] == 0.75
    assert [d["metrics"]["slo_attainment"] for d in first[1]["replicas"]] != \
        [d["metrics"]["slo_attainment"] for d in again[1]["replicas"]]
    for other in (dict(cmp, workload=dict(LOAD, seed=1)), dict(cmp, server={"slots": 4})):
        try:                                               # anything else than the SLO: a run
            api.compare(other)
        except AssertionError as e:
            assert str(e) == "simulated"
        else:
            raise AssertionError("ran nothing for another scenario")
    monkeypatch.setitem(api.RESULT_CAPS, "requests", 7)    # another document: a run
    try:
        api.simulate(fleet)
    except AssertionError as e:
        assert str(e) == "simulated"
    else:
        raise AssertionError("ran nothing under other result caps")


def test_a_caller_changing_its_answer_keeps_the_memo_whole():
    with _runs() as count:
        sc = {"workload": LOAD, "scheduler": "vllm", "cluster": {"replicas": 2}}
        api.simulate(dict(sc, slo={"ttft_ms": 800.0}))
        a = api.simulate(dict(sc, slo={"ttft_ms": 300.0}))
        a["requests"][0]["ttft"] = -1.0
        a["replicas"][0]["metrics"]["ttft"]["p95"] = -1.0
        a["scenario"]["workload"]["requests"] = -1
        b = api.simulate(dict(sc, slo={"ttft_ms": 300.0}))
        assert count["runs"] == 1
    assert b == api.simulate(dict(sc, slo={"ttft_ms": 300.0}))    # a fresh run (memo restored)
    assert b["requests"][0]["ttft"] >= 0 and b["scenario"]["workload"]["requests"] == 60


def test_the_readers_own_policy_is_always_run():
    code = (Path(py_engine.__file__).parent / "policies" / "examples" / "fcfs.py").read_text()
    sc = {"scheduler": "custom", "custom": {"name": "mine", "code": code},
          "workload": {"requests": 20}}
    with _runs() as count:
        for ttft in (100.0, 200.0):
            api.simulate(dict(sc, slo={"ttft_ms": ttft}))
            api.compare(dict(sc, slo={"ttft_ms": ttft}), ["continuous", "custom"])
        assert count["runs"] == 2 + 4


def test_a_refusal_is_not_run_again_for_another_slo(monkeypatch):
    """The fleet page's one-server comparison of the whole trace is refused by the work cap
    (~11 s in the page), and was refused again, after the same work, at every SLO edit: no SLO
    changes a run, so none changes its refusal."""
    import pytest
    monkeypatch.setattr(api, "RUNS", SloMemo(RUN_BUDGET))
    big = {"scheduler": "vllm", "workload": {"requests": 20_000}, "slo": {"ttft_ms": 900.0},
           "cluster": {"replicas": 2}}
    with pytest.raises(py_engine.ScenarioError) as first:
        api.simulate(big, work_cap=200_000)
    with pytest.raises(py_engine.ScenarioError) as cmp_first:
        api.compare(dict(big, cluster={"replicas": 1}), work_cap=200_000)
    monkeypatch.setattr(api, "run_steps", _refusing)       # from here, a run fails the test
    monkeypatch.setattr(api, "_compare", _refusing)
    slo = {"ttft_ms": 150.0, "tpot_ms": 12.0}
    with pytest.raises(py_engine.ScenarioError) as again:
        api.simulate(dict(big, slo=slo), work_cap=200_000)
    assert again.value.to_dict() == first.value.to_dict()
    assert "work cap of 200,000" in again.value.message
    with pytest.raises(py_engine.ScenarioError) as cmp_again:
        api.compare(dict(big, cluster={"replicas": 1}, slo=slo), work_cap=200_000)
    assert cmp_again.value.to_dict() == cmp_first.value.to_dict()
    with pytest.raises(AssertionError, match="simulated"):     # another cap: a run
        api.simulate(big, work_cap=300_000)
