"""Prefill/decode disaggregation (SPEC §9): the TTFT parts add up, the link is at least bytes /
bandwidth + latency and first in first out, the prefill pool is the single server of its
requests with one output token, and decode replicas that never prefill keep ITL low."""

import json
import math
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

import py_engine
from py_engine.api import drain, fleet_steps
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import generate

LLAMA = {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}


def scenario(scheduler="vllm", prefill=1, decode=1, **cluster):
    return {"scheduler": scheduler,
            "workload": {"requests": 150, "arrival": {"kind": "poisson", "rate": 5},
                         "prompt_mean": 3000, "output_mean": 150, "skew": 0.3},
            "server": {"cost": LLAMA, "kv_tokens": "auto", "slots": 64,
                       "max_num_batched_tokens": 8192},
            "cluster": dict({"prefill": {"replicas": prefill}, "decode": {"replicas": decode}},
                            **cluster)}


def finished(sc):
    s = prepare(sc)
    return s, drain(fleet_steps(s, generate(s["workload"]), None, None))


@pytest.mark.parametrize("scheduler", ["static", "continuous", "vllm"])
def test_ttft_parts_add_up_to_the_ttft_exactly_in_ticks(scheduler):
    sc = scenario(scheduler, 2, 2)
    _, run = finished(sc)
    ticks = run.ttft_parts()
    sim = run.sim
    for g, parts in enumerate(ticks):
        assert all(p >= 0 for p in parts), (g, parts)
        assert sum(parts) == sim.first_tick[g] - sim.arrive[g]
    r = json.loads(json.dumps(py_engine.simulate(sc)))      # as a client reads the JSON
    assert len(r["requests"]) == len(ticks)
    for q, exact in zip(r["requests"], ticks):
        parts = q["ttft_parts"]
        assert list(parts) == ["prefill_queue", "prefill", "transfer", "decode_queue",
                               "first_decode"]
        # exactly, as a client adds them (in order, as floats): SPEC 9
        assert sum(parts.values()) == q["ttft"], (q["id"], parts, q["ttft"])
        for value, t in zip(parts.values(), exact):      # each its own, to ulps of the TTFT
            assert value >= 0 and abs(value - t / 1e6) <= 4 * math.ulp(q["ttft"]), (value, t)


def test_the_link_takes_at_least_bytes_over_bandwidth_plus_latency_and_queues_in_order():
    sc = scenario("vllm", 1, 2, transfer={"gb_s": 5, "latency_ms": 0.4})
    s, run = finished(sc)
    d = run.d
    prompt = generate(s["workload"])[1]
    per_token = 131_072     # Llama-3.1-8B in bf16: 32 layers x 8 KV heads x 128 x (K, V) x 2 B
    prev_end = 0
    order = sorted(range(len(prompt)), key=lambda g: (d.link_start[g], g))
    for g in order:
        floor_ticks = prompt[g] * per_token / 5 + 0.4e6
        assert d.link_end[g] - d.link_start[g] >= floor_ticks - 1
        assert d.link_start[g] >= run.sim.p_first[g]           # after its prefill
        assert d.link_start[g] >= prev_end                      # one transfer at a time
        prev_end = d.link_end[g]
    waited = sum(1 for g in order if d.link_start[g] > run.sim.p_first[g])
    assert waited > 0        # at 5 GB/s (~80 ms a prompt) some transfers queue


def test_the_prefill_pool_is_the_single_server_of_one_token_requests():
    """One prefill replica sees every request with out = 1: its records are that run's."""
    sc = scenario("vllm", 1, 1)
    s, run = finished(sc)
    trace = generate(s["workload"])
    items = [{"arrive": trace[0][i] / 1e6, "prompt": trace[1][i], "out": 1}
             for i in range(len(trace[0]))]
    alone = py_engine.simulate({"scheduler": "vllm", "server": sc["server"],
                                "workload": {"items": items}})
    pre = run.d.pools["prefill"].replicas[0].sim
    for i, q in enumerate(alone["requests"]):
        assert pre.first_tick[i] / 1e6 == pytest.approx(q["first_token"], abs=1e-9)
        assert pre.admit_tick[i] / 1e6 == pytest.approx(q["admit"], abs=1e-9)


