"""The brute-force vLLM model (references/vllm.py) on the three hand-worked cases that showed where
the old reading of vLLM was wrong (measured on the real vLLM 0.33.0 with the oracle harness; the
fixture holds them as cases 0-2 and test_oracle_fixture.py compares every step).

Cost: the article's 22 + 0.35 * rows + 0.06 * prefill tokens ms, in ticks.
"""

import pytest

from references.vllm import run

ARTICLE = (22_000_000, 350_000, 60_000)
MS = 1_000_000


def config(items, **kw):
    base = {"slots": 2, "chunk": 10, "budget": 100, "kv_tokens": None, "block_size": 16,
            "enable_prefix_caching": False, "async_scheduling": False,
            "scheduler_reserve_full_isl": False, "policy": "fcfs"}
    base.update(kw)
    base["items"] = [[a * MS, p, o, None, 0, 0] for a, p, o in items]
    return base


def test_blocks_cover_computed_plus_scheduled_tokens_only():
    # A(0, 2, 3), B(0, 2, 3); slots 2, block 1, a pool of 6 tokens. Step 1: both prefill 2 tokens
    # (4 blocks) and sample. Step 2: both decode; each needs a 3rd block (6 in all): it fits,
    # because the token a step samples gets its slot only in the next step. Step 3: each needs a
    # 4th: B is preempted. A finishes; B comes back (4 tokens: prompt + 2 outputs) and needs one
    # more step. 4 steps; B's e2e = 90.58 ms.
    r = run(config([(0, 2, 3), (0, 2, 3)], block_size=1, kv_tokens=6), ARTICLE)
    steps = [s["tokens"] for s in r["steps"] if s["tokens"]]
    assert steps == [{0: 2, 1: 2}, {0: 1, 1: 1}, {0: 1}, {1: 4}]
    a, b = r["requests"]
    assert (a["done_step"], a["preemptions"]) == (3, 0)
    assert b["preemptions"] == 1
    assert b["done"] == 90_580_000          # 22.94 + 22.70 + 22.35 + 22.59 ms of passes


def test_a_waiting_request_is_admitted_only_when_its_whole_prompt_fits():
    # A(0, 100, 50), B(0, 140, 4); slots 2, chunk 32, budget 64, a pool of 160 tokens (10 blocks).
    # With scheduler_reserve_full_isl B (9 blocks) waits until A is done: no preemption at all,
    # and B's first token comes at 1266.0 ms.
    r = run(config([(0, 100, 50), (0, 140, 4)], chunk=32, budget=64, kv_tokens=160,
                   scheduler_reserve_full_isl=True), ARTICLE)
    a, b = r["requests"]
    assert a["preemptions"] == b["preemptions"] == 0
    assert b["first"] == 1_266_000_000
    # without it, B is admitted on its first chunk and the two keep preempting each other
    r = run(config([(0, 100, 50), (0, 140, 4)], chunk=32, budget=64, kv_tokens=160), ARTICLE)
    assert sum(q["preemptions"] for q in r["requests"]) > 0


@pytest.mark.parametrize("mode, ttft", [(False, 92_600_000), (True, 114_950_000)])
def test_async_scheduling_uses_a_freed_slot_one_step_later(mode, ttft):
    # A(0, 10, 3), B(0, 10, 8), C(0, 10, 3); slots 2, chunk 64, budget 128. A finishes in step 3;
    # synchronously C is admitted in step 4, with async scheduling (step 4 planned while step 3
    # runs) in step 5.
    r = run(config([(0, 10, 3), (0, 10, 8), (0, 10, 3)], chunk=64, budget=128,
                   async_scheduling=mode), ARTICLE)
    c = r["requests"][2]
    assert c["first"] - 0 == ttft


def test_prefix_cache_serves_a_shared_system_prompt_once():
    # Two requests with the same 64-token prefix, the second arriving after the first's prompt
    # is computed: the second's lookup hits the four cached blocks (64 tokens).
    cfg = config([(0, 80, 4), (200, 80, 4)], chunk=512, budget=512, kv_tokens=1600,
                 enable_prefix_caching=True)
    for it in cfg["items"]:
        it[3], it[4] = 0, 64
    r = run(cfg, ARTICLE)
    cached = [s["cached"] for s in r["steps"] if s["cached"]]
    assert cached == [{0: 0}, {1: 64}]
