"""Story mode's steps (py_engine/scenario/presets.py STORY): each is a valid scenario, and what each step's
text tells the reader is what the engine computes for it."""

import re

import pytest

from py_engine import api
from py_engine.app import figures
from py_engine.scenario.presets import story
from py_engine.scenario.prepared import prepare


STORY = story()


def step(title_word):
    return next(s for s in STORY if title_word in s["title"])


def test_every_step_is_a_scenario_with_a_figure_and_its_lanes():
    assert len(STORY) == 10
    for s in STORY:
        prepare(s["scenario"])                          # raises on a bad field
        assert s["highlight"] in figures.FIGURES and s["highlight"] != "story"
        assert s["schedulers"][:2] == ["static", "continuous"]
        assert s.get("focus") in (None, "blocks", *s["schedulers"])
        assert s.get("focus") != "blocks" or "vllm" in s["schedulers"]
        sentences = [x for x in re.split(r"(?<=[.:;])\s+", s["text"]) if x]
        assert 2 <= len(sentences) <= 5 and len(s["text"]) < 420, s["title"]


def _compare(s):
    return api.compare(s["scenario"], schedulers=s["schedulers"])


def test_static_padding_then_continuous_refill():
    c = _compare(step("Static"))
    st, co = c["static"]["metrics"], c["continuous"]["metrics"]
    assert st["shares"]["padding"] > 0.5                     # "the hatched cells"
    assert co["passes"] < st["passes"] / 2                   # "far fewer passes"
    assert c["speedup"]["time"] > 2


def test_equal_lengths_make_continuous_no_faster():
    c = _compare(step("uneven"))
    assert c["speedup"]["time"] == 1.0 and c["speedup"]["passes"] == 1.0


def test_the_prefill_stall_shrinks_with_chunking():
    st = figures.stall(step("prefill")["scenario"])
    assert st["chunked"]["worst"] < st["unchunked"]["worst"] / 2


def test_kv_memory_caps_the_batch():
    s = step("KV memory")
    c = _compare(s)
    kb = c["vllm"]["kv_blocks"]
    slots = s["scenario"]["server"]["slots"]
    samples = kb["samples"]
    passes = c["vllm"]["metrics"]["passes"]
    # weight each sample by the passes it stands for
    ends = samples["pass"][1:] + [passes + 1]
    span = [e - p for p, e in zip(samples["pass"], ends)]
    full = sum(w for w, u in zip(span, samples["used"]) if u >= 0.8 * kb["total"])
    running = sum(w * h for w, h in zip(span, samples["holders"])) / sum(span)
    assert "over 80% full for most of the run" in s["text"] and full > 0.5 * sum(span)
    assert "most slots stay empty" in s["text"] and running < 0.5 * slots
    assert c["vllm"]["metrics"]["makespan"] > c["continuous"]["metrics"]["makespan"]


def test_preemption_frees_blocks_and_recomputes():
    c = _compare(step("Preemption"))
    m = c["vllm"]["metrics"]
    assert m["preemptions"] > 0 and m["recomputed_tokens"] > 0


def test_goodput_peaks_at_the_recommended_setting():
    s = step("goodput")
    values = figures.FIGURES["slots"]["sweep"]["values"]
    r = api.sweep(s["scenario"], "server.slots", values, schedulers=["continuous"])
    rec = r["recommendation"]["continuous"]["value"]
    assert f"max_num_seqs = {rec}" in s["text"]
    goodput = {p["value"]: p["continuous"]["goodput_rps"] for p in r["points"]}
    assert max(goodput, key=goodput.get) == rec
    fails = {p["value"]: p["continuous"]["slo"]["failing"] for p in r["points"]}
    assert "ttft_ms" in fails[min(values)] and "tpot_ms" in fails[max(values)]   # queue / slow passes


def _fleet(s):
    r = api.simulate(s["scenario"])
    sent = [rep["requests"] for rep in r["replicas"]]
    return r, r["metrics"], sent


def test_round_robin_spreads_the_prefixes_thin():
    s = step("round robin")
    r, m, sent = _fleet(s)
    assert "only a third" in s["text"] and 0.25 < m["prefix_hit_rate"] < 0.4
    assert len(set(sent)) == 1                               # dealt out in turn
    assert m["preemptions"] > 0                              # "requests preempted"
    assert "about 8 s" in s["text"] and round(m["ttft"]["p95"] / 1000) == 8
    pool = s["scenario"]["server"]["kv_tokens"]
    prefix = s["scenario"]["workload"]["prefix"]
    assert prefix["groups"] * prefix["tokens"] > pool        # "its pool cannot" hold all five


def test_pure_affinity_piles_the_load():
    s = step("affinity")
    r, m, sent = _fleet(s)
    assert "87%" in s["text"] and f"{m['prefix_hit_rate']:.0%}" == "87%"
    assert "serves 96 of the 160" in s["text"] and max(sent) == 96 and sum(sent) == 160
    assert "another serves none" in s["text"] and min(sent) == 0
    assert round(m["ttft"]["p95"] / 1000) == 8
    assert r["router"]["load_imbalance"] == 96 * 4 / 160


def test_cache_aware_keeps_the_hits_and_the_balance():
    s = step("Cache-aware")
    r, m, sent = _fleet(s)
    assert "88%" in s["text"] and f"{m['prefix_hit_rate']:.0%}" == "88%"
    assert min(sent) > 0                                     # "every replica gets work"
    assert "0.18 s" in s["text"] and round(m["ttft"]["p95"] / 1000, 2) == 0.18
    assert m["slo_attainment"] == 1.0
    rr = _fleet(step("round robin"))[1]
    assert m["prefix_hit_rate"] > 2 * rr["prefix_hit_rate"]
    assert r["router"]["decisions"].keys() <= {"cache_hit", "smallest_tree", "balance"}


@pytest.mark.parametrize("i", range(len(STORY)))
def test_each_step_runs_within_the_page_bounds(i):
    c = _compare(STORY[i])
    assert all(not c[s]["truncated"]["segments"] for s in STORY[i]["schedulers"])
