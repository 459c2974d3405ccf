"""The `vllm` policy in the engine: its invariants under tight KV pools (with every knob), exact
equality with `continuous` when no limit binds, runs of passes equal to planning every pass, and
a speculative run (block counts until a preemption) equal to one with block tables.
Exactness against the real vLLM scheduler: test_oracle_fixture.py."""

import copy

import pytest
from hypothesis import assume, given, settings, strategies as st

import py_engine
from py_engine.analysis.results import RESULT_CAPS, result
from py_engine.api import Run, run_sim
from py_engine.bench.engine import AZURE
from py_engine.errors import ScenarioError
from py_engine.model.cost import TICKS, Cost
from py_engine.policies.vllm.block_pool import PrefixCachePool
from py_engine.policies.vllm.counting_pool import CountingPool
from py_engine.policies.vllm.scheduler import VLLM, SpeculativeVLLM
from py_engine.scenario.prepared import prepare
from py_engine.sim.core import Sim
from py_engine.workload.generator import generate

COST = (20, 3, 1)              # ticks: fixed, per row, per prefill token
BYTES_PER_TOKEN, PCIE = 1000, 10.0


def scenario(items, *, slots, chunk, budget, block=16, kv=None, mode="recompute", cost=COST,
             knobs=None):
    return {
        "scheduler": "vllm",
        "workload": {"items": [{"arrive": a / TICKS, "prompt": p, "out": o} for a, p, o in items]},
        "server": {"slots": slots, "chunk": chunk, "max_num_batched_tokens": budget,
                   "block_size": block, "kv_tokens": kv, "preemption": mode,
                   "kv_bytes_per_token": BYTES_PER_TOKEN, "pcie_gb_s": PCIE,
                   "cost": {"fixed_ms": cost[0] / TICKS, "per_row_ms": cost[1] / TICKS,
                            "per_prefill_token_ms": cost[2] / TICKS}, **(knobs or {})},
    }


def ticks(x):
    return round(x * TICKS)


def expand(log):
    """Run-length passes_log -> one tuple per pass (rows, prefill tokens, cost ticks, useful)."""
    out = []
    for i, c in enumerate(log["count"]):
        out += [(log["rows"][i], log["prefill_tokens"][i], ticks(log["cost"][i]),
                 log["useful"][i])] * c
    return out


