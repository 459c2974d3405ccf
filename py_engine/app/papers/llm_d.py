"""llm-d: the ordering of its published router table (precise / approximate prefix scoring, load
only, random), on the published fleet: `scenario` builds it for this check (at half size) and for
bench/llm_d_routers.py (whole)."""

from ... import api

# llm-d/llm-d-kv-cache benchmarking/73-capacity/README.md (commit a746476b): 8 pods x 2 H100,
# Qwen3-32B, 307,328 KV tokens a pod; 150 groups sharing a 6,000-token system prompt, 1,200-token
# questions, 1,000 output tokens
PODS, GROUPS = 8, 150
ROUTERS = {"precise": {"kind": "llm_d", "prefix_scorer": "precise",
                       "weights": {"prefix": 3, "queue": 2, "kv": 2}},
           "estimated": {"kind": "llm_d", "prefix_scorer": "approximate",
                         "weights": {"prefix": 1, "queue": 1, "kv": 1}},
           "random": {"kind": "random"},
           "load": {"kind": "llm_d", "weights": {"prefix": 0, "queue": 1, "kv": 1}}}
# the published fleet at half its size (4 of 8 pods, 75 of 150 groups: the same groups a pod),
# so that it runs in the page in seconds; the bench runs the whole one
LLMD_REQUESTS, LLMD_RATE, LLMD_PODS, LLMD_GROUPS = 250, 8.0, 4, 75


def scenario(requests, rate, router, pods=PODS, groups=GROUPS):
    """The fleet of the published table: vllm on each pod (the request i is group i mod groups,
    lengths exact), one Poisson rate instead of the published load ladder."""
    return {"scheduler": "vllm",
            "workload": {"requests": requests, "arrival": {"kind": "poisson", "rate": rate},
                         "skew": 0, "prompt_mean": 1200, "output_mean": 1000,
                         "prefix": {"kind": "system", "groups": groups, "tokens": 6000}},
            "server": {"cost": {"kind": "roofline", "model": "qwen3-32b", "gpu": "h100-80gb",
                                "tp": 2},
                       "kv_tokens": 307_328, "slots": 256, "max_num_batched_tokens": 8192},
            "cluster": {"replicas": pods, "router": router}}


def p90(values):
    s = sorted(values)
    return s[max(1, (90 * len(s) + 99) // 100) - 1]


def llm_d_order():
    got = {}
    for name, router in ROUTERS.items():
        r = api.simulate(scenario(LLMD_REQUESTS, LLMD_RATE, router, LLMD_PODS, LLMD_GROUPS), None)
        got[name] = p90([q["ttft"] for q in r["requests"]]) / 1000
    ok = got["precise"] < got["estimated"] < min(got["random"], got["load"])
    return {"ours": "TTFT p90 " + ", ".join("%s %.2f s" % kv_ for kv_ in got.items()),
            "pass": ok, "detail": "bench/llm_d_routers.py's fleet at half size: %d pods, %d "
            "groups, %d requests at %g req/s (the published load ladder rises 3 → 60 QPS)" % (
                LLMD_PODS, LLMD_GROUPS, LLMD_REQUESTS, LLMD_RATE),
            "why": None if ok else "our order by TTFT differs from the published one"}


CHECKS = [
    {"id": "llm-d-routers", "title": "router order",
     "paper": "llm-d", "fn": llm_d_order,
     "source": "github.com/llm-d/llm-d-kv-cache benchmarking/73-capacity/README.md (commit "
               "a746476b)",
     "workload": "8 pods × 2 H100, Qwen3-32B, 150 groups × 6,000-token prefix, 1,200-token "
                 "questions, 1,000 output tokens",
     "claim": "precise prefix scoring beats estimated, which beats load-only and random",
     "published": "TTFT p90 0.542 s precise, 31.083 estimated, 92.551 random, 94.865 load",
     "tolerance": "the order precise < estimated < random, load (by TTFT)"},
]
