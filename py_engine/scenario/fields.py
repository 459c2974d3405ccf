"""Every scenario field, declared once.

A field is its dotted path, its type and range, its default and unit, the words the page shows (label,
hint, description), its URL name and CLI flag, when it applies and whether it can be swept.
Everything else derives from this table: `scenario.normalize` (validation and defaults), the CLI's
flags, the sweep parameters, the page's controls and URL codec (through `schema()`), the README's
parameter list (a test keeps it in step) and the browser tests' URL map.


What each attribute means: scenario/field.py.
"""

from ..model.roofline import DEFAULT_FIT, FIT_CHOICES
from ..workload.blocks import ID_SPAN
from ..workload.generator import MAX_ARRIVE
from ..workload.traces import NAMES
from .field import Field

TRACES = list(NAMES)      # the production traces (workload/traces.py), one list for every `when`

MAX_REQUESTS = 1_000_000
MAX_ITEM_PROMPT = 10_000_000
MAX_ITEM_OUT = 1_000_000
PAGE_MAX_REQUESTS = 20_000

GROUPS = {"scheduler": "Scheduler", "workload": "Workload", "server": "Server",
          "cluster": "Fleet",
          "slo": "Service-level objectives"}


VLLM = ("vllm",)
# the generator's fields are worth showing only while it makes the requests (no production trace)
GENERATED = {"workload.trace.name": ["none"]}
# A pool's server overrides: an example that works with the cost model chosen (a TP is the
# roofline's; under the article cost {"cost": {"tp": 2}} is an unknown key of a custom cost).
POOL_HINT = ('Server fields that differ, as JSON, e.g. {"slots": 16}; a TP needs the roofline '
             'cost. Empty = as the server.')
POOL_HINT_WHEN = [({"server.cost": ["roofline"]}, 'Server fields that differ, as JSON, e.g. '
                   '{"cost": {"tp": 2}} (tensor parallel). Empty = as the server.')]

