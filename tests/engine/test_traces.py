"""The production traces as workloads (the Azure LLM inference traces 2023, the Mooncake FAST'25
traces): the shipped data is the published files, windows, rate scale, sub-sampling, the Mooncake
hash ids and their block size, and the credit every run of them carries."""

import csv
import datetime
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import py_engine
from py_engine.scenario import fields
from py_engine.scenario.prepared import prepare
from py_engine.workload import traces
from py_engine.workload.blocks import chains
from py_engine.workload.generator import generate
from support.published import AZURE_FIRST, azure_file, mooncake_file

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "traces"     # absent in a fresh clone: those tests skip
FILES = {"azure-code-2023": "AzureLLMInferenceTrace_code.csv",
         "azure-conv-2023": "AzureLLMInferenceTrace_conv.csv"}
# The published Mooncake files (github.com/kvcache-ai/Mooncake, FAST25-release/traces, commit
# 3b5a594): their sha256, and the share of block references an infinite cache reuses.
MOONCAKE = {"mooncake-conv-2025": ("conversation_trace.jsonl", 12_031, 36.64,
                                   "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df"),
            "mooncake-synthetic-2025": ("synthetic_trace.jsonl", 3_993, 63.96,
                                        "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131")}


def published(name):
    rows = list(csv.DictReader((SHARED / FILES[name]).read_text().splitlines()))
    t = [datetime.datetime.strptime(r["TIMESTAMP"][:26], "%Y-%m-%d %H:%M:%S.%f") for r in rows]
    return rows, t


@pytest.mark.skipif(not SHARED.exists(), reason="the published files are beside the project")
@pytest.mark.parametrize("name", FILES)
def test_the_shipped_trace_is_the_published_one(name):
    rows, t = published(name)
    cols = traces.columns(name)
    assert cols["prompt"] == [int(r["ContextTokens"]) for r in rows]
    assert cols["out"] == [int(r["GeneratedTokens"]) for r in rows]
    # 100 ns steps since the first request (the files' 7th decimal; %f reads 6 of them)
    assert all(abs(a / 10 - (x - t[0]).total_seconds() * 1e6) < 1
               for a, x in zip(cols["arrive_100ns"], t))


@pytest.mark.skipif(not SHARED.exists(), reason="the published files are beside the project")
@pytest.mark.parametrize("name", FILES)
def test_the_azure_file_written_back_is_the_published_one_byte_for_byte(name):
    # (tests/support/published.py: the page and the CLI read it as the reader's own file)
    assert azure_file(name).encode() == (SHARED / FILES[name]).read_bytes()
    assert azure_file(name).startswith(AZURE_FIRST[name], len("TIMESTAMP,ContextTokens,"
                                                             "GeneratedTokens\r\n"))


@pytest.mark.parametrize("name", MOONCAKE)
def test_the_shipped_mooncake_trace_is_the_published_file_byte_for_byte(name):
    file, n, _, sha = MOONCAKE[name]
    data = mooncake_file(name)
    assert hashlib.sha256(data).hexdigest() == sha and traces.size(name) == n
    if (SHARED / "mooncake" / file).exists():    # beside the project: the file itself
        assert data == (SHARED / "mooncake" / file).read_bytes()


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