@st.composite
def cases(draw, tight=True):
    n = draw(st.integers(1, 8))
    items = sorted(draw(st.lists(st.tuples(st.integers(0, 300), st.integers(1, 40),
                                           st.integers(1, 14)), min_size=n, max_size=n)))
    block = draw(st.sampled_from([1, 2, 4, 16]))
    need = max(-(-(p + o - 1) // block) for _, p, o in items) * block
    kv = draw(st.sampled_from([need, need + block, need + 3 * block, 2 * need] +
                              ([] if tight else [None])))
    knobs = {k: draw(st.booleans()) for k in ("enable_prefix_caching", "async_scheduling",
                                              "scheduler_reserve_full_isl")}
    return dict(items=items, slots=draw(st.integers(1, 4)), chunk=draw(st.integers(1, 12)),
                budget=draw(st.integers(1, 40)), block=block, kv=kv,
                mode=draw(st.sampled_from(["recompute", "swap"])), knobs=knobs)


def run(case):
    c = dict(case)
    return py_engine.simulate(scenario(c.pop("items"), **c))


@settings(max_examples=200, deadline=None)
@given(cases(tight=True))
def test_invariants_under_tight_kv(case):
    res = run(case)
    m, log = res["metrics"], res["passes_log"]
    items = case["items"]
    # Every request completes with its full output; no token is emitted twice.
    assert m["output_tokens"] == sum(o for _, _, o in items)
    assert m["slot_steps"]["useful"] == sum(o for _, _, o in items)
    assert sum(c * u for c, u in zip(log["count"], log["useful"])) == m["output_tokens"]
    for r in res["requests"]:
        assert r["arrive"] <= r["admit"] <= r["first_token"] <= r["done"]
        assert r["first_token_pass"] <= r["done_pass"] <= m["passes"]
    # Segments (what the page draws): never two requests in one slot at once, and they add up
    # to the slot-step tally.
    by_slot = {}
    for slot, rid, phase, a, b in res["segments"]:
        assert 0 <= slot < case["slots"] and 1 <= a <= b <= m["passes"] and rid >= 0
        by_slot.setdefault(slot, []).append((a, b))
    for spans in by_slot.values():
        spans.sort()
        assert all(x[1] < y[0] for x, y in zip(spans, spans[1:]))
    # A request never preempted runs in every pass from admission to its last token: the token
    # budget never leaves a running request out of a pass.
    spans = {}
    for slot, rid, phase, a, b in res["segments"]:
        spans.setdefault(rid, []).append((a, b))
    for r in res["requests"]:
        if r["preemptions"] == 0:
            covered = sum(b - a + 1 for a, b in spans[r["id"]])
            assert covered == r["done_pass"] - r["admit_pass"] + 1
    for phase in ("useful", "prefill"):
        assert sum(b - a + 1 for _, _, ph, a, b in res["segments"] if ph == phase) == \
            m["slot_steps"][phase]
    # Blocks in use never exceed the pool (a run's KV only grows, so its end is its peak).
    assert max(log["kv_tokens"]) <= case["kv"]
    assert m["kv_peak_tokens"] <= case["kv"]
    # Per-pass tokens never exceed max_num_batched_tokens; rows never exceed slots.
    assert all(0 < r <= case["slots"] for r in log["rows"])
    assert all(p <= case["budget"] for p in log["prefill_tokens"])
    if case["mode"] == "recompute":
        assert m["swap_out_blocks"] == m["swap_in_blocks"] == 0
    else:
        # swap moves blocks out and (those the prefix cache lost) back; its time is in the passes
        assert m["swap_in_blocks"] <= m["swap_out_blocks"]
        assert (m["swap_out_blocks"] > 0) == (m["preemptions"] > 0)
        per_block = round(case["block"] * BYTES_PER_TOKEN / PCIE)
        base = sum(c * (COST[0] + COST[1] * r + COST[2] * p) for c, r, p in
                   zip(log["count"], log["rows"], log["prefill_tokens"]))
        spent = sum(c * ticks(x) for c, x in zip(log["count"], log["cost"]))
        assert spent - base == (m["swap_out_blocks"] + m["swap_in_blocks"]) * per_block


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.integers(1, 30), st.integers(2, 30), st.sampled_from([1, 4, 16]),
       st.sampled_from(["recompute", "swap"]))
def test_preemption_when_the_budget_forces_it(n, prompt, out, block, mode):
    # n identical requests arrive together, all fit at admission and grow in lockstep: they all
    # hold KV until the same last pass, so a pool one block short of n full requests cannot finish
    # them without preempting.
    full = -(-(prompt + out - 1) // block)                   # blocks of one finished request
    first = -(-min(prompt, 8) // block)                      # blocks after its first pass
    assume(first < full and n * first <= n * full - 1)
    kv = (n * full - 1) * block
    res = py_engine.simulate(scenario([(0, prompt, out)] * n, slots=n, chunk=8, budget=10_000,
                                      block=block, kv=kv, mode=mode))
    m = res["metrics"]
    assert m["preemptions"] > 0
    assert m["output_tokens"] == n * out
    assert m["kv_peak_tokens"] <= kv
    # ... while a pool that holds them all needs none
    roomy = py_engine.simulate(scenario([(0, prompt, out)] * n, slots=n, chunk=8, budget=10_000,
                                        block=block, kv=n * full * block, mode=mode))
    assert roomy["metrics"]["preemptions"] == 0


def same_run(a, b):
    assert a["metrics"]["passes"] == b["metrics"]["passes"]
    assert a["requests"] == b["requests"]
    assert a["segments"] == b["segments"]
    for k in ("count", "start", "rows", "prefill_tokens", "cost", "useful"):
        assert a["passes_log"][k] == b["passes_log"][k], k
    for k in ("makespan", "utilization", "shares", "ttft", "tpot", "itl", "e2e",
              "throughput_tok_s", "goodput_rps", "slo_attainment", "preemptions"):
        assert a["metrics"][k] == b["metrics"][k], k


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2000), st.integers(1, 900), st.integers(1, 60)),
                min_size=1, max_size=16),
       st.integers(1, 6), st.integers(1, 600), st.integers(0, 50), st.sampled_from([1, 16, 64]))
def test_unlimited_vllm_equals_continuous(raw, slots, chunk, extra, block):
    # No limit binds: unlimited KV, a budget of at least slots x chunk, synchronous scheduling,
    # and no prompt longer than the chunk (vLLM ignores the chunk for a lone request).
    items = sorted((a, min(p, chunk), o) for a, p, o in raw)
    sc = scenario(items, slots=slots, chunk=chunk, budget=slots * chunk + extra, block=block,
                  knobs={"async_scheduling": False})
    sc["server"]["cost"] = "article"
    v = py_engine.simulate(sc)
    c = py_engine.simulate({**sc, "scheduler": "continuous"})
    same_run(v, c)


def test_a_lone_request_ignores_the_chunk():
    # vLLM drops long_prefill_token_threshold when one request is running or waiting: alone, a
    # 1000-token prompt is prefilled in one pass (the budget allows it); beside another, in chunks.
    alone = py_engine.simulate(scenario([(0, 1000, 2)], slots=2, chunk=100, budget=4096))
    assert alone["passes_log"]["prefill_tokens"][0] == 1000
    pair = py_engine.simulate(scenario([(0, 1000, 2), (0, 10, 50)], slots=2, chunk=100,
                                       budget=4096))
    assert max(pair["passes_log"]["prefill_tokens"]) <= 200


