"""Story mode's steps (py_engine/scenario/presets.py STORY): each is a valid scenario, and what each step's
text tells the reader is what the engine computes for it."""

import re

import pytest

from py_engine import api
from py_engine.app import figures
from py_engine.fleet.routers import REGISTRY
from py_engine.scenario.presets import story
from py_engine.scenario.prepared import prepare


STORY = story()


def step(title_word):
    return next(s for s in STORY if title_word in s["title"])


def test_every_step_is_a_scenario_with_a_figure_and_its_lanes():
    assert len(STORY) == 12
    for s in STORY:
        prepare(s["scenario"])                          # raises on a bad field
        assert s["highlight"] in figures.FIGURES and s["highlight"] != "story"
        assert s["schedulers"][:2] == ["static", "continuous"]
        assert s.get("focus") in (None, "blocks", "routers", *s["schedulers"])
        assert s.get("focus") != "blocks" or "vllm" in s["schedulers"]
        assert s.get("focus") != "routers" or s["highlight"] == "fleet"
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


def _sizing_sweep(s):
    values = figures.FIGURES["slots"]["sweep"]["values"]
    r = api.sweep(s["scenario"], "server.slots", values, schedulers=["continuous"])
    return {p["value"]: p["continuous"] for p in r["points"]}, r


def test_the_sizing_steps_share_one_traffic_and_slo():
    steps = [step("Too few"), step("Too many"), step("Goodput")]
    assert [s["highlight"] for s in steps] == ["slots"] * 3
    bare = [{k: v for k, v in s["scenario"].items() if k != "server"} for s in steps]
    assert bare[0] == bare[1] == bare[2]          # only the slots differ: the sweep is the same


def test_too_few_slots_queue():
    s = step("Too few")
    m = _compare(s)["continuous"]["metrics"]
    assert "On 16 slots" in s["text"] and s["scenario"]["server"]["slots"] == 16
    assert m["slo"]["failing"] == ["ttft_ms"]
    assert "p95 TTFT is 19 s" in s["text"] and round(m["ttft"]["p95"] / 1000) == 19
    assert "only 32% get their first token within 5 s" in s["text"]     # the advice's own share
    assert f"{m['slo']['limits']['ttft_ms']:.0%}" == "32%" and s["scenario"]["slo"]["ttft_ms"] == 5000
    points, _ = _sizing_sweep(s)
    assert all(p["slo"]["failing"] == ["ttft_ms"] for v, p in points.items() if v < 16)   # "fewer slots"


def test_too_many_slots_slow_every_pass():
    s = step("Too many")
    m = _compare(s)["continuous"]["metrics"]
    assert "With 64 slots" in s["text"] and s["scenario"]["server"]["slots"] == 64
    assert m["slo"]["failing"] == ["tpot_ms"]
    assert "p95 TTFT 0.19 s" in s["text"] and round(m["ttft"]["p95"] / 1000, 2) == 0.19
    assert "p95 TPOT is 48.8 ms" in s["text"] and f"{m['tpot']['p95']:.1f}" == "48.8"
    assert "only 78% of requests keep within it" in s["text"]
    assert f"{m['slo']['limits']['tpot_ms']:.0%}" == "78%" and m["slo"]["limits"]["ttft_ms"] == 1.0
    assert "At most 43 run at once" in s["text"] and m["peak_running"] == 43
    points, _ = _sizing_sweep(s)
    for v in (128, 1024):                                    # "change nothing"
        assert points[v]["tpot"] == points[64]["tpot"] and points[v]["ttft"] == points[64]["ttft"]


def test_goodput_peaks_at_the_recommended_setting():
    s = step("Goodput")
    points, r = _sizing_sweep(s)
    rec = r["recommendation"]["continuous"]["value"]
    assert f"max_num_seqs = {rec}" in s["text"] and s["scenario"]["server"]["slots"] == rec
    goodput = {v: p["goodput_rps"] for v, p in points.items()}
    assert max(goodput, key=goodput.get) == rec
    assert [v for v, p in points.items() if p["meets_slo"]] == [rec]     # "only 32 slots reach"
    assert "the 90% target" in s["text"] and prepare(s["scenario"]).doc["slo"]["attainment"] == 0.9
    fails = {v: p["slo"]["failing"] for v, p in points.items()}
    assert "ttft_ms" in fails[min(points)] and "tpot_ms" in fails[max(points)]   # queue / slow passes


# the routers that never read a prefix (their modules: no cache in their rule)
BLIND = ("round_robin", "random", "least_outstanding", "power_of_two", "vllm_dp")


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
    # the router comparison (the step's focus): "only llm-d's full scorers come close; the five
    # blind to prefixes keep at most 57% of hits"
    assert s["focus"] == "routers"
    others = {name: _fleet({**s, "scenario": {**s["scenario"], "cluster": {
        **s["scenario"]["cluster"], "router": name}}})[1] for name in REGISTRY if name != "cache_aware"}
    close = [name for name, o in others.items() if o["ttft"]["p95"] < 2 * m["ttft"]["p95"]]
    assert "only llm-d's full scorers come close" in s["text"] and close == ["llm_d"]
    blind = [others[name] for name in BLIND]
    assert "the five blind to prefixes keep at most 57%" in s["text"] and len(blind) == 5
    assert f'{max(o["prefix_hit_rate"] for o in blind):.0%}' == "57%"
    assert all(o["prefix_hit_rate"] < others["kv_cost"]["prefix_hit_rate"] for o in blind)


@pytest.mark.parametrize("i", range(len(STORY)))
def test_each_step_runs_within_the_page_bounds(i):
    c = _compare(STORY[i])
    assert all(not c[s]["truncated"]["segments"] for s in STORY[i]["schedulers"])