def test_a_mooncake_window_carries_its_hash_ids_at_its_ms_offsets():
    w = {"trace": {"name": "mooncake-conv-2025", "start": 2000, "count": 300, "rate_scale": 4}}
    t = generate(prepare({"workload": w})["workload"])
    cols = traces.columns("mooncake-conv-2025")
    assert t[1] == cols["prompt"][2000:2300] and t[2] == cols["out"][2000:2300]
    assert t.hash_ids == cols["hash_ids"][2000:2300] and t.hash_block == 512
    assert all(len(h) == -(-p // 512) for h, p in zip(t.hash_ids, t[1]))
    # ms since the window's first request, 4 x as dense, in ticks (1e6 a ms: model/cost.py)
    ms = cols["arrive_ms"]
    assert t[0] == [(x - ms[2000]) * 1_000_000 // 4 for x in ms[2000:2300]]
    assert t[0][-1] > 0
    kept = generate(prepare({"workload": {**w, "seed": 5, "trace": {**w["trace"],
                                                                     "keep": 0.25}}})["workload"])
    assert 40 < len(kept[0]) < 110
    rows = iter(zip(t[0], t[1], t[2], t.hash_ids))     # kept: the window's requests, in order
    assert all(row in rows for row in zip(kept[0], kept[1], kept[2], kept.hash_ids))
    t.hash_ids[0].append(-1)                    # a run's lists are its own
    assert cols["hash_ids"][2000][-1] != -1
    plain = generate(prepare({"workload": {"trace": {"name": "azure-code-2023",
                                                     "count": 10}}})["workload"])
    assert plain.hash_ids is None


def test_a_mooncake_trace_is_read_with_its_own_block_size_only():
    ok = {"trace": {"name": "mooncake-synthetic-2025", "count": 10}}
    assert prepare({"workload": {**ok, "hash_block": 512}})["workload"]["hash_block"] == 512
    with pytest.raises(py_engine.ScenarioError) as e:
        prepare({"workload": {**ok, "hash_block": 256}})
    assert e.value.field == "workload.hash_block" and "512" in e.value.message
    assert "mooncake-synthetic-2025" in e.value.message
    # a trace without hash ids has no block size to keep
    prepare({"workload": {"trace": {"name": "azure-code-2023", "count": 10}, "hash_block": 256}})


def test_windows_outside_the_trace_are_refused_with_the_range():
    for name, trace, field, allowed in (
            ("azure-code-2023", {"start": 8819}, "workload.trace.start", "0 to 8818"),
            ("azure-code-2023", {"start": 8000, "count": 1000}, "workload.trace.count",
             "1 to 819"),
            ("mooncake-conv-2025", {"start": 12_031}, "workload.trace.start", "0 to 12030"),
            ("mooncake-synthetic-2025", {"start": 3000, "count": 1000}, "workload.trace.count",
             "1 to 993")):
        with pytest.raises(py_engine.ScenarioError) as e:
            prepare({"workload": {"trace": {"name": name, **trace}}})
        assert e.value.field == field and allowed in e.value.message


@pytest.mark.parametrize("name", traces.NAMES)
def test_every_trace_is_offered_and_its_whole_length_is_a_valid_window(name):
    assert name in fields.BY_PATH["workload.trace.name"].choices
    n = traces.size(name)
    assert fields.BY_PATH["workload.trace.start"].max >= n - 1
    assert fields.BY_PATH["workload.trace.count"].max >= n
    for path in ("workload.trace.start", "workload.trace.count", "workload.trace.rate_scale",
                 "workload.trace.keep"):
        assert name in fields.BY_PATH[path].when["workload.trace.name"]
    assert prepare({"workload": {"trace": {"name": name, "start": n - 1, "count": 1}}})


def test_the_window_maxima_are_the_longest_trace():
    longest = max(traces.size(n) for n in traces.NAMES)
    assert fields.BY_PATH["workload.trace.count"].max == longest
    assert fields.BY_PATH["workload.trace.start"].max == longest - 1


def test_every_run_of_a_trace_carries_its_credit():
    r = py_engine.compare({"workload": {"trace": {"name": "azure-code-2023", "count": 64,
                                                  "rate_scale": 4}}})
    for name in ("static", "continuous"):
        c = r[name]["credit"]
        assert "Microsoft Azure" in c and "CC BY 4.0" in c and "requests 0-63" in c
        assert "x4 as dense" in c
    assert py_engine.simulate({})["credit"] is None


def test_a_mooncake_run_credits_the_paper_the_repository_the_license_and_the_changes():
    r = py_engine.simulate({"workload": {"seed": 7, "trace": {
        "name": "mooncake-synthetic-2025", "start": 10, "count": 64, "rate_scale": 0.5,
        "keep": 0.5}}})
    c = r["credit"]
    for words in ("Mooncake synthetic trace", "Qin et al.", "Mooncake: Trading More Storage for "
                  "Less Computation \u2014 A KVCache-centric Architecture for Serving LLM Chatbot",
                  "USENIX FAST 2025", "github.com/kvcache-ai/Mooncake", "FAST25-release/traces",
                  "commit 3b5a594", "Apache License 2.0", "requests 10-73",
                  "arrivals x0.5 as dense", "0.5 of them kept at random (seed 7)"):
        assert words in c, words
    assert "Microsoft" not in c


def test_the_licenses_travel_with_the_data():
    data = ROOT / "py_engine" / "data"
    assert "Apache License" in (data / "LICENSE-APACHE-2.0.txt").read_text()
    assert "Attribution 4.0 International" in (data / "LICENSE-CC-BY-4.0.txt").read_text()
    if (SHARED / "mooncake").exists():
        assert ((data / "LICENSE-APACHE-2.0.txt").read_bytes()
                == (SHARED / "mooncake" / "LICENSE-APACHE-2.0.txt").read_bytes())


def reused_percent(hash_ids, by_position):
    """Block references an infinite cache serves, over all references, in percent: each distinct
    block is computed once. by_position: a block is its whole prefix chain (vLLM's chained hashes),
    else its id alone."""
    refs, seen = 0, {}
    for ids in hash_ids:
        parent = None
        for h in ids:
            refs += 1
            key = (parent, h) if by_position else h
            parent = seen.setdefault(key, len(seen))
    return 100 * (refs - len(seen)) / refs, len(seen)


@pytest.mark.parametrize("name", MOONCAKE)
def test_an_infinite_cache_reuses_the_published_share_of_blocks(name):
    n, share = MOONCAKE[name][1], MOONCAKE[name][2]
    t = generate(prepare({"workload": {"trace": {"name": name, "count": n}}})["workload"])
    chained, nodes = reused_percent(t.hash_ids, by_position=True)
    by_id, ids = reused_percent(t.hash_ids, by_position=False)
    assert round(chained, 2) == share
    # in these traces an id is one block at one position after one parent: both readings agree
    assert (by_id, ids) == (chained, nodes)
    assert 1 + max(max(c) for c in chains(t)) == nodes    # the engine's trie has those nodes


def test_a_vllm_run_of_a_mooncake_window_hits_the_prefix_cache():
    sc = {"scheduler": "vllm", "workload": {"trace": {"name": "mooncake-conv-2025", "count": 50}},
          "server": {"cost": {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}}}
    assert py_engine.simulate(sc)["metrics"]["prefix_hit_rate"] > 0
    # the same requests without their hash ids share nothing
    t = generate(prepare(sc)["workload"])
    items = [{"arrive": a / 1e6, "prompt": p, "out": o} for a, p, o in zip(*t[:3])]
    alone = py_engine.simulate({**sc, "workload": {"items": items}})["metrics"]
    assert not alone["prefix_hit_rate"]


def test_no_trace_is_decoded_when_the_engine_is_imported():
    # the page's memory snapshot imports every module (tools/memsnap.mjs): the data stays text
    code = ("import gzip, importlib, pkgutil\n"
            "def refuse(*a, **k): raise AssertionError('decoded at import')\n"
            "gzip.decompress = refuse\n"
            "import py_engine\n"
            "for m in pkgutil.walk_packages(py_engine.__path__, 'py_engine.'):\n"
            "    if '.bench' not in m.name and not m.name.endswith('__main__'):\n"
            "        importlib.import_module(m.name)\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