def test_async_scheduling_holds_a_finished_slot_one_more_pass():
    # The case: A(0, 10, 3), B(0, 10, 8), C(0, 10, 3); 2 slots. C's TTFT: 92.60 ms
    # synchronous, 114.95 ms async (recorded from vLLM 0.33.0, case 2 of the fixture).
    items = [(0, 10, 3), (0, 10, 8), (0, 10, 3)]
    ttft = {}
    for mode in (False, True):
        sc = scenario(items, slots=2, chunk=64, budget=128, knobs={"async_scheduling": mode})
        sc["server"]["cost"] = "article"
        ttft[mode] = py_engine.simulate(sc)["requests"][2]["ttft"]
    assert ttft == {False: pytest.approx(92.60, abs=1e-9), True: pytest.approx(114.95, abs=1e-9)}


def test_default_budget_differs_from_continuous_and_is_respected():
    # The default budget (2048) is below slots x chunk (8 x 512): long prompts get cut chunks.
    res = py_engine.compare({"workload": {"prompt_mean": 2000}}, ["continuous", "vllm"])
    v = res["vllm"]
    assert max(v["passes_log"]["prefill_tokens"]) <= 2048
    assert max(res["continuous"]["passes_log"]["prefill_tokens"]) > 2048
    assert v["metrics"]["output_tokens"] == res["continuous"]["metrics"]["output_tokens"]


def test_a_request_larger_than_the_pool_is_a_scenario_error():
    # prompt 100 + out 50 - 1 = 149 KV slots (the last token is never fed back): 10 blocks of 16
    with pytest.raises(ScenarioError) as e:
        py_engine.simulate(scenario([(0, 100, 50), (0, 10, 5)], slots=2, chunk=16, budget=64,
                                    block=16, kv=144))
    assert e.value.field == "server.kv_tokens"
    assert "at least 160" in e.value.message
    py_engine.simulate(scenario([(0, 100, 50), (0, 10, 5)], slots=2, chunk=16, budget=64,
                                block=16, kv=160))


@settings(max_examples=100, deadline=None)
@given(cases(tight=False))
def test_event_driven_equals_stepping_every_pass(case):
    # The same policy with horizon() == 1 is called before every single pass; jumping over runs
    # of identical passes must not change anything.
    from py_engine.bench.vllm import run_stepped
    c = dict(case)
    sc = prepare(scenario(c.pop("items"), **c))
    trace = generate(sc["workload"])
    a, b = run_sim(sc, trace).sim, run_stepped(sc, trace)
    assert a.passes == b.passes
    for name in ("admit_tick", "first_tick", "done_tick", "first_pass", "done_pass",
                 "preemptions"):
        assert list(getattr(a, name)) == list(getattr(b, name)), name
    assert a.kv_peak == b.kv_peak and a.rec.gap_weights == b.rec.gap_weights
    assert a.rec.n_runs <= b.rec.n_runs


# ------------------------------------------------------------ speculation
# The policy counts blocks until its first preemption where only that could make its prefix
# cache observable (scheduler.SpeculativeVLLM, what api.run_steps runs), then starts the run over
# with block tables: every result must equal the run with block tables from the start.

def with_block_tables(raw):
    """The result of the plain VLLM class (no speculation), run as run_steps runs it."""
    sc = prepare(raw)
    trace = generate(sc["workload"])
    sim = Sim(trace, sc["server"]["slots"], Cost.from_scenario(sc),
              seg_cap=RESULT_CAPS["segments"], log_cap=RESULT_CAPS["passes_log"])
    policy = VLLM(sim, sc, trace)
    sim.run(policy)
    return result(Run(sim, policy, sc))


@settings(max_examples=150, deadline=None)
@given(cases(tight=True))
def test_a_speculative_run_equals_one_with_block_tables(case):
    # tight pools (with and without preemptions), every knob: the whole result, kv_blocks too
    c = dict(case)
    raw = scenario(c.pop("items"), **c)
    assert py_engine.simulate(copy.deepcopy(raw)) == with_block_tables(raw)


def test_it_counts_blocks_until_a_preemption_then_starts_over():
    quiet = dict(AZURE, workload={"trace": {"name": "azure-conv-2023", "count": 300}})
    run = run_sim(quiet)
    assert type(run.policy) is SpeculativeVLLM and isinstance(run.policy.pool, CountingPool)
    assert run.sim.preemptions.count(0) == run.sim.n        # nothing made the cache observable
    assert result(run) == with_block_tables(quiet)
    # a pool of 3,000 tokens preempts: the run started over with block tables
    tight = {"scheduler": "vllm", "server": {"kv_tokens": 3000}}
    run = run_sim(tight)
    assert type(run.policy) is VLLM and isinstance(run.policy.pool, PrefixCachePool)
    assert sum(run.sim.preemptions) > 0
    assert result(run) == with_block_tables(tight)


def test_shared_content_and_unlimited_pools_never_speculate():
    shared = {"scheduler": "vllm", "server": {"kv_tokens": 20_000},
              "workload": {"requests": 40, "prefix": {"kind": "system", "groups": 2, "tokens": 64}}}
    assert isinstance(run_sim(shared).policy.pool, PrefixCachePool)
    unlimited = run_sim({"scheduler": "vllm"}).policy
    assert not unlimited.speculating and isinstance(unlimited.pool, CountingPool)
