"""Self-checks of the `vllm` policy for `verify.check` (natively and in the browser).

Each check is (name, fn) with fn() -> (ok, detail). They test what must hold whatever the trace:
with no limit binding (unlimited KV, a budget of slots x chunk, chunk >= every prompt, synchronous
scheduling) vllm is exactly continuous; under a tight KV pool every request still gets its full
output once, the blocks in use never exceed the pool, the token budget holds and swap's transfer
time is in the passes. Exactness against the real vLLM 0.33.0 scheduler is `vllm_cases` (recorded
decisions).
"""

import random

from ..api import compare, simulate
from ..model.cost import TICKS


def _trace(rng, n, spread):
    items = sorted((rng.randint(0, spread), rng.randint(1, 300), rng.randint(1, 60))
                   for _ in range(n))
    return [{"arrive": a, "prompt": p, "out": o} for a, p, o in items]


def _same_as_continuous(rng):
    slots, chunk = rng.randint(1, 8), rng.choice([64, 128, 512])
    items = _trace(rng, rng.randint(1, 24), rng.choice([0, 500]))
    for it in items:
        it["prompt"] = min(it["prompt"], chunk)   # vLLM ignores the chunk for a lone request
    sc = {"workload": {"items": items},
          "server": {"slots": slots, "chunk": chunk, "max_num_batched_tokens": slots * chunk,
                     "async_scheduling": False}}
    r = compare(sc, ["continuous", "vllm"])
    v, c = r["vllm"], r["continuous"]
    ok = (v["requests"] == c["requests"] and v["segments"] == c["segments"]
          and v["metrics"]["ttft"] == c["metrics"]["ttft"]
          and _per_pass(v["passes_log"]) == _per_pass(c["passes_log"]))
    return ok, "%d slots, chunk %d: %d vs %d passes" % (slots, chunk, v["metrics"]["passes"],
                                                        c["metrics"]["passes"])


def _per_pass(log):
    """The run-length passes log, one (rows, prefill tokens, cost) per pass (two policies may
    cut the same passes into runs differently)."""
    return [(r, p, c) for n, r, p, c in zip(log["count"], log["rows"], log["prefill_tokens"],
                                            log["cost"]) for _ in range(n)]


def _tight(rng, mode):
    items = _trace(rng, rng.randint(2, 16), rng.choice([0, 300]))
    block = rng.choice([1, 4, 16])
    need = max(-(-(it["prompt"] + it["out"] - 1) // block) for it in items) * block
    kv, budget = need + block * rng.randint(0, 8), rng.randint(8, 600)
    sc = {"scheduler": "vllm", "workload": {"items": items},
          "server": {"slots": rng.randint(2, 8), "chunk": rng.choice([8, 32, 128]),
                     "max_num_batched_tokens": budget, "block_size": block, "kv_tokens": kv,
                     "preemption": mode, "cost": "unit",
                     "async_scheduling": rng.random() < 0.5,
                     "enable_prefix_caching": rng.random() < 0.5}}
    res = simulate(sc)
    m, log = res["metrics"], res["passes_log"]
    outs = sum(it["out"] for it in items)
    ok = (m["output_tokens"] == outs == m["slot_steps"]["useful"]
          and all(r["first_token"] <= r["done"] for r in res["requests"])
          and m["kv_peak_tokens"] <= kv and max(log["kv_tokens"]) <= kv
          and max(log["prefill_tokens"]) <= budget)
    if mode == "swap":
        base = sum(c * 1_000_000 for c in log["count"])           # unit cost: 1 per pass
        spent = sum(c * round(x * TICKS) for c, x in zip(log["count"], log["cost"]))
        ok = (ok and m["swap_out_blocks"] >= m["swap_in_blocks"]
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
        items.append(("vllm trace %d: no limit binding, synchronous -> == continuous" % i,
                      lambda r=rng.random(): _same_as_continuous(_sub(r))))
    for i in range(n):
        mode = ("recompute", "swap")[i % 2]
        items.append(("vllm trace %d: tight KV (%s): full output once, KV and token budgets "
                      "held%s" % (i, mode, "" if mode == "recompute" else ", swap time accounted"),
                      lambda r=rng.random(), mode=mode: _tight(_sub(r), mode)))
    items.append(("vllm: a pool short of the lockstep demand forces preemption",
                  _forced_preemption))
    return items


def _sub(x):
    return random.Random(x)
