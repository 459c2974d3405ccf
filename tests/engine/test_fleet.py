"""Fleets (SPEC §8): the identities that make a fleet exact, and each router's rule checked by an
independent re-implementation over the result (not over the engine's own bookkeeping).

1. One replica is the single server, number for number, under every router and scheduler.
2. Every replica is a single server: its requests are exactly the single-server run of the
   sub-trace its router sent it (under round robin that sub-trace is requests k, k + N, ...).
3. Each router's decision, recomputed from the finished result: outstanding requests are those
   sent to a replica and not done at the arrival (a request done at that very tick is done).
"""

import random

import pytest

import py_engine
from py_engine.analysis.results import RESULT_CAPS, result
from py_engine.api import drain
from py_engine.fleet.result import FleetRun
from py_engine.fleet.run import run_fleet_steps
from py_engine.scenario.prepared import prepare
from py_engine.workload.blocks import ID_SPAN, block_reuse, chains
from py_engine.workload.generator import Trace, generate

ROUTERS = ["round_robin", "random", "least_outstanding", "power_of_two", "vllm_dp",
           "cache_aware", "llm_d", "kv_cost"]
RECORD_KEYS = ("admit", "first_token", "last_token", "done", "admit_pass", "first_token_pass",
               "done_pass", "ttft", "tpot", "e2e", "preemptions", "cached_tokens")


def workloads():
    yield {"requests": 120, "arrival": {"kind": "poisson", "rate": 30}}
    yield {"requests": 80}
    yield {"requests": 150, "arrival": {"kind": "poisson", "rate": 60},
           "prefix": {"kind": "system", "groups": 7, "tokens": 1100}}
    yield {"requests": 60, "arrival": {"kind": "poisson", "rate": 15},
           "prefix": {"kind": "conversation", "turns": 3, "think": 500}}


def fleet_result(scenario):
    """The fleet machinery run directly (the API takes the single-server path for 1 replica)."""
    s = prepare(scenario)
    trace = generate(s["workload"])
    fleet = drain(run_fleet_steps(s, trace, None, None, RESULT_CAPS["segments"],
                                  RESULT_CAPS["passes_log"]))
    return result(FleetRun(fleet))


@pytest.mark.parametrize("scheduler", ["static", "continuous", "vllm"])
def test_one_replica_is_the_single_server_under_every_router(scheduler):
    for i, wl in enumerate(workloads()):
        router = ROUTERS[i % len(ROUTERS)] if scheduler != "vllm" else ROUTERS[(i * 3) % 8]
        sc = {"scheduler": scheduler, "workload": wl, "server": {"kv_tokens": 12000},
              "cluster": {"replicas": 1, "router": router}}
        plain = py_engine.simulate(sc)
        fleet = fleet_result(sc)
        assert fleet.pop("router")["kind"] == router
        assert len(fleet.pop("replicas")) == 1
        assert fleet == plain, (scheduler, wl, router)


