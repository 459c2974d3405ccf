"""The brute-force vllm reference itself: hand-worked cases, and agreement with a plain
continuous loop.

The engine is checked against this reference (tests/test_vllm_policy.py), so the reference is pinned
here by cases worked out by hand from the documented semantics.
"""

from hypothesis import given, settings, strategies as st

from references.vllm import run_vllm_reference


def by_id(res):
    return {r["id"]: r for r in res["requests"]}


def test_recompute_by_hand():
    # block_size 1 so blocks = tokens; 6 tokens of KV; two requests (prompt 2, out 3).
    # Pass 1: both prefill and emit token 1 (KV 3 + 3 = 6, full).
    # Pass 2: A's decode needs a 7th token -> preempt the newest (B, KV dropped). A emits token 2.
    # Pass 3: A emits token 3 and finishes; B (re-prefill of 2 + 1 = 3 tokens, KV 4) does not fit
    #         beside A's 5 tokens. Pass 4: B re-prefills and emits token 2. Pass 5: token 3.
    res = run_vllm_reference([(0, 2, 3), (0, 2, 3)], slots=2, chunk=10, max_num_batched_tokens=100,
                             block_size=1, kv_tokens=6, cost=(10, 1, 0))
    a, b = by_id(res)[0], by_id(res)[1]
    assert (a["first_token_pass"], a["done_pass"], a["preemptions"]) == (1, 3, 0)
    assert (b["first_token_pass"], b["done_pass"], b["preemptions"]) == (1, 5, 1)
    assert b["token_passes"] == [1, 4, 5]         # three distinct tokens, none repeated
    assert b["lost"] == 3
    p = res["passes"]
    assert [x["rows"] for x in p] == [2, 1, 1, 1, 1]
    assert [x["prefill_tokens"] for x in p] == [4, 0, 0, 3, 0]
    assert [x["kv_tokens"] for x in p] == [6, 4, 5, 4, 5]
    assert [x["preempted"] for x in p] == [[], [1], [], [], []]
    assert b["done"] == 5 * 10 + (2 + 1 + 1 + 1 + 1)


def test_swap_by_hand():
    # Same trace, swap mode, 100 ticks per block each way, 10 ticks per pass.
    res = run_vllm_reference([(0, 2, 3), (0, 2, 3)], slots=2, chunk=10, max_num_batched_tokens=100,
                             block_size=1, kv_tokens=6, preemption="swap", cost=(10, 0, 0),
                             swap_ticks_per_block=100)
    a, b = by_id(res)[0], by_id(res)[1]
    p = res["passes"]
    assert [x["swap_ticks"] for x in p] == [0, 300, 0, 300, 0]    # B's 3 blocks out, then in
    assert [x["cost"] for x in p] == [10, 310, 10, 310, 10]
    assert [x["prefill_tokens"] for x in p] == [4, 0, 0, 0, 0]     # swap never recomputes
    assert (a["done"], a["done_pass"]) == (330, 3)
    assert (b["done"], b["done_pass"], b["preemptions"]) == (650, 5, 1)
    assert b["token_passes"] == [1, 4, 5]
    assert res["swapped_blocks"] == {"out": 3, "in": 3}


def test_victim_already_scheduled_is_taken_out_of_the_pass():
    # A (older, prompt 6 in chunks of 2, out 1) is still prefilling while B (newer) decodes.
    # Pass 3: B's decode is scheduled first (decodes before prefills) and takes the last free
    # token; A's final chunk then needs 3 more -> the newest running request (B) is preempted and
    # removed from the pass although it was already scheduled.
    res = run_vllm_reference([(0, 6, 1), (0, 1, 5)], slots=2, chunk=2, max_num_batched_tokens=100,
                             block_size=1, kv_tokens=8, cost=(1, 0, 0))
    a, b = by_id(res)[0], by_id(res)[1]
    p = res["passes"]
    assert p[2]["preempted"] == [1] and p[2]["rows"] == 1 and p[2]["prefill_tokens"] == 2
    assert (a["done_pass"], a["preemptions"]) == (3, 0)
    assert (b["first_token_pass"], b["done_pass"], b["preemptions"]) == (1, 7, 1)
    assert b["token_passes"] == [1, 2, 5, 6, 7]
    assert [x["prefill_tokens"] for x in p] == [3, 2, 2, 2, 1, 0, 0]


def test_token_budget_cuts_the_later_prefill_chunk():
    # Budget 5, chunk 4: the older prompt takes 4, the newer one the 1 token left; once the older
    # one is done the newer one gets full chunks.
    res = run_vllm_reference([(0, 8, 1), (0, 8, 1)], slots=2, chunk=4, max_num_batched_tokens=5,
                             cost=(1, 0, 0))
    assert [x["prefill_tokens"] for x in res["passes"]] == [5, 5, 4, 2]
    assert by_id(res)[0]["done_pass"] == 2 and by_id(res)[1]["done_pass"] == 4


def continuous_loop(items, slots, chunk, cost):
    """The article's iteration-level loop with the pass cost: ADMIT, STEP, RETIRE."""
    fixed, per_row, per_tok = cost
    res = [dict(first=None, done=None, fpass=None, dpass=None) for _ in items]
    slot = [None] * slots
    left = [p for _, p, _ in items]
    outs = [0] * len(items)
    qi, t, done, npass = 0, 0, 0, 0
    while done < len(items):
        if all(s is None for s in slot) and items[qi][0] > t:
            t = items[qi][0]
        for s in range(slots):
            if slot[s] is None and qi < len(items) and items[qi][0] <= t:
                slot[s] = qi
                qi += 1
        rows = [i for i in slot if i is not None]
        ptoks = sum(min(chunk, left[i]) for i in rows if left[i] > 0)
        t += fixed + per_row * len(rows) + per_tok * ptoks
        npass += 1
        for s in range(slots):
            i = slot[s]
            if i is None:
                continue
            if left[i] > 0:
                left[i] -= min(chunk, left[i])
                if left[i] > 0:
                    continue
            outs[i] += 1
            if outs[i] == 1:
                res[i]["first"], res[i]["fpass"] = t, npass
            if outs[i] == items[i][2]:
                res[i]["done"], res[i]["dpass"] = t, npass
                slot[s] = None
                done += 1
    return res, npass


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40), st.integers(1, 12)),
                min_size=1, max_size=12),
       st.integers(1, 4), st.integers(1, 16))
def test_unlimited_reference_equals_continuous_loop(raw, slots, chunk):
    items = sorted(raw, key=lambda x: x[0])
    cost = (20, 3, 1)
    res = run_vllm_reference(items, slots=slots, chunk=chunk, max_num_batched_tokens=slots * chunk,
                             kv_tokens=None, cost=cost)
    cont, npass = continuous_loop(items, slots, chunk, cost)
    assert len(res["passes"]) == npass
    for r, c in zip(res["requests"], cont):
        assert (r["first_token"], r["done"], r["first_token_pass"], r["done_pass"]) == (
            c["first"], c["done"], c["fpass"], c["dpass"])
        assert r["preemptions"] == 0
