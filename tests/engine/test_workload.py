"""The trace generator: its documented formula, means kept across skews, arrivals, determinism."""

import json
import math
import random

from py_engine import simulate
from py_engine.scenario import normalize
from py_engine.workload import generate


def test_generator_keeps_the_mean_as_skew_grows():
    for skew in (0.0, 0.3, 0.6, 0.9):
        sc = normalize({"workload": {"skew": skew, "requests": 200_000, "seed": 5}})
        _, prompt, out = generate(sc["workload"])
        assert abs(sum(out) / len(out) / 96 - 1) < 0.02, (skew, sum(out) / len(out))
        assert abs(sum(prompt) / len(prompt) / 200 - 1) < 0.02


def test_generator_follows_its_documented_formula():
    """Recompute the lengths with scalar Python math from the same uniforms (workload docstring)."""
    sc = normalize({"workload": {"seed": 11, "requests": 500, "skew": 0.45}})
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
    sc = normalize({"workload": {"requests": 5000, "arrival": {"kind": "poisson", "rate": 50}}})
    arrive, _, _ = generate(sc["workload"])
    assert arrive[0] == 0 and arrive == sorted(arrive)
    mean_gap_ms = arrive[-1] / 4999 / 1e6
    assert abs(mean_gap_ms / 20.0 - 1) < 0.05  # 50 req/s = one per 20 ms
    sc = normalize({"workload": {"requests": 4, "arrival": {"kind": "gap", "every": 12.5}}})
    assert generate(sc["workload"])[0] == [0, 12_500_000, 25_000_000, 37_500_000]


def test_determinism_same_seed_same_result():
    a = simulate({"workload": {"seed": 3, "arrival": {"kind": "poisson", "rate": 7}}})
    b = simulate({"workload": {"seed": 3, "arrival": {"kind": "poisson", "rate": 7}}})
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    c = simulate({"workload": {"seed": 4, "arrival": {"kind": "poisson", "rate": 7}}})
    assert c["requests"] != a["requests"]
