"""KV-cache memory: how many tokens (and so how many sequences) fit on a GPU.

The article's point: memory, not FLOPs, bounds the batch. Every resident sequence keeps a K and a V
vector per layer per KV head for every token it has seen, in the same HBM as the weights.

    >>> kv_bytes_per_token(32, 8, 128)          # Llama-3-8B, bf16: 128 KiB per token
    131072
    >>> r = kv_capacity(layers=32, kv_heads=8, head_dim=128, dtype="bf16",
    ...                 gpu_bytes=80e9, gpu_mem_utilization=0.92, weight_bytes=16e9,
    ...                 context_len=2048)
    >>> r["tokens"], r["sequences"]             # article: "~450,000 tokens", "~220 sequences"
    (439453, 214)

Exactness: the KV pool is ``floor(gpu_mem_utilization × gpus × gpu_bytes) − weight_bytes``
bytes, with the utilization read as the decimal the user wrote (``Fraction(repr(0.92))``, i.e.
23/25), never as the binary float (0.92 is really 0.92000000000000003996…): in floats
0.29 × 24e9 = 6,959,999,999.999999, one byte short. Bytes are integers, so the token count is a
plain integer floor division and cannot drift by one on an unlucky product.

Presets: model shapes are read from each model's published Hugging Face ``config.json`` (named per
entry); parameter counts are computed from the same config (embeddings, attention, MLP / experts,
norms) and match the counts the model cards publish. GPU memory is the vendor's marketed size in
decimal gigabytes (× 1e9), the same convention as the article's ``80e9`` for an 80 GB H100.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..errors import ScenarioError

# Bytes per element. fp8 = e4m3/e5m2, as vLLM's kv_cache_dtype="fp8".
DTYPES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}

# Model and GPU presets (shapes from each config.json, GPU figures from the datasheets), cited there.
from ..data.deployments import GPUS, MODELS  # noqa: E402

# The article's worked example (Llama-3-8B bf16 on an 80 GB card, 92% memory, 16 GB of weights).
ARTICLE = dict(layers=32, kv_heads=8, head_dim=128, dtype="bf16", gpu_bytes=80_000_000_000,
               gpu_mem_utilization=0.92, weight_bytes=16_000_000_000, context_len=2048)

DEFAULT_UTILIZATION = 0.92  # vLLM 0.33.0's default gpu_memory_utilization (vllm/config/cache.py)
MAX_BYTES = 10**16         # 10 PB: far above any node, low enough that no float loses integers


def kv_bytes_per_token(layers, kv_heads, head_dim, dtype_bytes=2):
    """Bytes of KV cache one token occupies: a K and a V vector per layer per KV head.

    >>> kv_bytes_per_token(32, 8, 128)        # Llama-3-8B bf16
    131072
    >>> kv_bytes_per_token(32, 32, 128)       # Llama-2-7B has no GQA: 4x as much
    524288
    >>> kv_bytes_per_token(32, 8, 128, 1)     # fp8 KV cache halves it
    65536
    """
    return 2 * layers * kv_heads * head_dim * dtype_bytes


def param_count(model):
    """Parameters of a preset, computed from its config.json shape.

    >>> param_count("llama-3-8b")     # the model card's 8,030,261,248
    8030261248
    >>> param_count("mixtral-8x7b")   # 46.7 B: every expert's weights are resident
    46702792704
    >>> param_count("llama-2-70b"), param_count("bloom-176b")   # 68.98 B; 176,247,271,424
    (68976648192, 176247271424)
    """
    m = MODELS[model]
    h, hd, f, e = m["hidden"], m["head_dim"], m["intermediate"], m["experts"]
    q, kv = m["heads"] * hd, m["kv_heads"] * hd
    attn = h * q + 2 * h * kv + q * h
    if m["qkv_bias"] or m["biases"]:
        attn += q + 2 * kv
    if m["biases"]:
        attn += h                                        # the output projection's bias
    expert = (3 if m["gated_mlp"] else 2) * h * f + ((f + h) if m["biases"] else 0)
    mlp = e * expert + (h * e if e > 1 else 0)           # + the router
    norm = 2 * h if m["biases"] else h                   # LayerNorm has a bias, RMSNorm not
    per_layer = attn + mlp + 2 * norm
    embed = m["vocab"] * h * (1 if m["tied"] else 2)     # input embedding + lm_head
    return m["layers"] * per_layer + embed + norm + (norm if m["embed_norm"] else 0)


def presets():
    """Model, GPU and dtype presets with the numbers kv_capacity uses and where they come from."""
    return {
        "models": {k: {"label": m["label"], "layers": m["layers"], "kv_heads": m["kv_heads"],
                       "head_dim": m["head_dim"], "params": param_count(k), "source": m["source"]}
                   for k, m in MODELS.items()},
        "gpus": {k: {"label": g["label"], "gpu_bytes": g["gb"] * 10**9,
                     "hbm_gb_s": g["hbm_gb_s"], "bf16_tflops": g["bf16_tflops"],
                     "fp8_tflops": g["fp8_tflops"], "link_gb_s": g["link_gb_s"],
                     "source": g["source"]}
                 for k, g in GPUS.items()},
        "dtypes": dict(DTYPES),
        "article": dict(ARTICLE),
    }


def _fail(field, value, allowed):
    raise ScenarioError(field, value, allowed)


def _int(field, value, lo, hi):
    """An integer in [lo, hi]; integral floats such as 80e9 are accepted (the article uses them)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(field, value, f"an integer from {lo:,} to {hi:,}")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            _fail(field, value, f"an integer from {lo:,} to {hi:,}")
        value = int(value)
    if not lo <= value <= hi:
        _fail(field, value, f"an integer from {lo:,} to {hi:,}")
    return value