FIELDS = [
    Field("scheduler", "choice", "continuous",
          "Scheduling policy: static (request-level), continuous (Orca iteration-level), vllm, or "
          "custom (the reader's own code: custom.code).",
          choices="schedulers", label="Scheduler", control=False),
    Field("custom.name", "text", "my-policy", "The reader's policy's name (its lane's title).",
          max=60, label="Policy name", control=False, url="policy_name",
          when={"scheduler": ["custom"]}),
    Field("custom.code", "text", "",
          "scheduler = custom: Python source defining one subclass of Policy (from "
          "py_engine.policies import Policy), with the built-in policies' hooks and verbs "
          "(policies/base.py, sim/view.py); examples: py_engine/policies/examples/.",
          max=200_000, label="Policy code", control=False, url="policy_code",
          url_codec="base64url",
          when={"scheduler": ["custom"]}),
    # ---- workload
    Field("workload.requests", "int", 64,
          "Number of generated requests (ignored when workload.items is given).",
          min=1, max=MAX_REQUESTS, unit="requests", label="Requests", sweep=True,
          slider=(1, 512, 1), page_max=PAGE_MAX_REQUESTS, shown_if=GENERATED),
    Field("workload.seed", "int", 0,
          "Seed of the trace generator; same seed, same trace, natively and in the browser.",
          min=0, max=2**32 - 1, label="Seed", sweep=True),
    Field("workload.skew", "float", 0.6,
          "Length skew: 0 = every request exactly the mean; larger = same mean, heavier tail.",
          min=0.0, max=0.95, label="Length skew", sweep=True, slider=(0, 0.95, 0.05),
          hint="0 = every request the same length; higher = long tail.", shown_if=GENERATED),
    Field("workload.output_mean", "int", 96,
          "Mean output length (the generator keeps it as skew grows).",
          min=1, max=100_000, unit="tokens", label="Mean output", sweep=True,
          slider=(1, 1000, 1), shown_if=GENERATED),
    Field("workload.prompt_mean", "int", 200, "Mean prompt length.",
          min=1, max=1_000_000, unit="tokens", label="Mean prompt", sweep=True, shown_if=GENERATED),
    Field("workload.arrival.kind", "choice", "burst",
          "Arrivals: burst (all at 0), poisson (rate req/s), gap (one every `every`).",
          choices=["burst", "poisson", "gap"], url="arrival", label="Arrivals", shorthand=True,
          hint="burst = all at t = 0; poisson = random, at the rate below; gap = evenly spaced.", shown_if=GENERATED),
    Field("workload.arrival.rate", "float", 20.0,
          "Poisson arrival rate (under the unit cost one pass counts as 1 ms).",
          min=1e-6, max=1e9, unit="req/s", label="Arrival rate", sweep=True,
          when={"workload.arrival.kind": ["poisson"]}, shown_if=GENERATED),
    Field("workload.arrival.every", "float", 50.0,
          "Gap between arrivals for kind=gap (ms, or passes under the unit cost).",
          min=0.0, max=1e6, unit="cost unit", label="Arrival gap", sweep=True,
          when={"workload.arrival.kind": ["gap"]}, shown_if=GENERATED),
    Field("workload.prefix.kind", "choice", "none",
          "Shared prefixes: none; system (every request starts with one of `groups` system "
          "prompts of `tokens` tokens); conversation (requests are turns of conversations: each "
          "turn's prompt is the conversation so far, earlier prompts and answers, plus a new "
          "message).",
          choices=["none", "system", "conversation"], url="prefix", label="Shared prefixes",
          shorthand=True,
          hint="Prompts that start alike: the prefix cache (vllm) computes them once.", shown_if=GENERATED),
    Field("workload.prefix.tokens", "int", 1024, "System prompt length (prepended to each prompt).",
          min=1, max=1_000_000, unit="tokens", label="System prompt", sweep=True,
          when={"workload.prefix.kind": ["system"]}, shown_if=GENERATED),
    Field("workload.prefix.groups", "int", 1,
          "Distinct system prompts; request i uses prompt i mod groups.",
          min=1, max=MAX_REQUESTS, label="System prompts", sweep=True,
          when={"workload.prefix.kind": ["system"]}, shown_if=GENERATED),
    Field("workload.prefix.turns", "int", 4,
          "Turns per conversation (request i is turn i mod turns of conversation i div turns, "
          "before sorting by arrival).",
          min=1, max=64, label="Turns", sweep=True,
          when={"workload.prefix.kind": ["conversation"]}, shown_if=GENERATED),
    Field("workload.prefix.think", "float", 2000.0,
          "Time between a conversation's turns (ms, or passes under the unit cost); its first "
          "turn arrives as the arrival process says.",
          min=0.0, max=1e6, unit="cost unit", label="Think time", sweep=True,
          when={"workload.prefix.kind": ["conversation"]}, shown_if=GENERATED),
    Field("workload.trace.name", "choice", "none",
          "A production trace instead of the generator: none, azure-code-2023 (8,819 requests) "
          "or azure-conv-2023 (19,366), the Azure LLM inference traces 2023 (Microsoft Azure, "
          "CC BY 4.0); mooncake-conv-2025 (12,031) or mooncake-synthetic-2025 (3,993), the "
          "Mooncake FAST'25 traces (Moonshot AI, Apache-2.0), whose prompts carry hash ids that "
          "prefix caches match on (workload/traces.py).",
          choices=["none", *TRACES], url="trace",
          label="Production trace", shorthand=True,
          hint="Azure LLM inference traces 2023 (Microsoft Azure, CC BY 4.0); Mooncake FAST'25 "
               "traces with shared prefixes (Moonshot AI, Apache-2.0)."),
    Field("workload.trace.start", "int", 0, "The window's first request (arrival order).",
          min=0, max=19_365, label="Window start",
          when={"workload.trace.name": TRACES}),
    Field("workload.trace.count", "int", 1000, "Requests in the window.",
          min=1, max=19_366, unit="requests", label="Window size", sweep=True,
          page_max=PAGE_MAX_REQUESTS,
          when={"workload.trace.name": TRACES}),
    Field("workload.trace.rate_scale", "float", 1.0,
          "Arrival rate multiplier: the recorded offsets are divided by it (2 = twice the load).",
          min=0.01, max=100.0, label="Rate scale", sweep=True,
          when={"workload.trace.name": TRACES}),
    Field("workload.trace.keep", "float", 1.0,
          "Share of the window's requests kept, drawn with workload.seed (sub-sampling).",
          min=0.001, max=1.0, label="Keep share",
          when={"workload.trace.name": TRACES}),
    Field("workload.hash_block", "int", 512,
          "Tokens per id of a trace's hash_ids (the Mooncake traces: 512, the only value "
          "accepted with them).",
          min=1, max=65_536, unit="tokens", label="Hash block", control=False),
    Field("workload.items", "items", None,
          "Explicit trace [{arrive, prompt, out, prefix_id?, prefix_len?, priority?, hash_ids?}, "
          "...]; wins "
          "over the generator. Requests get ids 0..n-1 in arrival order (stable sort by arrive).",
          min=1, max=MAX_REQUESTS, label="Trace", control=False),
    # ---- server
    Field("server.slots", "int", 8, "Batch slots (= max_num_seqs).",
          min=1, max=4096, unit="sequences", label="Slots (max_num_seqs)", sweep=True,
          slider=(1, 4096, "log"), hint="Sequences that share one forward pass."),
    Field("server.chunk", "int", 512,
          "Chunked-prefill size: prompt tokens a prefilling sequence processes per pass (vllm: "
          "long_prefill_token_threshold, which vLLM ignores for a lone request); 0 = off, as "
          "vLLM's default: a prompt prefills whole (vllm: as far as the token budget allows).",
          min=0, max=65_536, unit="tokens", label="Chunk (long_prefill_token_threshold)", sweep=True,
          slider=(0, 4096, 16),
          hint="Prompt tokens a sequence prefills per pass; 0 = off (vLLM's default)."),
    Field("server.cost", "cost", "article",
          "Pass cost model: article (22.0 + 0.35*rows + 0.06*prefill_tokens ms), unit (1 per pass), "
          "custom {fixed_ms, per_row_ms, per_prefill_token_ms, per_context_token_ms} (what a "
          "calibration fits), or roofline {kind: roofline, model, "
          "gpu, tp, ...}: a pass's time from the model's FLOPs and bytes on the GPU (roofline.py).",
          choices=["article", "unit", "custom", "roofline"],
          object_choices=["custom", "roofline"], unit="ms", label="Cost model",
          hint="roofline: a real model on a real GPU; longer contexts cost more."),
    Field("server.cost.fixed_ms", "float", 22.0, "Custom cost: fixed part of every pass (must be > 0).",
          min=1e-6, max=10_000.0, unit="ms", label="Fixed per pass", form="custom"),
    Field("server.cost.per_row_ms", "float", 0.35, "Custom cost: per resident row.",
          min=0.0, max=100.0, unit="ms", label="Per row", form="custom"),
    Field("server.cost.per_prefill_token_ms", "float", 0.06,
          "Custom cost: per prefill token processed in the pass.",
          min=0.0, max=10.0, unit="ms", label="Per prefill token", form="custom"),
    Field("server.cost.per_context_token_ms", "float", 0.0,
          "Custom cost: per token of context every row of the pass reads from its KV cache (a "
          "calibration fits it; 0 = passes of a run cost the same).",
          min=0.0, max=1.0, unit="ms", label="Per context token", form="custom"),
    Field("server.cost.model", "choice", "llama-3.1-8b",
          "Roofline: the model (shapes from its config.json; deployments.py cites each).",
          choices="models", label="Model", form="roofline"),
    Field("server.cost.gpu", "choice", "h100-80gb",
          "Roofline: the GPU (dense tensor TFLOPS, HBM bandwidth, memory and interconnect from "
          "the vendor's datasheet; deployments.py cites each).",
          choices="gpus", label="GPU", form="roofline"),
    Field("server.cost.tp", "int", 1, "Roofline: tensor-parallel GPUs the model is split over.",
          min=1, max=64, unit="GPUs", label="Tensor parallel (tensor_parallel_size)", form="roofline"),
    Field("server.cost.dtype", "choice", "bf16", "Roofline: weights' and activations' type.",
          choices=["bf16", "fp16", "fp8"], label="Weights (dtype)", form="roofline"),
    Field("server.cost.kv_dtype", "choice", "bf16", "Roofline: the KV cache's type.",
          choices=["bf16", "fp16", "fp8"], label="KV cache type (kv_cache_dtype)", form="roofline"),
    Field("server.cost.gpu_memory_utilization", "float", 0.92,
          "Roofline: the share of GPU memory vLLM may use (its default 0.92); what the weights "
          "leave of it is the KV pool of kv_tokens = auto.",
          min=0.05, max=1.0, label="GPU memory used (gpu_memory_utilization)", url="gpu_mem", form="roofline"),
    Field("server.cost.fit", "choice", DEFAULT_FIT,
          "Roofline: the fit its efficiencies and overheads default to: vllm-2025 (vLLM 0.12-era "
          "serving on H100, AIConfigurator's silicon measurements) or splitwise-2023 (the "
          "Splitwise measurements of 2023 serving software); python -m py_engine validate.",
          choices=list(FIT_CHOICES), label="Fitted to", form="roofline",
          hint="Which public measurements the empty fields below take their values from."),
    Field("server.cost.flops_eff", "float", None,
          "Roofline: achieved share of the peak tensor FLOPS in the linear layers; null = the "
          "fit's value (server.cost.fit; python -m py_engine validate).",
          min=0.01, max=1.0, nullable=True, label="FLOPS efficiency", form="roofline", empty="fitted",
          hint="Empty = fitted for this GPU."),
    Field("server.cost.attn_eff", "float", None,
          "Roofline: achieved share of the peak in attention; null = fitted for the GPU.",
          min=0.01, max=1.0, nullable=True, label="Attention efficiency", form="roofline", empty="fitted",
          hint="Empty = fitted."),
    Field("server.cost.bw_eff", "float", None,
          "Roofline: achieved share of the HBM bandwidth; null = fitted for the GPU.",
          min=0.01, max=1.0, nullable=True, label="Bandwidth efficiency", form="roofline", empty="fitted",
          hint="Empty = fitted."),
    Field("server.cost.link_eff", "float", None,
          "Roofline: achieved share of the interconnect bandwidth in all-reduces; null = fitted.",
          min=0.01, max=1.0, nullable=True, label="Link efficiency", form="roofline", empty="fitted",
          hint="Empty = fitted."),
    Field("server.cost.overhead_ms", "float", None,
          "Roofline: fixed time of every pass (scheduling, launches); null = fitted.",
          min=0.0, max=1000.0, nullable=True, unit="ms", label="Overhead per pass",
          form="roofline", empty="fitted", hint="Empty = fitted."),
    Field("server.cost.layer_us", "float", None,
          "Roofline: fixed time per layer per pass (kernel launches); null = fitted.",
          min=0.0, max=10_000.0, nullable=True, unit="us", label="Overhead per layer",
          form="roofline", empty="fitted", hint="Empty = fitted."),
    Field("server.cost.row_us", "float", None,
          "Roofline: fixed time per row per pass (the scheduler's and sampler's per-sequence "
          "work); null = fitted.",
          min=0.0, max=10_000.0, nullable=True, unit="us", label="Overhead per row",
          form="roofline", empty="fitted", hint="Empty = fitted."),
    Field("server.cost.allreduce_us", "float", None,
          "Roofline: latency of one all-reduce (two per layer when tp > 1); null = fitted.",
          min=0.0, max=10_000.0, nullable=True, unit="us", label="All-reduce latency",
          form="roofline", empty="fitted", hint="Empty = fitted."),
    Field("server.max_num_batched_tokens", "int", 2048,
          "vllm: per-pass token budget (decodes count 1, prefill chunks their size).",
          min=1, max=1_000_000, unit="tokens", label="Token budget / pass (max_num_batched_tokens)", applies_to=VLLM,
          sweep=True),
    Field("server.block_size", "int", 16, "vllm: KV-cache block size.",
          min=1, max=1024, unit="tokens", label="Block size (block_size)", applies_to=VLLM, sweep=True),
    Field("server.kv_tokens", "int", None,
          "vllm: usable KV-cache pool in tokens (vLLM's num_gpu_blocks - 1 blocks: it keeps a "
          "null block); null = unlimited; auto = what the roofline deployment's memory leaves "
          "after its weights (the KV calculator's formula).",
          min=1, max=10**10, nullable=True, words=["auto"], unit="tokens", label="KV capacity",
          applies_to=VLLM, sweep=True, hint="Empty = unlimited; auto = the deployment's.",
          hint_when=[({"server.cost": ["roofline"]},
                      "Empty = unlimited. auto: the KV the GPU leaves after the weights (the "
                      "Deployment panel's tokens fit).")]),
    Field("server.enable_prefix_caching", "bool", True,
          "vllm: prefix caching (vLLM's enable_prefix_caching): full blocks are kept by content, "
          "so a prompt that starts like an earlier one, or a preempted request coming back, "
          "re-uses them.",
          label="Prefix caching (enable_prefix_caching)", applies_to=VLLM, url="prefix_caching"),
    Field("server.async_scheduling", "bool", True,
          "vllm: async scheduling (vLLM's async_scheduling): step k+1 is planned while step k "
          "runs, so what step k frees is used from step k+2.",
          label="Async scheduling (async_scheduling)", applies_to=VLLM, url="async"),
    Field("server.scheduler_reserve_full_isl", "bool", True,
          "vllm: admit a waiting request only if its whole prompt fits in the free KV blocks "
          "(vLLM's scheduler_reserve_full_isl), not just its first chunk.",
          label="Full-prompt admission", applies_to=VLLM, url="full_isl"),
    Field("server.policy", "choice", "fcfs",
          "vllm: waiting order and preemption victim: fcfs (arrival order; the newest running "
          "request is preempted) or priority (each request's priority, lower first, then "
          "arrival; the worst running request is preempted).",
          choices=["fcfs", "priority"], label="Scheduling policy (scheduling_policy)", applies_to=VLLM),
    Field("server.preemption", "choice", "recompute",
          "vllm: what happens to a preempted request's KV: recompute (vLLM: dropped, prefilled "
          "again; the prefix cache may still hold some) or swap (our extension: moved to host "
          "memory and back).",
          choices=["recompute", "swap"], label="Preemption", applies_to=VLLM),
    Field("server.pcie_gb_s", "float", 25.0,
          "vllm swap: host<->GPU bandwidth used to cost a swap transfer.",
          min=1e-3, max=1e4, unit="GB/s", label="PCIe bandwidth", applies_to=VLLM,
          shown_if={"server.preemption": ["swap"]}),
    Field("server.kv_bytes_per_token", "int", 131_072,
          "vllm swap: KV bytes per token (Llama-3-8B bf16 = 131,072).",
          min=1, max=10**9, unit="bytes", label="KV bytes / token", applies_to=VLLM,
          shown_if={"server.preemption": ["swap"]}),
    # ---- service-level objectives (vLLM's benchmark names: vllm/benchmarks/serve.py)
    # ---- cluster: replicas behind a router (fleet/; SPEC §8)
    Field("cluster.replicas", "int", 1,
          "Identical replicas of the server, each its own scheduler, KV pool and prefix cache, "
          "behind cluster.router (1: the single server).",
          min=1, max=64, unit="replicas", label="Replicas", sweep=True,
          hint="Above 1: the fleet figure runs them behind the router; the other figures stay "
               "one server."),
    Field("cluster.router.kind", "choice", "round_robin",
          "How the router picks a replica for each arriving request: round_robin (request k to "
          "replica k mod N), random (seeded), least_outstanding (fewest of its requests not "
          "done), power_of_two (the less loaded of two drawn at random), vllm_dp (vLLM's "
          "data-parallel rule: lowest 4 * waiting + running), cache_aware (SGLang / vllm-router: "
          "its own prefix tree, balance thresholds), llm_d (llm-d's weighted scorers: prefix, "
          "queue, KV utilisation), kv_cost (NVIDIA Dynamo's KV router: prefill and decode "
          "blocks). Each rule and its source: py_engine/fleet/routers/.",
          choices=["round_robin", "random", "least_outstanding", "power_of_two", "vllm_dp",
                   "cache_aware", "llm_d", "kv_cost"],
          url="router", label="Router", shorthand=True,
          hint="The fleet figure also runs every other router on the same trace."),
    Field("cluster.router.seed", "int", 0, "Seed of the router's random draws (and ties).",
          min=0, max=2**32 - 1, url="router_seed", label="Router seed",
          when={"cluster.router.kind": ["random", "power_of_two", "llm_d", "kv_cost"]}),
    Field("cluster.router.cache_threshold", "float", 0.3,
          "cache_aware: the share of a prompt its prefix tree must match to follow the match "
          "(else the replica with the smallest tree).",
          min=0.0, max=1.0, label="Cache threshold",
          when={"cluster.router.kind": ["cache_aware"]}),
    Field("cluster.router.balance_abs_threshold", "int", 64,
          "cache_aware: loads are imbalanced when max - min exceeds this (and the ratio below).",
          min=0, max=1_000_000, unit="requests", label="Balance: absolute",
          url="balance_abs", when={"cluster.router.kind": ["cache_aware"]}),
    Field("cluster.router.balance_rel_threshold", "float", 1.5,
          "cache_aware: ... and max exceeds min times this; imbalanced loads go to the least "
          "loaded replica.",
          min=1.0, max=1000.0, label="Balance: ratio", url="balance_rel",
          when={"cluster.router.kind": ["cache_aware"]}),
    Field("cluster.router.prefix_scorer", "choice", "precise",
          "llm_d: precise (the replicas' own prefix caches, as KV events report them) or "
          "approximate (the router's own record of where it sent each prefix).",
          choices=["precise", "approximate"], label="Prefix scorer",
          when={"cluster.router.kind": ["llm_d"]}),
    Field("cluster.router.weights.prefix", "float", 2.0, "llm_d: the prefix scorer's weight.",
          min=0.0, max=100.0, url="w_prefix", label="Weight: prefix",
          when={"cluster.router.kind": ["llm_d"]}),
    Field("cluster.router.weights.queue", "float", 1.0, "llm_d: the queue scorer's weight.",
          min=0.0, max=100.0, url="w_queue", label="Weight: queue",
          when={"cluster.router.kind": ["llm_d"]}),
    Field("cluster.router.weights.kv", "float", 1.0,
          "llm_d: the KV-utilisation scorer's weight.",
          min=0.0, max=100.0, url="w_kv", label="Weight: KV",
          when={"cluster.router.kind": ["llm_d"]}),
    Field("cluster.router.overlap_weight", "float", 1.0,
          "kv_cost: weight of the prefill blocks (those the replica's cache does not hold) "
          "against its active decode blocks.",
          min=0.0, max=100.0, label="Overlap weight",
          when={"cluster.router.kind": ["kv_cost"]}),
    # ---- prefill/decode disaggregation (fleet/disagg.py; SPEC §9)
    Field("cluster.prefill.replicas", "int", 0,
          "Prefill/decode disaggregation: replicas that only prefill (each request's prompt, "
          "then its KV moves to a decode replica); 0 with cluster.decode.replicas 0 = colocated.",
          min=0, max=64, unit="replicas", label="Prefill replicas", sweep=True,
          url="prefill_replicas",
          hint="With decode replicas: the fleet figure splits prefill from decode (replicas 1)."),
    Field("cluster.prefill.server", "overrides", None,
          "The prefill pool's server: server fields that differ from `server` (e.g. {cost: "
          "{kind: roofline, ..., tp: 4}}, slots, max_num_batched_tokens).",
          label="Prefill server", url="prefill_server", hint=POOL_HINT, hint_when=POOL_HINT_WHEN),
    Field("cluster.decode.replicas", "int", 0,
          "Replicas that only decode: a request arrives when its KV has crossed the link and "
          "is admitted when its blocks fit.",
          min=0, max=64, unit="replicas", label="Decode replicas", sweep=True,
          url="decode_replicas"),
    Field("cluster.decode.server", "overrides", None,
          "The decode pool's server: server fields that differ from `server`.",
          label="Decode server", url="decode_server"),
    Field("cluster.transfer.gb_s", "float", 50.0,
          "The KV link from each prefill replica: its bandwidth (transfers queue on it).",
          min=1e-3, max=1e5, unit="GB/s", label="KV link bandwidth", url="link_gb_s"),
    Field("cluster.transfer.latency_ms", "float", 0.05,
          "... and its fixed latency per transfer.",
          min=0.0, max=1e4, unit="ms", label="KV link latency", url="link_latency_ms"),
    Field("cluster.staleness_ms", "float", 0.0,
          "The router sees each replica's load (waiting, running, KV use) as of this long ago, "
          "as real routers do (stats published every ~50-100 ms).",
          min=0.0, max=60_000.0, unit="ms", label="Router staleness",
          url="staleness_ms"),
    Field("slo.ttft_ms", "float", 2000.0,
          "Per-request limit on TTFT, arrival to first token (cost unit: passes under the unit "
          "cost); null = none.",
          min=0.0, max=1e9, nullable=True, unit="ms", label="TTFT limit"),
    Field("slo.tpot_ms", "float", 100.0,
          "Per-request limit on TPOT, (last token - first token) / (out - 1): the mean time per "
          "output token after the first; null = none.",
          min=0.0, max=1e9, nullable=True, unit="ms", label="TPOT limit", aliases=("tbt_ms",)),
    Field("slo.e2el_ms", "float", None,
          "Per-request limit on end-to-end latency (arrival to slot freed); null = none.",
          min=0.0, max=1e9, nullable=True, unit="ms", label="E2E latency limit",
          hint="Empty = no end-to-end limit."),
    Field("slo.attainment", "float", 0.9,
          "A setting meets the SLO when at least this share of requests meets every limit "
          "(the same rule in runs, sweeps, charts and the CLI).",
          min=0.0, max=1.0, label="SLO attainment target",
          hint="Share of requests that must meet every limit."),
]

