"""A scenario's server as `vllm serve` command-line flags (vLLM 0.33.0): the page's "Copy as vllm
serve flags" and the protocol method `serve_flags`.

Every flag name is vLLM's own, read in its source: `vllm/engine/arg_utils.py`
(EngineArgs.add_cli_args: the SchedulerConfig group adds --max-num-batched-tokens, --max-num-seqs,
--long-prefill-token-threshold, --scheduling-policy (the field `policy`), --async-scheduling; the
CacheConfig group --block-size, --gpu-memory-utilization, --kv-cache-dtype (the field
`cache_dtype`), --num-gpu-blocks-override, --enable-prefix-caching; the ModelConfig and
ParallelConfig groups --dtype and --tensor-parallel-size), with the fields in
`vllm/config/scheduler.py` (SchedulerConfig) and `vllm/config/cache.py` (CacheConfig: CacheDType
"auto", "bfloat16", "fp8", ...). vLLM's boolean fields are argparse BooleanOptionalAction flags, so
each has a --no- form (--no-enable-prefix-caching, --no-async-scheduling).

Left out, as vLLM has no flag for them or they are not vLLM's:
- scheduler_reserve_full_isl: a SchedulerConfig field in newer vLLM, but arg_utils.py adds no
  command-line flag for it (it stays at vLLM's default, True, which is also ours);
- preemption = swap: our extension (vLLM V1 only recomputes), and pcie_gb_s / kv_bytes_per_token
  with it;
- kv_tokens null (unlimited: vLLM has no such pool) and auto (vLLM sizes the pool itself from
  --gpu-memory-utilization, which the command gives); a number is --num-gpu-blocks-override =
  kv_tokens // block_size + 1, as vLLM keeps one null block (policies/vllm/__init__.py);
- the model, GPU and types for the article / unit / custom costs, which name no model: the
  command then says `<model>`.
"""

import shlex

from ..data.deployments import MODELS, vllm_serve_defaults
from ..scenario.normalize import normalize

_HF_PREFIX = "huggingface.co/"
_DTYPE = {"bf16": "bfloat16", "fp16": "float16"}       # vLLM's --dtype choices
_KV_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp8": "fp8"}  # CacheDType


# vLLM's batch knobs and the scenario fields that are them
KNOB_FIELDS = {"max_num_seqs": "server.slots",
               "max_num_batched_tokens": "server.max_num_batched_tokens",
               "long_prefill_token_threshold": "server.chunk"}


def serve_defaults(gpu: str) -> dict:
    """{"values": {field path: value}, "knobs": {vLLM name: value}, "rule": words}: the scenario
    fields that make a run use `vllm serve`'s own batch defaults on `gpu` (vllm_serve_defaults:
    the rule lives there), for the deployment panel's "Run on this deployment"."""
    d = vllm_serve_defaults(gpu)
    knobs = {k: d[k] for k in KNOB_FIELDS}
    return {"values": {KNOB_FIELDS[k]: v for k, v in knobs.items()}, "knobs": knobs,
            "rule": d["rule"]}


def hf_id(model: str) -> str:
    """The model's Hugging Face id, from the config.json it is read from (deployments.py)."""
    source = MODELS[model]["source"]
    assert source.startswith(_HF_PREFIX), source
    return "/".join(source[len(_HF_PREFIX):].split("/")[:2])


def _bool(flag, on):
    return "--%s" % flag if on else "--no-%s" % flag


def flags(scenario: dict | None = None) -> list[str]:
    """The command as a list of words: ["vllm", "serve", model, "--max-num-seqs", "8", ...]."""
    sc = normalize(scenario or {})
    sv = sc["server"]
    cost = sv["cost"]
    roofline = isinstance(cost, dict) and cost.get("kind") == "roofline"
    words = ["vllm", "serve", hf_id(cost["model"]) if roofline else "<model>"]
    if roofline:
        words += ["--tensor-parallel-size", str(cost["tp"])]
        if cost["dtype"] == "fp8":      # fp8 weights: vLLM's fp8 quantization, not a --dtype
            words += ["--quantization", "fp8"]
        else:
            words += ["--dtype", _DTYPE[cost["dtype"]]]
        words += ["--kv-cache-dtype", _KV_DTYPE[cost["kv_dtype"]],
                  "--gpu-memory-utilization", "%g" % cost["gpu_memory_utilization"]]
    for knob, path in KNOB_FIELDS.items():
        words += ["--" + knob.replace("_", "-"), str(sv[path.split(".", 1)[1]])]
    words += ["--block-size", str(sv["block_size"])]
    if isinstance(sv["kv_tokens"], int) and not isinstance(sv["kv_tokens"], bool):
        words += ["--num-gpu-blocks-override", str(sv["kv_tokens"] // sv["block_size"] + 1)]
    words += [_bool("enable-prefix-caching", sv["enable_prefix_caching"]),
              _bool("async-scheduling", sv["async_scheduling"]),
              "--scheduling-policy", sv["policy"]]
    return words


def serve_flags(scenario: dict | None = None) -> dict:
    """{"command": "vllm serve <HF model id> --max-num-seqs N ..."}: one line, shell-quoted."""
    words = flags(scenario)
    return {"command": " ".join(w if w == "<model>" else shlex.quote(w) for w in words)}
