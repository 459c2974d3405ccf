"""The columnar fast paths of the generator and the metrics, pinned to their straightforward
definitions (per-item Python loops, as the code read before it went columnar) on random inputs:
every number must be identical, not close."""

import math
import random
from array import array
from bisect import bisect_right
from types import SimpleNamespace

import pytest

from py_engine.analysis import metrics
from py_engine.errors import ScenarioError
from py_engine.model.cost import TICKS, to_ticks
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import P_LONG, factor, generate, lengths


# ---- the generator


def _ref_lengths(mean, skew, us, ws):
    return [max(1, round(mean * factor(skew, u, w))) for u, w in zip(us, ws)]


def _ref_generate(workload):
    """The generator as per-request loops (the draws and operations of the module docstring)."""
    n, skew = workload["requests"], workload["skew"]
    rng = random.Random(workload["seed"])
    rnd = rng.random
    u_out, w_out = [rnd() for _ in range(n)], [rnd() for _ in range(n)]
    u_prompt, w_prompt = [rnd() for _ in range(n)], [rnd() for _ in range(n)]
    out = _ref_lengths(workload["output_mean"], skew, u_out, w_out)
    prompt = _ref_lengths(workload["prompt_mean"], skew, u_prompt, w_prompt)
    arrival = workload["arrival"]
    if arrival["kind"] == "burst":
        arrive = [0] * n
    elif arrival["kind"] == "gap":
        step = arrival["every"] * TICKS
        arrive = [round(i * step) for i in range(n)]
    else:
        scale = 1000.0 / arrival["rate"] * TICKS
        t, arrive = 0, []
        for i in range(n):
            gap = round(rng.expovariate(1.0) * scale)
            t += 0 if i == 0 else gap
            arrive.append(t)
    prefix = workload["prefix"]
    if prefix["kind"] == "none":
        return arrive, prompt, out, None, None
    if prefix["kind"] == "system":
        g, tokens = prefix["groups"], prefix["tokens"]
        return arrive, [p + tokens for p in prompt], out, [i % g for i in range(n)], [tokens] * n
    turns, think = prefix["turns"], to_ticks(prefix["think"])
    rows = []
    for c in range(0, n, turns):
        context = 0
        for i in range(c, min(c + turns, n)):
            p = context + prompt[i]
            rows.append((arrive[c] + (i - c) * think, p, out[i], c // turns))
            context = p + out[i]
    rows.sort(key=lambda r: r[0])
    return ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
            [r[3] for r in rows], [r[1] for r in rows])


def test_lengths_equal_factor_draw_by_draw():
    rng = random.Random(1)
    edge = [0.0, 1.0 - P_LONG, math.nextafter(1.0 - P_LONG, 0.0), math.nextafter(1.0 - P_LONG, 1.0),
            0.5, 0.999, 0.9999999]
    for trial in range(60):
        n = rng.choice([0, 1, 2, 63, 500, 3000])
        us = [rng.random() for _ in range(n)] + edge
        ws = [rng.random() for _ in range(n)] + [0.0, 0.5, 0.999, 0.25, 1e-9, 0.75, 0.3]
        rng.shuffle(us)
        skew = rng.choice([0.0, 0.95, 0.6, 0, 1, rng.random()])
        mean = rng.choice([1, 2, 3, 96, 200, 100_000, rng.randint(1, 5000), 7.5])
        assert lengths(mean, skew, array("d", us), array("d", ws)) == _ref_lengths(mean, skew, us, ws)
        assert lengths(mean, skew, us, ws) == _ref_lengths(mean, skew, us, ws)


def test_lengths_raise_as_factor_does_at_the_top_uniform():
    u = math.nextafter(1.0, 0.0)         # the largest draw: v may round to >= 1
    try:
        ref = _ref_lengths(96, 0.6, [u], [0.5])
    except ValueError:
        with pytest.raises(ValueError):
            lengths(96, 0.6, [u], [0.5])
    else:
        assert lengths(96, 0.6, [u], [0.5]) == ref


ARRIVALS = [{"kind": "burst"}, {"kind": "gap", "every": 35.0}, {"kind": "gap", "every": 0.37},
            {"kind": "gap", "every": 0.0}, {"kind": "poisson", "rate": 4.0},
            {"kind": "poisson", "rate": 123.4}]
PREFIXES = [{"kind": "none"}, {"kind": "system", "groups": 3, "tokens": 100},
            {"kind": "conversation", "turns": 4, "think": 2000.0},
            {"kind": "conversation", "turns": 3, "think": 0.5},
            {"kind": "conversation", "turns": 1, "think": 0.0}]


def test_generate_equals_the_per_request_loops():
    rng = random.Random(2)
    for arrival in ARRIVALS:
        for prefix in PREFIXES:
            for _ in range(3):
                wl = {"requests": rng.choice([1, 2, 5, 64, 777]), "seed": rng.randrange(2**32),
                      "skew": rng.choice([0.0, 0.6, 0.95, round(rng.random() * 0.95, 3)]),
                      "output_mean": rng.choice([1, 2, 96, 1000]),
                      "prompt_mean": rng.choice([1, 200, 4000]), "arrival": arrival,
                      "prefix": prefix}
                w = prepare({"workload": wl})["workload"]
                t = generate(w)
                got = (t[0], t[1], t[2], t.prefix_id, t.prefix_len)
                assert got == _ref_generate(w), wl
                assert all(type(c) is list for c in got if c is not None)


def test_generate_raw_workload_with_int_fields():
    # callers may pass un-normalised numbers (ints for floats): the same integers come out
    for w in [{"requests": 300, "seed": 3, "skew": 0, "output_mean": 10, "prompt_mean": 20,
               "arrival": {"kind": "gap", "every": 2}, "prefix": {"kind": "none"}},
              {"requests": 300, "seed": 3, "skew": 0.5, "output_mean": 10.0, "prompt_mean": 20,
               "arrival": {"kind": "poisson", "rate": 3}, "prefix": {"kind": "none"}}]:
        t = generate(w)
        assert (t[0], t[1], t[2], t.prefix_id, t.prefix_len) == _ref_generate(w)


def test_generate_still_bounds_the_last_arrival():
    w = prepare({"workload": {"requests": 3000, "arrival": {"kind": "gap", "every": 1e6}}})
    with pytest.raises(ScenarioError) as e:
        generate(w["workload"])
    assert e.value.field == "workload.arrival.every"


# ---- the metrics


def _rank(p, n):
    """ceil(p / 100 * n), exactly (in integers: p / 100 as a float is not)."""
    return max(1, -(-p * n // 100))


def _ref_pcts(vals):
    if not vals:
        return {"p50": None, "p95": None, "p99": None, "mean": None}
    s = sorted(vals)
    out = {"p%d" % p: s[_rank(p, len(s)) - 1] / TICKS for p in (50, 95, 99)}
    out["mean"] = math.fsum(s) / len(s) / TICKS
    return out


def _nasty_ints(rng, n):
    kind = rng.randrange(5)
    if kind == 0:
        return [rng.randrange(10**6) for _ in range(n)]
    if kind == 1:
        return [rng.randrange(-2**53, 2**53 + 1) for _ in range(n)]
    if kind == 2:       # beyond 2^53: fsum's own rounding of each sample must be kept
        return [rng.randrange(2**53 - 5, 2**60) for _ in range(n)]
    if kind == 3:
        return [rng.choice([0, 1, 2**53, -2**53, 2**53 + 1]) for _ in range(n)]
    return [rng.randrange(10**14, 10**15) for _ in range(n)]


def test_percentiles_equal_the_sort_based_nearest_rank():
    rng = random.Random(3)
    for _ in range(300):
        n = rng.choice([0, 1, 2, 3, 19, 20, 21, 99, 100, 101, 1000])
        ints = _nasty_ints(rng, n)
        assert metrics.percentiles(ints) == _ref_pcts(ints)
        assert metrics._sorted_pcts(sorted(ints), ints=True) == _ref_pcts(ints)
        floats = [rng.random() * 10 ** rng.randint(-3, 12) for _ in range(n)]
        assert metrics.percentiles(floats) == _ref_pcts(floats)
        assert metrics._sorted_pcts(sorted(floats)) == _ref_pcts(floats)
        mixed = ints + floats
        assert metrics.percentiles(mixed) == _ref_pcts(mixed)


def test_nearest_rank_is_the_ceil_rank():
    rng = random.Random(4)
    for _ in range(200):
        s = sorted(rng.randrange(100) for _ in range(rng.randint(1, 300)))
        for p in range(1, 101):
            assert metrics.nearest_rank(s, p) == s[_rank(p, len(s)) - 1]


def test_count_all_equals_a_per_request_loop():
    rng = random.Random(5)
    for _ in range(300):
        n = rng.choice([1, 2, 7, 8, 9, 100, 1000])
        k = rng.randint(0, 3)
        bias = rng.random()
        masks = [bytearray(int(rng.random() < bias) for _ in range(n)) for _ in range(k)]
        want = sum(all(m[i] for m in masks) for i in range(n))
        assert metrics._count_all(masks, n) == want


def _ref_peak(arrive, done):
    gone = sorted(done)
    return max((i + 1 - bisect_right(gone, a) for i, a in enumerate(arrive)), default=0)


def test_peak_in_flight_equals_its_definition():
    rng = random.Random(6)
    for trial in range(400):
        n = rng.choice([0, 1, 2, 63, 64, 65, 127, 128, 129, 500, 2000])
        kind = rng.randrange(5)
        if kind == 0:
            arrive = [rng.randrange(3)] * n                                   # one time
        elif kind == 1:
            arrive = sorted(rng.randrange(max(1, n // rng.choice([1, 5, 50]))) for _ in range(n))
        elif kind == 2:
            arrive = [rng.randrange(10**6) for _ in range(n)]                 # not in order
        else:
            arrive = sorted(rng.randrange(10**9) for _ in range(n))
        # done after arrival by a service time: short (a steady state), growing (an overload),
        # or zero (done on the tick it arrives)
        grow = rng.choice([0, 1, 50, 10**4])
        done = [a + rng.choice([0, rng.randrange(1, 10**6)]) + grow * i
                for i, a in enumerate(arrive)]
        if rng.random() < 0.1:
            done = [d - 10**7 for d in done]    # done before arrival: the formula still holds
        assert metrics.peak_in_flight(arrive, done) == _ref_peak(arrive, done)
        assert metrics.peak_in_flight(arrive, array("q", done)) == _ref_peak(arrive, done)


def _fake_sim(rng, n):
    arrive = sorted(rng.choice([0, rng.randrange(10**9)]) for _ in range(n))
    if rng.random() < 0.3:
        arrive = [0] * n
    out = [rng.choice([1, 1, 2, rng.randint(1, 500)]) for _ in range(n)]
    admit = [a + rng.randrange(10**7) for a in arrive]
    first = [t + rng.randrange(1, 10**6) for t in admit]
    last = [f + (o - 1) * rng.randrange(0, 10**5) for f, o in zip(first, out)]
    done = [lt + rng.choice([0, 0, rng.randrange(10**6)]) for lt in last]
    q = lambda xs: array("q", xs)  # noqa: E731
    return SimpleNamespace(
        n=n, slots=8, passes=1000, arrive=arrive, prompt=[rng.randint(1, 999) for _ in range(n)],
        out=out, first_tick=q(first), done_tick=q(done), last_tick=q(last), admit_tick=q(admit),
        t_rows=5000, t_useful=3000, t_prefill=1000, t_pad=500, peak_in_slot=8,
        preemptions=q([0] * n), kv_peak=10, rec=SimpleNamespace(gap_weights={5: 2}, gap_lines=[], gap_lines_sum=0))


class _Scenario(dict):
    """What compute() reads of a prepared scenario: its fields, and the resolved KV pool."""
    kv_pool = None


def _ref_slo(sim, slo):
    lim = {k: None if slo[k] is None else to_ticks(slo[k]) for k in metrics.LIMITS}
    lt, lp, le = lim["ttft_ms"], lim["tpot_ms"], lim["e2el_ms"]
    ok_t = ok_p = ok_e = good = 0
    for a, f, lt_, d, o in zip(sim.arrive, sim.first_tick, sim.last_tick, sim.done_tick, sim.out):
        x = lt is None or f - a <= lt
        y = lp is None or lt_ - f <= lp * (o - 1)
        z = le is None or d - a <= le
        ok_t += x
        ok_p += y
        ok_e += z
        good += x and y and z
    return ({"ttft_ms": None if lt is None else ok_t, "tpot_ms": None if lp is None else ok_p,
             "e2el_ms": None if le is None else ok_e, "all": good})


def test_compute_equals_the_per_request_loops():
    rng = random.Random(7)
    for trial in range(150):
        n = rng.choice([1, 2, 3, 50, 64, 65, 400])
        sim = _fake_sim(rng, n)
        slo = {"ttft_ms": rng.choice([None, 0.0, 1.0, 5.0, 1e6]),
               "tpot_ms": rng.choice([None, 0.0, 0.01, 0.05, 1e6]),
               "e2el_ms": rng.choice([None, 0.0, 5.0, 20.0, 1e6]),
               "attainment": rng.choice([0.5, 0.9, 1.0])}
        m = metrics.compute(sim, _Scenario(slo=slo, server={"cost": "article"}))
        ttft = [f - a for f, a in zip(sim.first_tick, sim.arrive)]
        e2e = [d - a for d, a in zip(sim.done_tick, sim.arrive)]
        tpot = [(lt - f) / (o - 1) for f, lt, o in zip(sim.first_tick, sim.last_tick, sim.out)
                if o > 1]
        assert m["ttft"] == _ref_pcts(ttft)
        assert m["e2e"] == _ref_pcts(e2e)
        assert m["tpot"] == _ref_pcts(tpot)
        counts = _ref_slo(sim, slo)
        assert m["slo_attainment"] == counts["all"] / n
        seconds = max(sim.done_tick) / TICKS / 1000.0
        assert m["goodput_rps"] == counts["all"] / seconds
        want = metrics.slo_verdict(counts, n, slo, {"ttft_ms": m["ttft"]["p95"],
                                                    "tpot_ms": m["tpot"]["p95"],
                                                    "e2el_ms": m["e2e"]["p95"]})
        assert m["slo"] == want
        assert m["peak_concurrency"] == _ref_peak(sim.arrive, sim.done_tick)
        last_arrival = max(sim.arrive)
        assert m["backlog"] == (sum(1 for t in sim.admit_tick if t > last_arrival)
                                if last_arrival > 0 else 0)