# Fields of one explicit trace item (workload.items[i]); the first three are required.
ITEM_FIELDS = [
    Field("arrive", "float", None, "Arrival time (cost unit).", min=0.0, max=MAX_ARRIVE),
    Field("prompt", "int", None, "Prompt tokens.", min=1, max=MAX_ITEM_PROMPT),
    Field("out", "int", None, "Output tokens.", min=1, max=MAX_ITEM_OUT),
    Field("prefix_id", "int", None,
          "Shared token stream the prompt starts with (a system prompt, or a conversation).",
          min=0, max=2**31 - 1, nullable=True),
    Field("prefix_len", "int", 0,
          "Tokens of the prompt that are that stream's first tokens (<= prompt; = prompt: the "
          "answer continues the stream, so a later turn that includes it finds it cached).",
          min=0, max=MAX_ITEM_PROMPT),
    Field("priority", "int", 0, "vllm policy priority: lower is served first (vLLM's rule).",
          min=-2**31, max=2**31 - 1),
    Field("hash_ids", "ints", None,
          "The prompt's content as block ids, one per workload.hash_block tokens (ceil(prompt / "
          "hash_block) ids, the last block may be partial; the Mooncake traces' format): equal "
          "ids at equal positions are equal tokens, so prefix caches and routers match on them. "
          "Not with prefix_id.",
          min=0, max=ID_SPAN - 1),
]
REQUIRED_ITEM_FIELDS = 3

BY_PATH = {f.path: f for f in FIELDS}
BY_URL = {f.url: f for f in FIELDS}
SWEEPS = {f.url: f.path for f in FIELDS if f.sweep}


def children(path):
    """Fields directly under an object path ("" = the top level), in declaration order."""
    return [f for f in FIELDS if f.parent == path]


def objects():
    """Every object path that holds fields, with the keys it knows (for unknown-key messages)."""
    out = {}
    for f in FIELDS:
        parts = f.path.split(".")
        for i in range(len(parts)):
            parent, key = ".".join(parts[:i]), parts[i]
            keys = out.setdefault(parent, [])
            if key not in keys:
                keys.append(key)
    return out
