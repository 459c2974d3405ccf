"""Named scenarios the page offers as buttons (and the CLI as `--scenario`): each tells one part of
the article's story. A preset is a partial scenario; normalize() fills in the rest."""

import copy

from ..policies import REGISTRY

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
    "kv_pressure": {"label": "KV pressure",
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
    out = copy.deepcopy(PRESETS)
    for p in out.values():
        p["schedulers"] = _lanes(p["scenario"])
    return out


def _lanes(scenario):
    """The base pair, plus the scenario's own scheduler when it is not one of them."""
    base = [n for n in sorted(REGISTRY, key=lambda n: REGISTRY[n].order) if REGISTRY[n].base]
    own = scenario.get("scheduler")
    return base + ([own] if own and own not in base else [])


# Story mode: the article's argument as steps a lecturer walks through (PageDown / PageUp) and a
# blogger can embed (?embed=story&story=N). Each step is a scenario like a preset, plus what to
# look at: `highlight` names a figure (py_engine.app.figures.FIGURES) and `focus` a part of it (a
# lane's scheduler, "blocks": the block view of the paged KV pool under the vllm lane, or
# "routers": the fleet figure's comparison of every router, which lecture mode shows on that
# step only).
# the fleet steps' traffic: five system prompts that a replica's KV pool cannot all hold
_FLEET = {"scheduler": "vllm",
          "workload": {"requests": 160, "arrival": {"kind": "poisson", "rate": 8.0},
                       "output_mean": 64,
                       "prefix": {"kind": "system", "groups": 5, "tokens": 2000}},
          "server": {"kv_tokens": 8000}}
# the sizing steps' traffic and SLO, one idea a step: too few slots, too many, the one that fits
_SIZING = {"workload": {"requests": 256, "arrival": {"kind": "poisson", "rate": 12.0}},
           "slo": {"ttft_ms": 5000.0, "tpot_ms": 40.0}}

STORY = [
    {"title": "Static batching holds its slots",
     "text": "Sixty-four requests with long-tailed output lengths on eight slots. Static batching "
             "admits eight at a time and keeps every slot until the longest request of the "
             "batch ends: the hatched cells are slots held with nothing to compute.",
     "scenario": {}, "highlight": "timeline", "focus": "static"},
    {"title": "Continuous batching refills at once",
     "text": "The same requests on the same GPU. When a request finishes, the next one takes its "
             "slot at the very next pass, so no slot waits for a slow neighbour and the run "
             "needs far fewer passes: that is the headline's speedup.",
     "scenario": {}, "highlight": "timeline", "focus": "continuous"},
    {"title": "The win comes from uneven lengths",
     "text": "Make every request the same length (skew 0) and static batching wastes nothing: "
             "continuous batching is no faster, ×1.00. The sweep raises the skew; the more "
             "uneven the outputs, the more padding static pays and the larger the lead.",
     "scenario": {"workload": {"skew": 0.0}}, "highlight": "skew"},
    {"title": "The prefill stall, and chunking",
     "text": "A long prompt's prefill is one huge pass, and every user decoding in the same "
             "batch waits for it. Chunked prefill spreads the prompt over passes of a bounded "
             "size, so the others keep streaming while it is read.",
     "scenario": {"workload": {"prompt_mean": 4000, "output_mean": 64}}, "highlight": "stall"},
    {"title": "KV memory is the real cap",
     "text": "Every resident token keeps its keys and values in the paged KV pool, in blocks of "
             "16 tokens. This server has 32 slots but a pool of 6,000 tokens: the pool is over "
             "80% full for most of the run while most slots stay empty, and vLLM takes longer "
             "than the continuous lane, which assumes unlimited memory. Memory sets the batch.",
     "scenario": {"scheduler": "vllm", "workload": {"output_mean": 256},
                  "server": {"slots": 32, "kv_tokens": 6000}},
     "highlight": "timeline", "focus": "blocks"},
    {"title": "Preemption: when the pool overflows",
     "text": "vLLM admits a request when its prompt fits, but outputs keep growing. When the "
             "next token has no block, the newest request is preempted: its blocks are freed "
             "(▲) and it is computed again later. Work is wasted; no token is refused.",
     "scenario": {"scheduler": "vllm", "server": {"kv_tokens": 3000}},
     "highlight": "timeline", "focus": "blocks"},
    # tests/engine/test_story.py holds each number to the engine's
    {"title": "Too few slots: requests queue",
     "text": "Twelve requests a second, and an SLO: 90% of requests within TTFT 5 s and TPOT "
             "40 ms. On 16 slots requests arrive faster than they finish and wait for a slot: "
             "p95 TTFT is 19 s, and only 32% get their first token within 5 s. Fewer slots, "
             "left in the sweep, fail on TTFT too.",
     "scenario": dict(_SIZING, server={"slots": 16}), "highlight": "slots"},
    {"title": "Too many slots: every pass slows",
     "text": "With 64 slots nobody waits long (p95 TTFT 0.19 s), but every pass computes more "
             "sequences and takes longer: p95 TPOT is 48.8 ms, over its 40 ms limit, and only "
             "78% of requests keep within it. At most 43 run at once, so 128 slots or 1,024 "
             "change nothing: the sweep is flat to the right.",
     "scenario": dict(_SIZING, server={"slots": 64}), "highlight": "slots"},
    {"title": "Goodput: the SLO sizes the server",
     "text": "Goodput counts only the requests within every limit; the sweep's line “within "
             "the SLO” is their share. It rises while more slots shorten the queue, falls once "
             "passes slow, and only 32 slots reach the 90% target: the sizing sweep recommends "
             "max_num_seqs = 32.",
     "scenario": dict(_SIZING, server={"slots": 32}), "highlight": "slots"},
    # a fleet (SPEC §8): the same traffic behind three routers (tests/engine/test_story.py)
    {"title": "A fleet: round robin spreads every prefix thin",
     "text": "Four replicas of the vLLM server, each with an 8,000-token KV pool, share 160 "
             "requests that start with one of five 2,000-token system prompts. Round robin deals "
             "them out in turn, so every replica must cache all five prompts: its pool cannot, "
             "and only a third of the prompt tokens hit the prefix cache. Prefills are redone, "
             "requests preempted, and p95 TTFT is about 8 s.",
     "scenario": dict(_FLEET, cluster={"replicas": 4, "router": "round_robin"}),
     "highlight": "fleet"},
    {"title": "Pure affinity piles the load on one replica",
     "text": "The same traffic through llm-d's prefix scorer alone (queue and KV weights 0): each "
             "request follows its prompt's cached prefix, and 87% of prompt tokens hit. But three "
             "prompts first landed on one replica, so it serves 96 of the 160 requests while "
             "another serves none: the busy one queues, and p95 TTFT is again about 8 s.",
     "scenario": dict(_FLEET, cluster={"replicas": 4, "router": {
         "kind": "llm_d", "weights": {"queue": 0.0, "kv": 0.0}}}),
     "highlight": "fleet"},
    {"title": "Cache-aware routing: hits, no idle replica",
     "text": "SGLang's cache-aware router follows a prefix match too, but sends a new prompt to "
             "the replica with the smallest prefix tree, and to the least loaded one when loads "
             "drift apart. Every replica gets work, 88% of prompt tokens hit and p95 TTFT falls "
             "to 0.18 s; every request meets the SLO. Of all eight routers only llm-d's full "
             "scorers come close; the five blind to prefixes keep at most 57% of hits.",
     "scenario": dict(_FLEET, cluster={"replicas": 4, "router": "cache_aware"}),
     "highlight": "fleet", "focus": "routers"},
]


def story():
    """STORY, each step with `schedulers`: the lanes it shows (as presets())."""
    out = copy.deepcopy(STORY)
    for step in out:
        step["schedulers"] = _lanes(step["scenario"])
    return out
