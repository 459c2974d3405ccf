"""Mooncake (Qin et al., FAST'25): the conversation trace's block reuse."""

from ...scenario.prepared import prepare
from ...workload.blocks import block_reuse, chains
from ...workload.generator import generate

def mooncake_reuse():
    c = chains(generate(prepare({"workload": {"trace": {"name": "mooncake-conv-2025",
                                                        "count": 12_031}}})["workload"]))
    x = 100 * block_reuse(c)
    return {"ours": "%.2f %%" % x, "pass": round(x, 2) == 36.64,
            "detail": "a cache-only replay of the shipped trace's 12,031 hash-id lists "
            "(workload/blocks.py), no eviction"}


CHECKS = [
    {"id": "mooncake-reuse", "title": "36.64 % block reuse",
     "paper": "Mooncake (Qin et al., FAST'25)", "fn": mooncake_reuse,
     "source": "github.com/kvcache-ai/Mooncake FAST25-release/traces/conversation_trace.jsonl "
               "(commit 3b5a594), counted in ../shared/traces/mooncake/README.md",
     "workload": "the conversation trace, 12,031 requests, 512-token blocks",
     "claim": "block references an infinite cache reuses", "published": "36.64 %",
     "tolerance": "to 0.01 %"},
]
