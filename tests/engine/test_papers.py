"""python -m py_engine papers (SPEC §11): every check's verdict computed on the engine, the JSON
shape, every failure explained; the checks can fail (a changed number turns one red)."""

import json
import re

import pytest

from py_engine.app import papers
from py_engine.app.protocol import handle
from py_engine.policies import examples
from support.cli import run_cli

KEYS = {"id", "title", "paper", "source", "workload", "claim", "published", "tolerance", "ours", "pass",
        "detail", "why"}


@pytest.fixture(scope="module")
def rows():
    return papers.run()


def test_at_least_12_checks_10_passing_each_failure_explained(rows):
    assert len(rows) >= 12 and len({r["id"] for r in rows}) == len(rows)
    assert sum(r["pass"] for r in rows) >= 10
    for r in rows:
        assert set(r) == KEYS, r["id"]
        assert r["ours"], r["id"]                  # computed, not a crash
        assert all(isinstance(r[k], str) and r[k] for k in ("source", "workload", "claim",
                                                             "published", "tolerance")), r["id"]
        assert (r["why"] is None) == r["pass"], r["id"]
        if not r["pass"]:
            assert len(r["why"].splitlines()) == 1


def test_the_verdicts_expected_now(rows):
    """What each check says today; a failure listed here is an honest gap its `why` names."""
    got = {r["id"]: r["pass"] for r in rows}
    gaps = {"vllm-fig2", "vllm-fig13", "distserve-fig1"}
    assert {k for k, v in got.items() if not v} <= gaps
    assert got["article-skew-zero"] and got["article-one-slot"] and got["mooncake-reuse"]


def test_the_article_checks_recompute_and_can_fail(monkeypatch):
    assert papers.run_one("mooncake-reuse")["ours"] == "36.64 %"
    # a generator whose skew does nothing: the sweep's shape check turns red
    monkeypatch.setattr(papers.article, "_speedup", lambda sc: 1.0)
    r = papers.run_one("article-skew-sweep")
    assert not r["pass"] and "does not rise" in r["why"]


def test_vtc_check_catches_a_broken_bound(monkeypatch):
    real = examples.sources
    monkeypatch.setattr(examples, "sources", lambda: [
        dict(e, code=e["code"].replace("key=lambda k: (c[k], k))", "key=lambda k: (-c[k], k))"))
        if e["name"] == "vtc" else e for e in real()])
    assert not papers.run_one("vtc-bound")["pass"]


def test_a_crash_is_a_failed_check_with_its_reason(monkeypatch):
    def boom():
        raise RuntimeError("no such model")
    monkeypatch.setitem(papers.BY_ID["mlperf-llama3.1-8b"], "fn", boom)
    r = papers.run_one("mlperf-llama3.1-8b")
    assert r["pass"] is False and r["why"] == "RuntimeError: no such model"


def test_protocol_answers_one_check_at_a_time_and_names_a_bad_id(rows):
    one = handle({"method": "papers", "params": {"ids": ["article-one-slot"]}})
    assert one["ok"] and one["result"] == [r for r in rows if r["id"] == "article-one-slot"]
    bad = handle({"method": "papers", "params": {"ids": ["nope"]}})
    assert not bad["ok"] and bad["error"]["field"] == "ids"
    assert not handle({"method": "papers", "params": {"ids": "nope"}})["ok"]


def test_cli_json_equals_the_api(rows):
    p = run_cli("papers", "--json", "--id", "article-default", "--id", "vtc-bound")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [r for r in rows if r["id"] in ("article-default",
                                                                     "vtc-bound")]
    text = run_cli("papers", "--id", "article-skew-zero")
    assert text.returncode == 0 and "PASS  article-skew-zero" in text.stdout
    bad = run_cli("papers", "--id", "nope")
    assert bad.returncode == 2 and "ids = " in bad.stderr


