"""Goodput / SLO sizing: slots and rate sweeps name the largest setting that meets the SLO."""

import json
import math

import pytest

import py_engine
from py_engine.app import cli
from py_engine.model.cost import TICKS
from py_engine.errors import ScenarioError

# 8 and 16 slots queue requests past the TTFT limit; 64 and more stretch TPOT past its limit.
SLO = {"ttft_ms": 2500.0, "tpot_ms": 54.0, "attainment": 0.9}
CHAT = {"scheduler": "vllm",
        "workload": {"requests": 300, "skew": 0.3, "prompt_mean": 2000, "output_mean": 200,
                     "arrival": {"kind": "poisson", "rate": 3.0}},
        "slo": SLO}
SLOTS = [8, 16, 32, 64, 128]


def verdict(requests, slo=SLO):
    """The SLO rule recomputed here from the request records: (meets, failing limits)."""
    n = len(requests)
    need = math.ceil(slo["attainment"] * n - 1e-9)
    within = {"ttft_ms": sum(q["ttft"] <= slo["ttft_ms"] + 1e-9 for q in requests),
              "tpot_ms": sum(q["tpot"] <= slo["tpot_ms"] + 1e-9 for q in requests)}
    every = sum(q["ttft"] <= slo["ttft_ms"] + 1e-9 and q["tpot"] <= slo["tpot_ms"] + 1e-9
                for q in requests)
    return every >= need, sorted(k for k, v in within.items() if v < need)


def test_slots_sweep_names_the_largest_setting_meeting_the_slo_and_why_others_fail():
    r = py_engine.sweep(CHAT, "slots", SLOTS, ["vllm"])
    pts = {pt["value"]: pt["vllm"] for pt in r["points"]}
    assert {k: r["slo"][k] for k in SLO} == SLO and r["slo"]["e2el_ms"] is None
    for v, m in pts.items():
        one = py_engine.simulate({**CHAT, "server": {"slots": v}})
        meets, failing = verdict(one["requests"])
        assert m["meets_slo"] == meets, v
        assert m["slo"]["failing"] == ([] if meets else failing), v
        assert one["metrics"]["ttft"] == m["ttft"] and one["metrics"]["goodput_rps"] == \
            m["goodput_rps"]
    assert r["best"]["vllm"] == r["lowest"]["vllm"] == 32
    assert pts[16]["slo"]["failing"] == ["ttft_ms"]     # too few slots: requests queue
    assert pts[64]["slo"]["failing"] == ["tpot_ms"]     # too many: bigger, slower passes
    # goodput is what the SLO buys: far higher at `best` than with too few slots
    assert pts[32]["goodput_rps"] > 5 * pts[8]["goodput_rps"]


def test_goodput_definition_on_the_slots_sweep():
    # goodput = requests meeting every limit per second of makespan, recomputed here
    res = py_engine.simulate({**CHAT, "server": {"slots": 32}})
    good = sum(1 for q in res["requests"]
               if q["ttft"] <= SLO["ttft_ms"] and q["tpot"] <= SLO["tpot_ms"] + 1e-9)
    m = res["metrics"]
    assert m["slo_attainment"] == good / len(res["requests"])
    assert abs(m["goodput_rps"] - good / (m["makespan"] / 1000.0)) < 1e-9 * max(1, good)


def test_rate_sweep_goodput_vs_load():
    sc = {"scheduler": "vllm", "workload": {"requests": 300}, "server": {"slots": 8},
          "slo": {"ttft_ms": 2500.0, "tpot_ms": 54.0}}
    rates = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    r = py_engine.sweep(sc, "rate", rates, ["vllm"])
    pts = [pt["vllm"] for pt in r["points"]]
    assert [pt["value"] for pt in r["points"]] == rates
    assert r["path"] == "workload.arrival.rate"
    direct = [py_engine.simulate({**sc, "workload": {"requests": 300, "arrival": {
        "kind": "poisson", "rate": x}}})["requests"] for x in rates]
    assert [m["meets_slo"] for m in pts] == [verdict(q, {**sc["slo"], "attainment": 0.9})[0]
                                             for q in direct]
    # Light load meets the SLO, overload does not; best is the highest sustainable rate.
    assert pts[0]["meets_slo"] and not pts[-1]["meets_slo"]
    assert r["best"]["vllm"] == max(v for v, m in zip(rates, pts) if m["meets_slo"])
    # Under light load goodput tracks the offered load; past saturation TTFT explodes.
    assert pts[1]["goodput_rps"] > 1.5 * pts[0]["goodput_rps"]
    assert pts[-1]["ttft"]["p95"] > 10 * pts[0]["ttft"]["p95"]


