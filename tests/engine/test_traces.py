"""The Azure LLM inference traces 2023 as workloads: the published files, windows, rate scale,
sub-sampling and the credit every run of them carries."""

import csv
import datetime
from pathlib import Path

import pytest

import py_engine
from py_engine.workload import traces
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import generate

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces"
FILES = {"azure-code-2023": "AzureLLMInferenceTrace_code.csv",
         "azure-conv-2023": "AzureLLMInferenceTrace_conv.csv"}


def published(name):
    rows = list(csv.DictReader((SHARED / FILES[name]).read_text().splitlines()))
    t = [datetime.datetime.strptime(r["TIMESTAMP"][:26], "%Y-%m-%d %H:%M:%S.%f") for r in rows]
    return rows, t


@pytest.mark.skipif(not SHARED.exists(), reason="the published files are beside the project")
@pytest.mark.parametrize("name", traces.NAMES)
def test_the_shipped_trace_is_the_published_one(name):
    rows, t = published(name)
    cols = traces.columns(name)
    assert cols["prompt"] == [int(r["ContextTokens"]) for r in rows]
    assert cols["out"] == [int(r["GeneratedTokens"]) for r in rows]
    # 100 ns steps since the first request (the files' 7th decimal; %f reads 6 of them)
    assert all(abs(a / 10 - (x - t[0]).total_seconds() * 1e6) < 1
               for a, x in zip(cols["arrive_100ns"], t))


def test_a_window_scaled_and_sampled():
    w = {"trace": {"name": "azure-conv-2023", "start": 100, "count": 500, "rate_scale": 2.0,
                   "keep": 1.0}}
    arrive, prompt, out = generate(prepare({"workload": w})["workload"])[:3]
    cols = traces.columns("azure-conv-2023")
    assert prompt == cols["prompt"][100:600] and out == cols["out"][100:600]
    base = cols["arrive_100ns"][100]
    assert arrive[0] == 0 and arrive[-1] == round((cols["arrive_100ns"][599] - base) * 50)
    half = generate(prepare({"workload": {**w, "seed": 3, "trace": {**w["trace"],
                                                                       "keep": 0.5}}})["workload"])
    assert 200 < len(half[0]) < 300 and set(half[1]) <= set(prompt)


def test_windows_outside_the_trace_are_refused_with_the_range():
    for trace, field, allowed in (({"start": 8819}, "workload.trace.start", "0 to 8818"),
                                  ({"start": 8000, "count": 1000}, "workload.trace.count",
                                   "1 to 819")):
        with pytest.raises(py_engine.ScenarioError) as e:
            prepare({"workload": {"trace": {"name": "azure-code-2023", **trace}}})
        assert e.value.field == field and allowed in e.value.message


def test_every_run_of_a_trace_carries_its_credit():
    r = py_engine.compare({"workload": {"trace": {"name": "azure-code-2023", "count": 64,
                                                  "rate_scale": 4}}})
    for name in ("static", "continuous"):
        c = r[name]["credit"]
        assert "Microsoft Azure" in c and "CC BY 4.0" in c and "requests 0-63" in c
        assert "x4 as dense" in c
    assert py_engine.simulate({})["credit"] is None