def test_distserve_runs_vllm_as_its_evaluation_did_and_keeps_the_direction(rows):
    """DistServe's vLLM ran with max_num_seqs 1,024 and max_num_batched_tokens 16,384 (its
    2-start-api-server.py); our default of 8 slots fills the one decode GPU of 2P1D and turns
    the direction round: the check must not fall back to it, and 2P1D beats colocated per GPU.
    Its colocated arm is vLLM 0.1.7's scheduler (the vllm_v017 example), and the reason names
    the rate on DistServe's own profile of that vLLM."""
    sv = papers.distserve.DISTSERVE_SERVER
    assert sv["slots"] == 1024 and sv["max_num_batched_tokens"] == 16_384 and sv["chunk"] == 0
    assert sv["cost"]["gpu_memory_utilization"] == 0.95
    r = next(r for r in rows if r["id"] == "distserve-fig1")
    colocated, p2d1 = map(float, re.findall(r"([\d.]+) rps/GPU", r["ours"]))
    assert p2d1 > colocated, r["ours"]
    assert r["pass"] or "the direction holds" in r["why"], r["why"]
    assert "%%" not in r["detail"] and "vllm_v017" in r["detail"]
    on_profile = float(re.search(r"the same scheduler serves ([\d.]+) rps", r["why"]).group(1))
    assert on_profile < colocated, r["why"]


def test_distserve_profile_cost_is_the_profile_at_512_tokens():
    """The custom cost from DistServe's profile gives the profile's own step times: a decode
    step of b rows over c context tokens, and a lone 512-token prompt's pass."""
    d = papers.distserve
    cost = d.profile_cost(512)
    a, b, c = d.VLLM_DECODE
    rows, ctx = 10, 5000
    ours = cost["fixed_ms"] + cost["per_row_ms"] * rows + cost["per_context_token_ms"] * ctx
    assert abs(ours - (a + b * ctx + c * rows + 2.0 + 0.0001 * ctx)) < 1e-9
    pa, pb, pc = d.VLLM_PREFILL
    lone = (cost["fixed_ms"] + cost["per_row_ms"] + cost["per_context_token_ms"] * 512
            + cost["per_prefill_token_ms"] * 512)
    assert abs(lone - (pa + pb * 512 + pc * 512 ** 2 + 1.0 + 2.0 + 0.0001 * 512)) < 1e-9


def test_distserve_with_8_slots_the_decode_pool_is_the_limit():
    from py_engine import api
    from py_engine.app import plan
    two_one = papers.distserve.DISTSERVE_LAYOUTS[1][1]
    base = {"scheduler": "vllm", "slo": papers.distserve.DISTSERVE_SLO,
            "workload": {"requests": 120, "skew": 0, "prompt_mean": 512, "output_mean": 64,
                         "arrival": {"kind": "poisson", "rate": 8.0}}}
    parts = {}
    for slots in (8, 1024):
        sc = dict(base, server=dict(papers.distserve.DISTSERVE_SERVER, slots=slots))
        m = api.simulate(plan.scenario_of(sc, two_one))["metrics"]
        parts[slots] = {k: v["mean"] for k, v in m["ttft_parts"].items()}
    assert parts[8]["decode_queue"] > 10 * parts[1024]["decode_queue"], parts
    assert max(parts[8], key=parts[8].get) == "decode_queue", parts


def test_distserve_fig1_judges_each_p90_on_its_own():
    """Fig. 1 reads the P90 TTFT and the P90 TPOT each against its limit: ten requests, one
    late in TTFT and another slow in TPOT, meet it (90 % each) though only 80 % meet both."""
    ok = {"ttft": 100.0, "tpot": 20.0}
    reqs = [dict(ok) for _ in range(8)] + [dict(ok, ttft=500.0), dict(ok, tpot=50.0)]
    assert papers.distserve.p90s_within({"requests": reqs})
    assert not papers.distserve.p90s_within({"requests": reqs + [dict(ok, tpot=50.0)]})