def test_cli_slots_sweep_table_and_json(capsys):
    args = ["sweep", "--scheduler", "vllm", "--param", "slots", "--values", "16,32,64",
            "--requests", "300", "--skew", "0.3", "--prompt-mean", "2000", "--output-mean", "200",
            "--arrival", "poisson", "--rate", "3", "--ttft-ms", "2500", "--tpot-ms", "54"]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "TTFT p95" in text and "goodput/s" in text
    lines = text.strip().splitlines()
    largest = [x for x in lines if x.startswith("vllm: largest slots meeting the SLO")]
    assert len(largest) == 1 and largest[0].endswith(": 32")
    assert ">= 90% of requests within TTFT <= 2500 and TPOT <= 54" in largest[0]
    assert lines[-1].startswith("vllm: recommended: set max_num_seqs to 32: at 16, ")
    assert "fails: TTFT" in lines[1] and "fails: TPOT" in lines[3] and "meets" in lines[2]
    assert cli.main(args + ["--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["best"] == {"vllm": 32}
    assert [pt["vllm"]["meets_slo"] for pt in r["points"]] == [False, True, False]


def test_the_old_tbt_name_still_reads_as_tpot():
    # slo.tbt_ms was a TPOT limit in goodput but a p95-ITL limit in the sweeps; it is now one
    # limit, slo.tpot_ms, and the old name keeps old links and scripts working.
    assert py_engine.normalize({"slo": {"tbt_ms": 54}})["slo"]["tpot_ms"] == 54.0
    with pytest.raises(ScenarioError) as e:
        py_engine.normalize({"slo": {"tbt_ms": 54, "tpot_ms": 60}})
    assert "slo.tbt_ms" in e.value.message and "slo.tpot_ms" in e.value.message
    args = cli._parser().parse_args(["run", "--tbt-ms", "54"])
    assert py_engine.normalize(cli.scenario_from_args(args))["slo"]["tpot_ms"] == 54.0


def test_slo_values_on_the_line_meet_it():
    # Exactly on the limit counts as meeting it (compared in integer ticks): with attainment 0.9
    # of 300 requests, the 270th smallest TTFT as the limit meets it, one tick less does not.
    res = py_engine.simulate({**CHAT, "server": {"slots": 32}})
    limit = sorted(q["ttft"] for q in res["requests"])[269]
    on = {"ttft_ms": limit, "tpot_ms": None}
    r = py_engine.sweep({**CHAT, "slo": on}, "slots", [32], ["vllm"])
    assert r["points"][0]["vllm"]["meets_slo"] is True
    nudge = {"ttft_ms": limit - 1 / TICKS, "tpot_ms": None}
    r = py_engine.sweep({**CHAT, "slo": nudge}, "slots", [32], ["vllm"])
    assert r["points"][0]["vllm"]["meets_slo"] is False
    assert r["points"][0]["vllm"]["slo"]["failing"] == ["ttft_ms"]


def test_protocol_sweep_point_by_point_gives_the_same_verdicts():
    # The page sweeps one value per call (cancellable); each call carries the verdict and best.
    from py_engine.app import protocol
    full = py_engine.sweep(CHAT, "slots", SLOTS, ["vllm"])
    for pt in full["points"]:
        r = protocol.handle({"method": "sweep", "params": {
            "scenario": CHAT, "param": "slots", "values": [pt["value"]], "schedulers": ["vllm"]}})
        assert r["ok"], r
        one = r["result"]
        assert one["points"][0]["vllm"]["meets_slo"] == pt["vllm"]["meets_slo"]
        assert one["best"]["vllm"] == (pt["value"] if pt["vllm"]["meets_slo"] else None)
        json.dumps(r, allow_nan=False)


def test_the_recommendation_in_words():
    r = py_engine.sweep(CHAT, "slots", SLOTS, ["vllm"])
    rec = r["recommendation"]["vllm"]
    assert rec["value"] == 32 and not rec["overloaded"]
    p95 = r["points"][3]["vllm"]["tpot"]["p95"]
    # why not less (16 queues past the TTFT limit) and where it breaks above (64's TPOT)
    assert rec["text"].startswith("set max_num_seqs to 32: at 16, p95 TTFT is")
    assert "; at 64, p95 TPOT is %.1f ms > 54 ms" % p95 in rec["text"]
    # ten times the load: nothing meets the SLO and the queue only grows
    heavy = {**CHAT, "workload": {**CHAT["workload"], "arrival": {"kind": "poisson",
                                                                   "rate": 30.0}}}
    rec = py_engine.sweep(heavy, "slots", [8, 16, 32], ["vllm"])["recommendation"]["vllm"]
    assert rec["value"] is None and rec["overloaded"]
    assert rec["text"].startswith("no max_num_seqs tried meets the SLO: at 32, p95 TTFT is")
    # throughput still rises at 32: not "exceeds the deployment", a larger setting may serve more
    assert rec["load"].startswith("the load exceeds what any max_num_seqs tried serves: ")
    assert rec["load"].endswith("try larger values") and "deployment" not in rec["load"]