def test_one_replica_is_the_single_server_under_the_roofline_with_chunked_prefills():
    sc = {"scheduler": "vllm",
          "workload": {"requests": 60, "arrival": {"kind": "poisson", "rate": 8},
                       "prompt_mean": 3000, "output_mean": 200},
          "server": {"cost": {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"},
                     "kv_tokens": "auto", "slots": 16, "max_num_batched_tokens": 2048},
          "cluster": {"replicas": 1, "router": "llm_d"}}
    fleet = fleet_result(sc)
    fleet.pop("router"), fleet.pop("replicas")
    assert fleet == py_engine.simulate(sc)


def test_only_a_fleet_of_one_samples_its_block_view():
    """The result shows a replica's block view for a fleet of one only: the replicas of a
    larger fleet take no samples (a sample copies the running requests' tables), and their
    numbers are still each one's single server's (the tests below)."""
    def run(replicas):
        s = prepare({"scheduler": "vllm", "workload": {"requests": 80},
                     "server": {"kv_tokens": 12000},
                     "cluster": {"replicas": replicas, "router": "round_robin"}})
        return drain(run_fleet_steps(s, generate(s["workload"]), None, None))
    one, two = run(1), run(2)
    assert one.replicas[0].policy.samples.rows
    assert result(FleetRun(one))["kv_blocks"] is not None
    assert [rep.policy.samples.rows for rep in two.replicas] == [[], []]
    assert result(FleetRun(two))["kv_blocks"] is None


def test_a_fleet_run_leaves_the_collectors_thresholds_as_it_found_them():
    """A fleet runs with fewer collections (fleet/run.py fewer_collections), finished, refused
    at the work cap, or dropped half-way (a cancelled page request): then the old thresholds."""
    import gc
    sc = {"scheduler": "vllm", "workload": {"requests": 200}, "server": {"kv_tokens": 12000},
          "cluster": {"replicas": 2, "router": "round_robin"}}
    before = gc.get_threshold()
    seen = []
    steps = py_engine.api.simulate_steps(sc, slice_s=0.0)
    next(steps)
    seen.append(gc.get_threshold())          # half-way
    steps.close()
    py_engine.simulate(sc)
    with pytest.raises(py_engine.ScenarioError, match="work cap"):
        py_engine.simulate(sc, work_cap=1000)
    assert seen[0][0] > before[0]
    assert gc.get_threshold() == before


def sub_trace_run(sc, trace, ids):
    """The single-server run of requests `ids` of the trace (in their order), as items."""
    items = []
    for i in ids:
        it = {"arrive": trace[0][i] / 1e6, "prompt": trace[1][i], "out": trace[2][i]}
        if trace.prefix_id is not None and trace.prefix_id[i] is not None:
            it["prefix_id"], it["prefix_len"] = trace.prefix_id[i], trace.prefix_len[i]
        if trace.hash_ids is not None and trace.hash_ids[i] is not None:
            it["hash_ids"] = list(trace.hash_ids[i])
        items.append(it)
    sub = {k: v for k, v in sc.items() if k != "cluster"}
    sub["workload"] = {"items": items, "hash_block": trace.hash_block}
    return py_engine.simulate(sub)


def assert_replicas_are_single_servers(sc, r):
    trace = generate(prepare(sc)["workload"])
    n = sc["cluster"]["replicas"]
    for k in range(n):
        mine = [q for q in r["requests"] if q["replica"] == k]
        rep = r["replicas"][k]
        assert rep["requests"] == len(mine)
        if not mine:
            continue
        alone = sub_trace_run(sc, trace, [q["id"] for q in mine])
        for q, p in zip(mine, alone["requests"]):
            for key in RECORD_KEYS:
                assert q[key] == pytest.approx(p[key], abs=1e-9), (k, q["id"], key)
        for key in ("passes", "output_tokens", "kv_peak_tokens", "preemptions", "ttft",
                    "prefix_hit_rate"):
            assert rep["metrics"][key] == alone["metrics"][key], (k, key)


@pytest.mark.parametrize("scheduler", ["static", "continuous", "vllm"])
def test_round_robin_decomposes_into_each_replicas_own_sub_trace(scheduler):
    for wl in workloads():
        sc = {"scheduler": scheduler, "workload": wl, "server": {"kv_tokens": 9000},
              "cluster": {"replicas": 3}}
        r = py_engine.simulate(sc)
        for k in range(3):
            ids = [q["id"] for q in r["requests"] if q["replica"] == k]
            assert ids == list(range(k, len(r["requests"]), 3))
        assert_replicas_are_single_servers(sc, r)


@pytest.mark.parametrize("router", ROUTERS)
def test_under_every_router_each_replica_is_the_single_server_of_what_it_was_sent(router):
    for scheduler in ("continuous", "vllm"):
        sc = {"scheduler": scheduler,
              "workload": {"requests": 160, "arrival": {"kind": "poisson", "rate": 50},
                           "prefix": {"kind": "system", "groups": 9, "tokens": 1500}},
              "server": {"kv_tokens": 16000}, "cluster": {"replicas": 4, "router": router}}
        r = py_engine.simulate(sc)
        assert sum(r["router"]["decisions"].values()) == 160
        assert_replicas_are_single_servers(sc, r)


# ---------------------------------------------------------------- the routers' rules, recomputed

def outstanding_at(reqs, g, n):
    """Per replica: requests before g (arrival order) sent there and not done at g's arrival."""
    t = reqs[g]["arrive"]
    out = [0] * n
    for q in reqs[:g]:
        if q["done"] > t:
            out[q["replica"]] += 1
    return out


def loaded_run(router, replicas=4, **knobs):
    sc = {"scheduler": "vllm",
          "workload": {"requests": 240, "arrival": {"kind": "poisson", "rate": 70},
                       "prefix": {"kind": "system", "groups": 11, "tokens": 1200},
                       "output_mean": 120},
          "server": {"kv_tokens": 20000},
          "cluster": {"replicas": replicas, "router": dict({"kind": router}, **knobs)}}
    return sc, py_engine.simulate(sc)


def test_least_outstanding_picks_the_fewest_in_flight_lowest_index_on_ties():
    _, r = loaded_run("least_outstanding")
    reqs = r["requests"]
    for g, q in enumerate(reqs):
        loads = outstanding_at(reqs, g, 4)
        assert q["replica"] == loads.index(min(loads)), g


def test_power_of_two_draws_two_distinct_and_takes_the_less_loaded():
    _, r = loaded_run("power_of_two", seed=7)
    reqs, rng = r["requests"], random.Random(7)
    for g, q in enumerate(reqs):
        a = rng.randrange(4)
        b = a
        while b == a:
            b = rng.randrange(4)
        loads = outstanding_at(reqs, g, 4)
        assert q["replica"] == (a if loads[a] <= loads[b] else b), g


def test_random_is_one_seeded_draw_per_request():
    _, r = loaded_run("random", seed=3)
    rng = random.Random(3)
    assert [q["replica"] for q in r["requests"]] == [rng.randrange(4) for _ in r["requests"]]


def test_cache_aware_follows_sglangs_rule():
    sc, r = loaded_run("cache_aware", balance_abs_threshold=3, balance_rel_threshold=1.2)
    reqs, hb = r["requests"], 512
    trace = generate(prepare(sc)["workload"])
    trees = [set() for _ in range(4)]           # (group, block) pairs each worker's tree holds
    sizes = [0] * 4
    reasons = {}
    for g, q in enumerate(reqs):
        loads = outstanding_at(reqs, g, 4)
        blocks = [(trace.prefix_id[g], j) for j in range(trace.prefix_len[g] // hb)]
        if max(loads) - min(loads) > 3 and max(loads) > min(loads) * 1.2:
            want, why = loads.index(min(loads)), "balance"
        else:
            best, who = 0, None
            for k in range(4):
                m = 0
                while m < len(blocks) and blocks[m] in trees[k]:
                    m += 1
                if m > best:
                    best, who = m, k
            if best and best * hb / q["prompt"] > 0.3:
                want, why = who, "cache_hit"
            else:
                want, why = sizes.index(min(sizes)), "smallest_tree"
        assert q["replica"] == want, g
        reasons[why] = reasons.get(why, 0) + 1
        known = sum(1 for b in blocks if b in trees[want])
        trees[want].update(blocks)
        sizes[want] += q["prompt"] - known * hb
    assert r["router"]["decisions"] == dict(sorted(reasons.items()))
    assert set(reasons) == {"balance", "cache_hit", "smallest_tree"}


def test_vllm_dp_with_stale_counts_falls_back_on_its_own_bumps():
    """A burst: no engine has published counts yet, so every score is 4 x the requests this
    client sent it since: the engines take turns, as round robin would."""
    sc = {"scheduler": "vllm", "workload": {"requests": 40},
          "cluster": {"replicas": 4, "router": "vllm_dp", "staleness_ms": 100}}
    r = py_engine.simulate(sc)
    assert [q["replica"] for q in r["requests"]] == [g % 4 for g in range(40)]


def test_prefix_aware_routers_keep_more_prefix_hits_than_round_robin():
    hits = {}
    for router in ROUTERS:
        _, r = loaded_run(router)
        hits[router] = r["metrics"]["prefix_hit_rate"]
        if router in ("cache_aware", "llm_d", "kv_cost"):
            assert r["router"]["prefix_tokens_forgone"] <= r["router"]["prefix_tokens_held"]
    for router in ("cache_aware", "llm_d", "kv_cost"):
        assert hits[router] > hits["round_robin"], hits


# ---------------------------------------------------------------- hash ids

def test_hash_ids_name_the_same_blocks_as_a_prefix_stream():
    """A system-prompt trace written twice, as prefix ids and as hash ids (the shared prefix's
    blocks, then ids of the request's own): the same vLLM run, record for record."""
    sc = {"workload": {"requests": 50, "arrival": {"kind": "poisson", "rate": 20},
                       "prefix": {"kind": "system", "groups": 3, "tokens": 1024}}}
    trace = generate(prepare(sc)["workload"])
    by_prefix, by_hash = [], []
    fresh = 1000
    for i in range(50):
        base = {"arrive": trace[0][i] / 1e6, "prompt": trace[1][i], "out": trace[2][i]}
        by_prefix.append(dict(base, prefix_id=trace.prefix_id[i], prefix_len=1024))
        own = -(-trace[1][i] // 512) - 2
        by_hash.append(dict(base, hash_ids=[10 * trace.prefix_id[i], 10 * trace.prefix_id[i] + 1]
                            + list(range(fresh, fresh + own))))
        fresh += own
    a = py_engine.simulate({"scheduler": "vllm", "workload": {"items": by_prefix}})
    b = py_engine.simulate({"scheduler": "vllm", "workload": {"items": by_hash}})
    assert a["requests"] == b["requests"]
    assert sum(q["cached_tokens"] for q in a["requests"]) > 0


def test_hash_ids_share_blocks_only_along_equal_prefixes():
    items = [{"arrive": 0, "prompt": 1000, "out": 5, "hash_ids": [1, 2]},
             {"arrive": 50, "prompt": 900, "out": 5, "hash_ids": [1, 3]},
             {"arrive": 100, "prompt": 1100, "out": 5, "hash_ids": [1, 2, 4]},
             {"arrive": 150, "prompt": 600, "out": 5, "hash_ids": [9, 2]}]
    r = py_engine.simulate({"scheduler": "vllm", "workload": {"items": items}})
    # 512 tokens of block [1]; 62 whole 16-token blocks of [1, 2] (request 0's 1000 tokens);
    # [9, 2]: id 2 after another first block is other content
    assert [q["cached_tokens"] for q in r["requests"]] == [0, 512, 992, 0]


def test_block_reuse_of_a_cache_only_replay():
    t = Trace([0] * 4, [1024, 1024, 1024, 512], [1] * 4,
              hash_ids=[[1, 2], [1, 3], [1, 2], [2]])
    c = chains(t)
    # 7 references; distinct nodes: [1], [1,2], [1,3], [2] -> 4; reuse 3/7
    assert block_reuse(c) == pytest.approx(3 / 7)
    # replicas 0, 1, 0, 1: distinct (replica, node): (0,[1]) (0,[1,2]) (1,[1]) (1,[1,3]) (1,[2])
    assert block_reuse(c, [0, 1, 0, 1]) == pytest.approx(2 / 7)



def test_a_router_reads_each_replica_as_a_plan_at_every_event_left_it(monkeypatch):
    """vllm's `continues` (go on through an event whose plan would repeat) leaves the prefix
    cache as an older plan left it; a router probing between events then saw other hits (8
    cache_aware replicas, the 1,557th Mooncake request: 31 blocks more). Fleet replicas plan at
    every event: the same counters as with `continues` off, not as with it on."""
    from py_engine.bench.fleet import scenario
    from py_engine.fleet import run as fleet_run
    from py_engine.policies.vllm.scheduler import VLLM

    def held(continues):
        with monkeypatch.context() as m:      # (undone alone: not the suite's own patches)
            if continues is not None:
                init = fleet_run.Replica.__init__

                def forced(self, *a, **k):
                    init(self, *a, **k)
                    if isinstance(self.policy, VLLM):
                        self.policy.continues = continues
                m.setattr(fleet_run.Replica, "__init__", forced)
            r = py_engine.simulate(scenario(1560, 8, "cache_aware"), work_cap=None)["router"]
        return r["prefix_tokens_held"], r["prefix_tokens_forgone"]

    every_event, going_on = held(False), held(True)
    assert going_on != every_event            # the case shows the difference
    assert held(None) == every_event


def test_chains_tell_ids_at_both_ends_of_their_range_apart():
    """The trie keys a (parent, id) pair as one int: ids 0 and the largest allowed, as roots and
    as children, are still four distinct contents."""
    top = ID_SPAN - 1
    t = Trace([0] * 5, [1024] * 5, [1] * 5,
              hash_ids=[[0, top], [0, top], [top, 0], [top], [0, 0]])
    assert chains(t) == [[0, 1], [0, 1], [2, 3], [2], [0, 4]]


# ---------------------------------------------------------------- input

@pytest.mark.parametrize("bad, field", [
    ({"cluster": {"replicas": 0}}, "cluster.replicas"),
    ({"cluster": {"replicas": 65}}, "cluster.replicas"),
    ({"cluster": {"router": "sticky"}}, "cluster.router.kind"),
    ({"cluster": {"router": {"kind": "cache_aware", "cache_threshold": 2}}},
     "cluster.router.cache_threshold"),
    ({"cluster": {"staleness_ms": -1}}, "cluster.staleness_ms"),
    ({"workload": {"items": [{"arrive": 0, "prompt": 10, "out": 1, "hash_ids": [1],
                              "prefix_id": 2}]}}, "workload.items[0].prefix_id"),
    ({"workload": {"items": [{"arrive": 0, "prompt": 600, "out": 1, "hash_ids": [1]}]}},
     "workload.items[0].hash_ids"),
])
def test_bad_fleet_input_names_the_field(bad, field):
    with pytest.raises(py_engine.ScenarioError) as e:
        py_engine.simulate(bad)
    assert e.value.field == field


def test_mooncake_block_reuse_one_cache_and_round_robin_over_8():
    """The published 36.64 % (the trace's README: one infinite cache) and round robin over 8
    replicas, a cache-only replay of the shipped trace's hash ids: computed here, not written."""
    sc = {"workload": {"trace": {"name": "mooncake-conv-2025", "count": 12031}}}
    c = chains(generate(prepare(sc)["workload"]))
    assert round(100 * block_reuse(c), 2) == 36.64
    assert round(100 * block_reuse(c, [g % 8 for g in range(len(c))]), 1) == 13.6
    r = py_engine.simulate({"scheduler": "continuous",
                            "workload": {"trace": {"name": "mooncake-conv-2025", "count": 400}},
                            "cluster": {"replicas": 8}})
    assert r["router"]["block_reuse_one_cache"] > r["router"]["block_reuse_routed"] > 0


@pytest.mark.parametrize("kv_tokens", [None, 6000])
@pytest.mark.parametrize("router", ["least_outstanding", "llm_d", "kv_cost"])
def test_a_fleet_counting_blocks_until_a_preemption_equals_one_with_block_tables(
        router, kv_tokens, monkeypatch):
    # No shared content and finite pools: the replicas count blocks (SpeculativeVLLM) and the
    # whole fleet starts over with block tables at a replica's first preemption (a 6,000-token
    # pool preempts, a 200,000-token one does not); the routers that read the replicas' prefix
    # caches included. Against the same fleet with block tables from the start.
    from py_engine.policies.vllm.counting_pool import CountingPool
    from py_engine.policies.vllm.scheduler import SpeculativeVLLM, VLLM
    raw = {"scheduler": "vllm", "cluster": {"replicas": 3, "router": router},
           "workload": {"requests": 150, "arrival": {"kind": "poisson", "rate": 40}},
           "server": {"kv_tokens": kv_tokens or 200_000}}
    run = drain(run_fleet_steps(prepare(raw), generate(prepare(raw)["workload"])))
    kinds = {type(rep.policy) for rep in run.replicas}
    preempted = any(sum(rep.sim.preemptions) for rep in run.replicas)
    assert kinds == ({VLLM} if kv_tokens else {SpeculativeVLLM}) and preempted == bool(kv_tokens)
    if not kv_tokens:
        assert all(isinstance(rep.policy.pool, CountingPool) for rep in run.replicas)
    fast = py_engine.simulate(raw)
    monkeypatch.setattr(SpeculativeVLLM, "speculate", False)
    assert fast == py_engine.simulate(raw)


def test_a_fleet_whose_first_replica_was_sent_nothing_has_metrics():
    """A replica sent no request has no prefix hit rate (None); the fleet's metrics added the
    next replica's 0.0 to it and raised a TypeError (power of two's draws left replica 0 idle)."""
    sc = {"scheduler": "vllm",
          "workload": {"requests": 10, "prompt_mean": 1, "output_mean": 400, "skew": 0},
          "server": {"kv_tokens": 20000},
          "cluster": {"replicas": 8, "router": {"kind": "power_of_two"}}}
    r = py_engine.simulate(sc)
    idle = [m for m in r["replicas"] if m["requests"] == 0]
    assert idle and r["metrics"]["prefix_hit_rate"] == 0.0
