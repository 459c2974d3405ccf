"""The trace generator: its documented formula, means kept across skews, arrivals, determinism."""

import json
import math
import random

from py_engine import simulate
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import generate


def test_generator_keeps_the_mean_as_skew_grows():
    for skew in (0.0, 0.3, 0.6, 0.9):
        sc = prepare({"workload": {"skew": skew, "requests": 200_000, "seed": 5}})
        _, prompt, out = generate(sc["workload"])
        assert abs(sum(out) / len(out) / 96 - 1) < 0.02, (skew, sum(out) / len(out))
        assert abs(sum(prompt) / len(prompt) / 200 - 1) < 0.02


def test_generator_follows_its_documented_formula():
    """Recompute the lengths with scalar Python math from the same uniforms (workload docstring)."""
    sc = prepare({"workload": {"seed": 11, "requests": 500, "skew": 0.45}})
    _, prompt, out = generate(sc["workload"])
    rng = random.Random(11)
    draws = [[rng.random() for _ in range(500)] for _ in range(4)]

    def length(mean, u, w, s=0.45, p=0.15, cap=3.0):
        a = (1 - s) * (1 - s)
        x = 0.0
        if u >= 1 - p:
            v = (u - (1 - p)) / p
            x = min(1 / math.sqrt(1 - v), cap) / (2 - 1 / cap) / p
        return max(1, round(mean * ((a + a * s * (w - 0.5)) + (1 - a) * x)))

    assert out == [length(96, u, w) for u, w in zip(draws[0], draws[1])]
    assert prompt == [length(200, u, w) for u, w in zip(draws[2], draws[3])]


def test_poisson_and_gap_arrivals():
    sc = prepare({"workload": {"requests": 5000, "arrival": {"kind": "poisson", "rate": 50}}})
    arrive, _, _ = generate(sc["workload"])
    assert arrive[0] == 0 and arrive == sorted(arrive)
    mean_gap_ms = arrive[-1] / 4999 / 1e6
    assert abs(mean_gap_ms / 20.0 - 1) < 0.05  # 50 req/s = one per 20 ms
    sc = prepare({"workload": {"requests": 4, "arrival": {"kind": "gap", "every": 12.5}}})
    assert generate(sc["workload"])[0] == [0, 12_500_000, 25_000_000, 37_500_000]


def test_determinism_same_seed_same_result():
    a = simulate({"workload": {"seed": 3, "arrival": {"kind": "poisson", "rate": 7}}})
    b = simulate({"workload": {"seed": 3, "arrival": {"kind": "poisson", "rate": 7}}})
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    c = simulate({"workload": {"seed": 4, "arrival": {"kind": "poisson", "rate": 7}}})
    assert c["requests"] != a["requests"]


def test_system_prompt_groups():
    wl = {"requests": 12, "prefix": {"kind": "system", "tokens": 300, "groups": 3}}
    sc = prepare({"workload": wl})
    plain = generate(prepare({"workload": {"requests": 12}})["workload"])
    t = generate(sc["workload"])
    assert t.prefix_id == [i % 3 for i in range(12)] and t.prefix_len == [300] * 12
    assert t[1] == [p + 300 for p in plain[1]] and t[2] == plain[2] and t[0] == plain[0]


def test_conversations_grow_turn_by_turn():
    # 3 conversations of 4 turns, burst: turn t arrives t x think; its prompt is every earlier
    # turn's message and answer plus its own message, all of it the conversation's stream.
    wl = {"requests": 12, "prefix": {"kind": "conversation", "turns": 4, "think": 500.0}}
    t = generate(prepare({"workload": wl})["workload"])
    drawn = generate(prepare({"workload": {"requests": 12}})["workload"])
    assert t.prefix_len == t[1]                      # whole prompts are stream
    assert sorted(t[0]) == t[0]
    for c in range(3):
        ids = [i for i in range(12) if t.prefix_id[i] == c]
        assert [t[0][i] for i in ids] == [k * 500_000_000 for k in range(4)]
        context = 0
        for k, i in enumerate(ids):
            d = 4 * c + k
            assert t[1][i] == context + drawn[1][d] and t[2][i] == drawn[2][d]
            context = t[1][i] + t[2][i]


def test_prefix_cache_hits_the_shared_system_prompt_and_the_last_answer():
    sys_ = simulate({"scheduler": "vllm", "workload": {
        "requests": 32, "arrival": {"kind": "gap", "every": 100},
        "prefix": {"kind": "system", "tokens": 1024, "groups": 2}}})
    m = sys_["metrics"]
    # every request after the first of its group finds (most of) the 1,024 tokens cached
    later = [q for q in sys_["requests"] if q["id"] >= 2]
    assert all(q["cached_tokens"] >= 1024 - 16 for q in later)
    assert m["prefix_cache"]["hits"] == sum(q["cached_tokens"] for q in sys_["requests"])
    assert 0.5 < m["prefix_hit_rate"] < 1
    off = simulate({**sys_["scenario"], "server": {**sys_["scenario"]["server"],
                                                   "enable_prefix_caching": False}})
    assert off["metrics"]["prefix_hit_rate"] is None
    assert sum(q["cached_tokens"] for q in off["requests"]) == 0
    assert off["metrics"]["ttft"]["p50"] > m["ttft"]["p50"]   # the cache saves prefill
    conv = simulate({"scheduler": "vllm", "workload": {
        "requests": 16, "prefix": {"kind": "conversation", "turns": 4, "think": 30000.0}}})
    by_conv = {}
    for q, pid in zip(conv["requests"], generate(prepare(conv["scenario"])["workload"]).prefix_id):
        by_conv.setdefault(pid, []).append(q)
    for turns in by_conv.values():
        for prev, q in zip(turns, turns[1:]):
            # the earlier turn's prompt and answer (but its last token, never fed back) are cached
            assert q["cached_tokens"] == (prev["prompt"] + prev["out"] - 1) // 16 * 16