def test_decode_replicas_that_never_prefill_keep_itl_p99_below_a_colocated_fleets():
    """Long prompts: in a colocated fleet a decode step waits behind a prefill chunk."""
    pd = py_engine.simulate(scenario("vllm", 1, 1))["metrics"]
    co = py_engine.simulate(dict(scenario("vllm"), cluster={"replicas": 2}))["metrics"]
    assert pd["gpus"] == co["gpus"] == 2
    assert pd["itl"]["p99"] < co["itl"]["p99"] / 2, (pd["itl"], co["itl"])
    assert pd["goodput_per_gpu"] == pd["goodput_rps"] / 2


def test_pools_take_their_own_servers_and_count_their_gpus():
    sc = scenario("vllm", 1, 2)
    sc["cluster"]["prefill"]["server"] = {"cost": {"tp": 2}}
    r = py_engine.simulate(sc)
    assert r["metrics"]["gpus"] == 1 * 2 + 2 * 1
    pools = [rep["pool"] for rep in r["replicas"]]
    assert pools == ["prefill", "decode", "decode"]
    assert sum(rep["requests"] for rep in r["replicas"] if rep["pool"] == "decode") == 150
    assert r["scenario"]["cluster"]["prefill"]["server"]["cost"]["tp"] == 2
    assert {q["prefill_replica"] for q in r["requests"]} == {0}
    assert {q["replica"] for q in r["requests"]} == {0, 1}


@pytest.mark.parametrize("bad, field", [
    ({"cluster": {"prefill": {"replicas": 1}}}, "cluster.decode.replicas"),
    ({"cluster": {"decode": {"replicas": 2}}}, "cluster.prefill.replicas"),
    ({"cluster": {"replicas": 2, "prefill": {"replicas": 1}, "decode": {"replicas": 1}}},
     "cluster.replicas"),
    ({"cluster": {"prefill": {"replicas": 1, "server": {"slots": 0}},
                  "decode": {"replicas": 1}}}, "cluster.prefill.server.slots"),
    ({"cluster": {"prefill": {"replicas": 1}, "decode": {"replicas": 1, "server": {"x": 1}}}},
     "cluster.decode.server.x"),
    ({"cluster": {"prefill": {"replicas": 1}, "decode": {"replicas": 1},
                  "transfer": {"gb_s": 0}}}, "cluster.transfer.gb_s"),
])
def test_bad_disaggregation_input_names_the_field(bad, field):
    with pytest.raises(py_engine.ScenarioError) as e:
        py_engine.simulate(bad)
    assert e.value.field == field


@pytest.mark.parametrize("router", ["least_outstanding", "vllm_dp", "cache_aware"])
def test_a_decode_router_counts_a_request_from_its_choice(router):
    """The decode replica is chosen at arrival; the request gets there after its prefill and
    transfer. A router counts (and indexes) it from its choice, so a burst routed before any
    delivery spreads over the decode pool instead of piling on replica 0 (it did: 64 of 64)."""
    sc = {"cluster": {"prefill": {"replicas": 1}, "decode": {"replicas": 3}, "router": router}}
    got = Counter(r["replica"] for r in py_engine.simulate(sc)["requests"])
    assert sorted(got) == [0, 1, 2], got
    if router != "cache_aware":     # its rule when nothing matches: the smallest tree in tokens
        assert sorted(got.values()) == [21, 21, 22], got


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.just(0), st.integers(1, 10**15)), min_size=5, max_size=5))
def test_parts_in_ms_add_up_to_the_ttft_in_ms_exactly(ticks):
    from py_engine.fleet.result import summing_to_ttft
    parts, ttft = summing_to_ttft(ticks), sum(ticks) / 1e6
    assert sum(parts) == ttft
    for value, t in zip(parts, ticks):
        assert value >= 0 and abs(value - t / 1e6) <= 4 * math.ulp(ttft)
