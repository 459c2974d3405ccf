"""Self-checks of the `vllm` policy for `verify.check` (natively and in the browser).

Each check is (name, fn) with fn() -> (ok, detail). They test what must hold whatever the trace:
with no limit binding vllm is exactly continuous; under a tight KV budget every request still gets
its full output once, KV never exceeds the budget, the token budget holds, recompute's extra
prefill equals the KV it threw away and swap's transfer time is in the passes. (The brute-force
reference the engine is compared with lives in tests/vllm_reference.py.)
"""

from ..api import compare, simulate
from ..cost import TICKS


def _trace(rng, n, spread):
    items = sorted((rng.randint(0, spread), rng.randint(1, 300), rng.randint(1, 60))
                   for _ in range(n))
    return [{"arrive": a, "prompt": p, "out": o} for a, p, o in items]


def _same_as_continuous(rng):
    slots, chunk = rng.randint(1, 8), rng.choice([16, 64, 128, 512])
    sc = {"workload": {"items": _trace(rng, rng.randint(1, 24), rng.choice([0, 500]))},
          "server": {"slots": slots, "chunk": chunk, "max_num_batched_tokens": slots * chunk}}
    r = compare(sc, ["continuous", "vllm"])
    v, c = r["vllm"], r["continuous"]
    ok = (v["requests"] == c["requests"] and v["segments"] == c["segments"]
          and v["passes_log"] == c["passes_log"] and v["metrics"]["ttft"] == c["metrics"]["ttft"])
    return ok, "%d slots, chunk %d: %d vs %d passes" % (slots, chunk, v["metrics"]["passes"],
                                                        c["metrics"]["passes"])


def _tight(rng, mode):
    items = _trace(rng, rng.randint(2, 16), rng.choice([0, 300]))
    block = rng.choice([1, 4, 16])
    need = max(-(-(it["prompt"] + it["out"]) // block) for it in items) * block
    kv, budget = need + block * rng.randint(0, 8), rng.randint(8, 600)
    sc = {"scheduler": "vllm", "workload": {"items": items},
          "server": {"slots": rng.randint(2, 8), "chunk": rng.choice([8, 32, 128]),
                     "max_num_batched_tokens": budget, "block_size": block, "kv_tokens": kv,
                     "preemption": mode, "cost": "unit"}}
    res = simulate(sc)
    m, log = res["metrics"], res["passes_log"]
    outs = sum(it["out"] for it in items)
    prefill = sum(c * p for c, p in zip(log["count"], log["prefill_tokens"]))
    prompts = sum(it["prompt"] for it in items)
    ok = (m["output_tokens"] == outs == m["slot_steps"]["useful"]
          and m["kv_peak_tokens"] <= kv and max(log["kv_tokens"]) <= kv
          and max(log["prefill_tokens"]) <= budget)
    if mode == "recompute":
        ok = ok and prefill == prompts + m["recomputed_tokens"]
    else:
        base = sum(c * 1_000_000 for c in log["count"])           # unit cost: 1 per pass
        spent = sum(c * round(x * TICKS) for c, x in zip(log["count"], log["cost"]))
        ok = (ok and prefill == prompts and m["swap_out_blocks"] == m["swap_in_blocks"]
              and spent - base == round(m["swap_ms"] * TICKS))
    return ok, "%d requests, kv_tokens %d, %s: %d preemptions, KV peak %d" % (
        len(items), kv, mode, m["preemptions"], m["kv_peak_tokens"])


def _forced_preemption():
    # 4 identical requests grow in lockstep; a pool one block short of all four must preempt.
    items = [{"arrive": 0, "prompt": 64, "out": 64}] * 4
    out = []
    for mode in ("recompute", "swap"):
        m = simulate({"scheduler": "vllm", "workload": {"items": items},
                      "server": {"slots": 4, "kv_tokens": 4 * 128 - 16,
                                 "preemption": mode}})["metrics"]
        out.append((mode, m["preemptions"], m["output_tokens"]))
    ok = all(p > 0 and o == 256 for _, p, o in out)
    return ok, ", ".join("%s: %d preemptions" % (mode, p) for mode, p, _ in out)


def checks(rng, quick=True):
    """[(name, fn)] for check.run; `rng` is the caller's seeded random.Random."""
    n = 4 if quick else 30
    items = []
    for i in range(n):
        items.append(("vllm trace %d: unlimited KV, budget >= slots x chunk -> == continuous" % i,
                      lambda r=rng.random(): _same_as_continuous(_sub(r))))
    for i in range(n):
        mode = ("recompute", "swap")[i % 2]
        items.append(("vllm trace %d: tight KV (%s): full output once, KV and token budgets "
                      "held, %s accounted" % (i, mode, "recompute" if mode == "recompute" else
                                              "swap time"),
                      lambda r=rng.random(), mode=mode: _tight(_sub(r), mode)))
    items.append(("vllm: a pool short of the lockstep demand forces preemption",
                  _forced_preemption))
    return items


def _sub(x):
    import random
    return random.Random(x)
