"""vLLM (Kwon et al., SOSP'23): Fig. 2 (KV memory holding tokens) and Fig. 13 (batched requests)
against Orca's three reservation modes, on one run of each system."""

from ... import api
from ...model import kv
from ...policies import examples
from ...scenario.prepared import prepare
from ...workload.generator import generate

ORCA_MODES = ("max", "pow2", "oracle")
KV_WINDOW = 300          # requests of the Azure conversation trace whose prompt + output fit 2,048


def _orca_code(mode):
    code = next(e["code"] for e in examples.sources() if e["name"] == "orca")
    return code.replace('RESERVE = "max"', 'RESERVE = "%s"' % mode)


def _kv_workload():
    """The first KV_WINDOW requests of azure-conv-2023 that fit OPT's 2,048 positions, all at once
    (the systems' batch at saturation), and OPT-13B's KV pool on one A100-40GB."""
    wl = prepare({"workload": {"trace": {"name": "azure-conv-2023", "count": 2 * KV_WINDOW}}})
    _, prompt, out = generate(wl["workload"])[:3]
    items = [{"arrive": 0, "prompt": p, "out": o} for p, o in zip(prompt, out) if p + o <= 2048]
    pool = kv.kv_from_params({"model": "opt-13b", "gpu": "a100-40gb"})["tokens"]
    return items[:KV_WINDOW], pool


def _kv_runs():
    items, pool = _kv_workload()
    cost = {"kind": "roofline", "model": "opt-13b", "gpu": "a100-40gb"}
    base = {"workload": {"items": items}, "server": {"slots": 256, "kv_tokens": pool,
                                                     "cost": cost}}
    runs = {m: api.simulate(dict(base, scheduler="custom", custom={"name": "orca-" + m,
                                                                  "code": _orca_code(m)}))
            for m in ORCA_MODES}
    runs["vllm"] = api.simulate(dict(base, scheduler="vllm"))
    return runs, pool


def _mean_batch(res):
    """Requests in the batch, averaged over time (each pass weighted by its duration)."""
    log = res["passes_log"]
    span = [n * (a + b) / 2 for n, a, b in zip(log["count"], log["cost"], log["cost_last"])]
    return sum(t * rows for t, rows in zip(span, log["rows"])) / sum(span)


def _token_share(res, reserve):
    """Share of the KV memory held for the requests that holds their tokens, over the run: a
    request's tokens grow through its prefill and then by one a decode pass to prompt + out; it
    holds reserve(prompt, out) from admission to its end, or (reserve None: paged) its tokens
    rounded up to whole 16-token blocks, the last block half full on average."""
    held = used = 0.0
    for q in res["requests"]:
        prefill, decode = q["first_token"] - q["admit"], q["done"] - q["first_token"]
        tokens = q["prompt"] / 2 * prefill + (q["prompt"] + q["out"] / 2) * decode
        used += tokens
        held += tokens + 7.5 * (prefill + decode) if reserve is None else \
            reserve(q["prompt"], q["out"]) * (prefill + decode)
    return used / held


def _reserve(mode):
    if mode == "max":
        return lambda p, o: max(2048, p + o)
    if mode == "pow2":
        return lambda p, o: 1 << (p + o - 1).bit_length()
    if mode == "oracle":
        return lambda p, o: p + o
    return None                                       # vLLM: paged


def vllm_fig2():
    runs, _ = _kv_runs()
    share = {m: 100 * _token_share(r, _reserve(m)) for m, r in runs.items()}
    pre = [share[m] for m in ORCA_MODES]
    ok = abs(share["vllm"] - 96.3) <= 5 and min(pre) >= 20.4 - 10 and max(pre) <= 38.2 + 10
    return {"ours": "Orca Max %.1f %%, Pow2 %.1f %%, Oracle %.1f %% vs vLLM %.1f %%" % (
                share["max"], share["pow2"], share["oracle"], share["vllm"]),
            "pass": ok, "detail": "tokens held over KV memory reserved, time-weighted over each "
            "system's own run of the same %d requests" % KV_WINDOW,
            "why": None if ok else "our pre-paging systems waste only what they reserve ahead "
            "(Oracle: the not-yet-generated tail); the paper's bars also count the allocator's "
            "external fragmentation, which the engine does not model"}


def vllm_fig13():
    runs, pool = _kv_runs()
    b = {m: _mean_batch(r) for m, r in runs.items()}
    order = b["max"] < b["pow2"] < b["oracle"] < b["vllm"]
    vo, vm = b["vllm"] / b["oracle"], b["vllm"] / b["max"]
    ok = order and abs(vo / 2.2 - 1) <= 0.25 and abs(vm / 4.3 - 1) <= 0.25
    return {"ours": "Orca Max %.1f, Pow2 %.1f, Oracle %.1f, vLLM %.1f requests: vLLM ×%.2f "
                    "Oracle, ×%.2f Max" % (b["max"], b["pow2"], b["oracle"], b["vllm"], vo, vm),
            "pass": ok, "detail": "mean requests in the batch (time-weighted), %d Azure "
            "conversation requests at once, a KV pool of %d tokens" % (KV_WINDOW, pool),
            "why": None if ok else (
                "the order holds; the ratios are smaller because the workload differs: ShareGPT "
                "is not shipped, and Azure's conversation prompts are long against their "
                "outputs, so reserving the output ahead (Oracle) or the full 2,048 (Max) wastes "
                "less than on ShareGPT" if order else "the order of the four systems differs")}


CHECKS = [
    {"id": "vllm-fig2", "title": "Fig. 2: KV memory used",
     "paper": "vLLM (Kwon et al., SOSP'23)", "fn": vllm_fig2,
     "source": "arXiv 2309.06180, §1 and Fig. 2 (memory held by token states)",
     "workload": "the paper: OPT-13B on ShareGPT (§6.2); ours: OPT-13B's KV pool on an "
                 "A100-40GB, %d Azure conversation requests" % KV_WINDOW,
     "claim": "pre-paging systems keep 20.4–38.2 % of KV memory for token states, vLLM 96.3 %",
     "published": "20.4–38.2 % vs 96.3 %",
     "tolerance": "vLLM within 5 points; each pre-paging system within 10 points of the range"},
    {"id": "vllm-fig13", "title": "Fig. 13: batched requests",
     "paper": "vLLM (Kwon et al., SOSP'23)", "fn": vllm_fig13,
     "source": "arXiv 2309.06180, §6.2 and Fig. 13a (mean batched requests)",
     "workload": "the paper: OPT-13B, ShareGPT; ours: as vllm-fig2, all requests at once",
     "claim": "vLLM batches 2.2× more requests than Orca (Oracle), 4.3× more than Orca (Max)",
     "published": "×2.2 Oracle, ×4.3 Max (order Max < Pow2 < Oracle < vLLM)",
     "tolerance": "the order, and each ratio within 25 %"},
]
