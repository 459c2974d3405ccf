"""What the page's fleet figure reads of a fleet's result and of schema(): every router's words
cover every reason it gives, its scores say which way wins, the load imbalance and the reasons are
what the requests' replicas say, and the worker's columns carry each replica's passes log typed."""

from array import array

import pytest

import py_engine
from py_engine.analysis.results import columns
from py_engine.api import drain, run_steps
from py_engine.fleet.run import MAX_SCORES
from py_engine.scenario import fields

KINDS = fields.BY_PATH["cluster.router.kind"].choices
SCENARIO = {"scheduler": "vllm", "server": {"kv_tokens": 6000},
            "workload": {"requests": 150, "arrival": {"kind": "poisson", "rate": 40},
                         "prefix": {"kind": "system", "groups": 5, "tokens": 1200}}}


def fleet(kind, replicas=3, **workload):
    sc = {**SCENARIO, "workload": {**SCENARIO["workload"], **workload},
          "cluster": {"replicas": replicas, "router": kind}}
    return py_engine.simulate(sc)


def test_schema_describes_every_router():
    routers = {r["name"]: r for r in py_engine.schema()["routers"]}
    assert set(routers) == set(KINDS)
    for r in routers.values():
        assert r["label"] and r["why"]
        assert (r["score"] is None) == (r["best"] is None)
        assert r["best"] in (None, "lowest", "highest")


@pytest.mark.parametrize("kind", KINDS)
def test_every_reason_has_words_and_the_counters_agree_with_the_requests(kind):
    r = fleet(kind)
    words = next(x for x in py_engine.schema()["routers"] if x["name"] == kind)
    why = words["why"]
    rt = r["router"]
    assert set(rt["decisions"]) <= set(why), (kind, rt["decisions"])
    reasons = rt["reasons"]
    assert len(reasons) == len(r["requests"]) <= MAX_SCORES
    assert {k: reasons.count(k) for k in set(reasons)} == rt["decisions"]
    sent = [sum(1 for q in r["requests"] if q["replica"] == k) for k in range(3)]
    assert sent == [rep["requests"] for rep in r["replicas"]]
    assert rt["load_imbalance"] == max(sent) * 3 / sum(sent)
    assert bool(rt["scores"]) == (words["score"] is not None), kind


def test_reasons_are_kept_for_the_first_requests_only():
    r = py_engine.simulate({"workload": {"requests": MAX_SCORES + 10, "output_mean": 8},
                            "cluster": {"replicas": 2, "router": "least_outstanding"}})
    assert len(r["router"]["reasons"]) == len(r["router"]["scores"]) == MAX_SCORES


def test_the_workers_columns_carry_each_replicas_passes_log_typed():
    sc = {**SCENARIO, "cluster": {"replicas": 2, "router": "cache_aware"}}
    doc = columns(drain(run_steps(sc)))
    rows = py_engine.simulate(sc)
    for typed, plain in zip(doc["replicas"], rows["replicas"]):
        log = typed["passes_log"]
        assert log["$table"] == len(plain["passes_log"]["count"])
        for name, col in log["columns"].items():
            assert isinstance(col, array) and list(col) == plain["passes_log"][name]