def _choice(field, value, options):
    if not isinstance(value, str) or value.lower() not in options:
        _fail(field, value, "one of " + ", ".join(options))
    return value.lower()


def kv_capacity(model=None, gpu=None, *, dtype="bf16", kv_dtype=None, layers=None, kv_heads=None,
                head_dim=None, params=None, weight_bytes=None, gpu_bytes=None, gpus=1,
                gpu_mem_utilization=DEFAULT_UTILIZATION, context_len=2048):
    """KV-cache capacity of a model on a GPU (or ``gpus`` of them, tensor-parallel).

    Explicit numbers win over presets: ``model`` fills layers / kv_heads / head_dim / params,
    ``gpu`` fills gpu_bytes. ``weight_bytes`` defaults to params × bytes of ``dtype``; the KV cache
    is stored in ``kv_dtype`` (default: ``dtype``). Returns the inputs echoed plus:
    ``bytes_per_token``, ``kv_pool_bytes`` (memory left for KV), ``tokens`` (KV tokens that fit),
    ``sequences`` (concurrent sequences of ``context_len`` tokens that fit) and ``fits`` (False when
    the weights alone do not fit; tokens is then 0).

    >>> r = kv_capacity("llama-3-8b", "h100-80gb")
    >>> r["bytes_per_token"], r["weight_bytes"], r["tokens"], r["sequences"]
    (131072, 16060522496, 438991, 214)
    >>> kv_capacity("llama-3-70b", "h100-80gb")["fits"]       # 141 GB of bf16 weights
    False
    >>> kv_capacity("llama-3-70b", "h100-80gb", gpus=4)["sequences"]
    228
    """
    if model is not None:
        model = _choice("model", model, list(MODELS))
    if gpu is not None:
        gpu = _choice("gpu", gpu, list(GPUS))
    dtype = _choice("dtype", dtype, list(DTYPES))
    kv_dtype = dtype if kv_dtype is None else _choice("kv_dtype", kv_dtype, list(DTYPES))
    m = MODELS.get(model, {})
    shape = {}
    for name, value, hi in (("layers", layers, 1024), ("kv_heads", kv_heads, 1024),
                            ("head_dim", head_dim, 4096)):
        if value is None:
            value = m.get(name)
        if value is None:
            _fail(name, None,
                  f"an integer from 1 to {hi:,} (or a model preset: {', '.join(MODELS)})")
        shape[name] = _int(name, value, 1, hi)
    gpus = _int("gpus", gpus, 1, 1024)
    if gpu_bytes is None:
        if gpu is None:
            _fail("gpu_bytes", None,
                  f"an integer from 1 to {MAX_BYTES:,} (or a GPU preset: {', '.join(GPUS)})")
        gpu_bytes = GPUS[gpu]["gb"] * 10**9
    gpu_bytes = _int("gpu_bytes", gpu_bytes, 1, MAX_BYTES)
    if params is None and model is not None:
        params = param_count(model)
    if params is not None:
        params = _int("params", params, 0, MAX_BYTES)
    if weight_bytes is None:
        if params is None:
            _fail("weight_bytes", None,
                  f"an integer from 0 to {MAX_BYTES:,} (or params, or a model preset)")
        weight_bytes = params * DTYPES[dtype]
    weight_bytes = _int("weight_bytes", weight_bytes, 0, MAX_BYTES)
    if (isinstance(gpu_mem_utilization, bool) or not isinstance(gpu_mem_utilization, (int, float))
            or not 0 < gpu_mem_utilization <= 1):      # also refuses nan and inf; exact for ints
        _fail("gpu_mem_utilization", gpu_mem_utilization, "a number in (0, 1]")
    context_len = _int("context_len", context_len, 1, 10**8)

    per_token = kv_bytes_per_token(shape["layers"], shape["kv_heads"], shape["head_dim"],
                                   DTYPES[kv_dtype])
    # Decimal reading of the utilization (see the module docstring): exact integer bytes.
    budget = math.floor(Fraction(repr(float(gpu_mem_utilization))) * gpus * gpu_bytes)
    pool = budget - weight_bytes
    tokens = max(0, pool) // per_token
    return {
        "model": model, "gpu": gpu, "dtype": dtype, "kv_dtype": kv_dtype, **shape,
        "kv_dtype_bytes": DTYPES[kv_dtype], "params": params, "weight_bytes": weight_bytes,
        "gpu_bytes": gpu_bytes, "gpus": gpus, "gpu_mem_utilization": float(gpu_mem_utilization),
        "context_len": context_len,
        "bytes_per_token": per_token, "kv_pool_bytes": pool, "tokens": tokens,
        "sequences": tokens // context_len, "fits": pool > 0,
    }


# kv_capacity's parameters and their CLI flags (python -m py_engine kv --<flag>)
KV_PARAMS = [("model", "model"), ("gpu", "gpu"), ("dtype", "dtype"), ("kv_dtype", "kv-dtype"),
             ("layers", "layers"), ("kv_heads", "kv-heads"), ("head_dim", "head-dim"),
             ("params", "params"), ("weight_bytes", "weight-bytes"), ("gpu_bytes", "gpu-bytes"),
             ("gpus", "gpus"), ("gpu_mem_utilization", "util"), ("context_len", "context")]
_KV_NAMES = [name for name, _ in KV_PARAMS]


def kv_from_params(params):
    """kv_capacity from an untrusted dict (protocol / CLI); unknown keys are errors."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        _fail("params", params, "an object")
    if "presets" in params:
        if params["presets"] is not True or len(params) != 1:
            _fail("presets", params["presets"], "true, alone (it lists the presets)")
        return presets()
    for key in params:
        if key not in _KV_NAMES:
            _fail(str(key), params[key], "a known field: " + ", ".join(_KV_NAMES))
    if not params:
        params = ARTICLE   # nothing asked: the article's worked example
    return kv_capacity(**params)
