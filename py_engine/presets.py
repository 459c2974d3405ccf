"""Named scenarios the page offers as buttons (and the CLI as `--scenario`): each tells one part of
the article's story. A preset is a partial scenario; normalize() fills in the rest."""

import copy

PRESETS = {
    "article": {"label": "Article default",
                "description": "64 requests arriving together, 8 slots, chunk 512, long-tail "
                               "lengths (skew 0.6), the article's cost model.",
                "scenario": {}},
    "equal": {"label": "Equal lengths",
              "description": "Every request has the same prompt and output: static wastes nothing, "
                             "speedup exactly 1.00.",
              "scenario": {"workload": {"skew": 0.0}}},
    "single": {"label": "One slot",
               "description": "slots = 1: both schedulers run one request at a time, speedup 1.00.",
               "scenario": {"server": {"slots": 1}}},
    "chat": {"label": "Chat (Poisson arrivals)",
             "description": "256 requests arriving as a Poisson stream at 4 req/s on 16 slots "
                            "(about 60% busy): continuous keeps TTFT low, static queues.",
             "scenario": {"workload": {"requests": 256, "arrival": {"kind": "poisson",
                                                                     "rate": 4.0}},
                          "server": {"slots": 16}}},
    "kv_pressure": {"label": "KV pressure (vllm)",
                    "description": "The vllm policy with a KV cache of 3,000 tokens: the batch "
                                   "fits at admission, overflows later, and requests are "
                                   "preempted (recompute).",
                    "scenario": {"scheduler": "vllm", "server": {"kv_tokens": 3000}}},
    "long_docs": {"label": "Long documents",
                  "description": "Prompts of ~4,000 tokens with short answers: prefill dominates, "
                                 "chunked prefill matters.",
                  "scenario": {"workload": {"prompt_mean": 4000, "output_mean": 64}}},
}


def presets():
    """PRESETS, each with `schedulers`: the lanes it shows (the base pair, plus its own scheduler
    when that is not one of them)."""
    from .policies import REGISTRY
    out = copy.deepcopy(PRESETS)
    base = [n for n in sorted(REGISTRY, key=lambda n: REGISTRY[n].order) if REGISTRY[n].base]
    for p in out.values():
        own = p["scenario"].get("scheduler")
        p["schedulers"] = base + ([own] if own and own not in base else [])
    return out
