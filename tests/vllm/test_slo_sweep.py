"""Goodput / SLO sizing: slots and rate sweeps name the largest setting that meets the SLO."""

import json

import py_engine
from py_engine import cli
from py_engine.cost import TICKS

SLO = {"ttft_ms": 2500.0, "tbt_ms": 58.6}   # 16 slots keep p95 TBT under it, 32 do not
CHAT = {"scheduler": "vllm",
        "workload": {"requests": 300, "skew": 0.3, "prompt_mean": 2000, "output_mean": 200,
                     "arrival": {"kind": "poisson", "rate": 2.0}},
        "slo": SLO}
SLOTS = [4, 8, 16, 32, 64, 128]


def ok(m):
    """The SLO verdict recomputed here from the raw percentiles."""
    return (m["ttft"]["p95"] <= SLO["ttft_ms"]
            and (m["tbt"]["p95"] is None or m["tbt"]["p95"] <= SLO["tbt_ms"]))


def test_slots_sweep_on_poisson_names_the_largest_setting_meeting_the_slo():
    r = py_engine.sweep(CHAT, "slots", SLOTS, ["vllm"])
    pts = {pt["value"]: pt["vllm"] for pt in r["points"]}
    assert {k: r["slo"][k] for k in SLO} == SLO and r["slo"]["e2el_ms"] is None
    for v, m in pts.items():
        assert m["meets_slo"] == ok(m), v
        # each point is the same as simulating that setting directly
        one = py_engine.simulate({**CHAT, "server": {"slots": v}})["metrics"]
        assert one["ttft"] == m["ttft"] and one["goodput_rps"] == m["goodput_rps"]
    best = r["best"]["vllm"]
    assert best is not None
    assert best == max(v for v, m in pts.items() if ok(m))
    assert r["lowest"]["vllm"] == min(v for v, m in pts.items() if ok(m))
    # p95 TTFT crosses the SLO: too few slots queue requests past it, `best` is under it ...
    assert pts[SLOTS[0]]["ttft"]["p95"] > SLO["ttft_ms"] >= pts[best]["ttft"]["p95"]
    below = [v for v in SLOTS if v < best]
    assert below and pts[below[-1]]["ttft"]["p95"] > SLO["ttft_ms"]
    # ... and the next larger setting breaks the SLO (bigger batches stretch the token gaps).
    above = [v for v in SLOTS if v > best]
    assert above and not ok(pts[above[0]])
    # goodput is what the SLO buys: far higher at `best` than with too few slots
    assert pts[best]["goodput_rps"] > 10 * pts[SLOTS[0]]["goodput_rps"]


def test_goodput_definition_on_the_slots_sweep():
    # goodput = requests meeting TTFT and TPOT objectives per second of makespan, recomputed here
    res = py_engine.simulate({**CHAT, "server": {"slots": 16}})
    good = sum(1 for q in res["requests"]
               if q["ttft"] <= SLO["ttft_ms"] and q["tpot"] <= SLO["tbt_ms"] + 1e-9)
    m = res["metrics"]
    assert m["slo_attainment"] == good / len(res["requests"])
    assert abs(m["goodput_rps"] - good / (m["makespan"] / 1000.0)) < 1e-9 * max(1, good)


def test_rate_sweep_goodput_vs_load():
    sc = {"scheduler": "vllm", "workload": {"requests": 300}, "server": {"slots": 8},
          "slo": SLO}
    rates = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    r = py_engine.sweep(sc, "rate", rates, ["vllm"])
    pts = [pt["vllm"] for pt in r["points"]]
    assert [pt["value"] for pt in r["points"]] == rates
    assert r["path"] == "workload.arrival.rate"
    # Light load meets the SLO, overload does not; best is the highest sustainable rate.
    assert pts[0]["meets_slo"] and not pts[-1]["meets_slo"]
    best = r["best"]["vllm"]
    assert best == max(v for v, m in zip(rates, pts) if ok(m))
    # Under light load goodput tracks the offered load; past saturation TTFT explodes.
    assert pts[1]["goodput_rps"] > 1.5 * pts[0]["goodput_rps"]
    assert pts[-1]["ttft"]["p95"] > 10 * pts[0]["ttft"]["p95"]


def test_cli_slots_sweep_table_and_json(capsys):
    args = ["sweep", "--scheduler", "vllm", "--param", "slots", "--values", "4,16,32",
            "--requests", "300", "--skew", "0.3", "--prompt-mean", "2000", "--output-mean", "200",
            "--arrival", "poisson", "--rate", "2", "--ttft-ms", "2500", "--tbt-ms", "58.6"]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "TTFT p95" in text and "goodput/s" in text
    assert text.strip().splitlines()[-1].endswith(": 16")
    assert cli.main(args + ["--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["best"] == {"vllm": 16}
    assert [pt["vllm"]["meets_slo"] for pt in r["points"]] == [False, True, False]


def test_slo_values_on_the_line_meet_it():
    # Exactly on the objective counts as meeting it (compared in integer ticks).
    res = py_engine.simulate({**CHAT, "server": {"slots": 32}})
    p95 = res["metrics"]["ttft"]["p95"]
    on = {"ttft_ms": p95, "tbt_ms": 1e6}
    r = py_engine.sweep({**CHAT, "slo": on}, "slots", [32], ["vllm"])
    assert r["points"][0]["vllm"]["meets_slo"] is True
    nudge = {"ttft_ms": p95 - 1 / TICKS, "tbt_ms": 1e6}
    r = py_engine.sweep({**CHAT, "slo": nudge}, "slots", [32], ["vllm"])
    assert r["points"][0]["vllm"]["meets_slo"] is False


def test_protocol_sweep_point_by_point_gives_the_same_verdicts():
    # The page sweeps one value per call (cancellable); each call carries the verdict and best.
    from py_engine import protocol
    full = py_engine.sweep(CHAT, "slots", SLOTS, ["vllm"])
    for pt in full["points"]:
        r = protocol.handle({"method": "sweep", "params": {
            "scenario": CHAT, "param": "slots", "values": [pt["value"]], "schedulers": ["vllm"]}})
        assert r["ok"], r
        one = r["result"]
        assert one["points"][0]["vllm"]["meets_slo"] == pt["vllm"]["meets_slo"]
        assert one["best"]["vllm"] == (pt["value"] if pt["vllm"]["meets_slo"] else None)
        json.dumps(r, allow_nan=False)
