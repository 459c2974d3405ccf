"""Model and GPU presets: the numbers a deployment is made of, each with where it comes from.

Models: shapes from each model's published Hugging Face `config.json` (named per entry):
num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim (hidden_size /
num_attention_heads unless the config sets it), intermediate_size, vocab_size, experts
(num_local_experts) and experts per token (num_experts_per_tok), whether the MLP is gated (three
matrices, SwiGLU) or not (two, GELU: BLOOM), q/k/v biases, tied embeddings. Parameter counts are
computed from the same shape (kv.param_count) and match the model cards.

GPUs: the vendor's datasheet. Tensor-core TFLOPS are *dense* (NVIDIA's datasheets print the 2:4
sparsity figure with a footnote; dense is half of it); memory is the marketed size in decimal GB
(x 1e9), bandwidth in GB/s (1e9 bytes/s), interconnect = per-GPU NVLink bandwidth (both directions,
as NVIDIA quotes it; a ring all-reduce moves half of it each way) or PCIe when the card has no
NVLink. FP8 is null where the GPU has no FP8 tensor cores (A100).
"""

_HF = "huggingface.co/%s/blob/main/config.json"

# name: shape, plus the config it is read from
MODELS = {
    "llama-3.1-8b": dict(
        label="Llama-3.1-8B", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
        intermediate=14336, vocab=128256, source=_HF % "meta-llama/Llama-3.1-8B"),
    "llama-3.1-70b": dict(
        label="Llama-3.1-70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        intermediate=28672, vocab=128256, source=_HF % "meta-llama/Llama-3.1-70B"),
    "llama-3-8b": dict(
        label="Llama-3-8B", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
        intermediate=14336, vocab=128256, source=_HF % "meta-llama/Meta-Llama-3-8B"),
    "llama-3-70b": dict(
        label="Llama-3-70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        intermediate=28672, vocab=128256, source=_HF % "meta-llama/Meta-Llama-3-70B"),
    "llama-2-7b": dict(
        # No grouped-query attention: 32 KV heads, so 4x the KV bytes of Llama-3-8B per token.
        label="Llama-2-7B (MHA)", layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128,
        intermediate=11008, vocab=32000, source=_HF % "meta-llama/Llama-2-7b-hf"),
    "llama-2-70b": dict(
        label="Llama-2-70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        intermediate=28672, vocab=32000, source=_HF % "meta-llama/Llama-2-70b-hf"),
    "mistral-7b": dict(
        label="Mistral-7B-v0.1", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
        intermediate=14336, vocab=32000, source=_HF % "mistralai/Mistral-7B-v0.1"),
    "mixtral-8x7b": dict(
        # Mixture of experts: 8 experts' weights resident, 2 of them used per token.
        label="Mixtral-8x7B", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
        intermediate=14336, vocab=32000, experts=8, experts_per_token=2,
        source=_HF % "mistralai/Mixtral-8x7B-v0.1"),
    "qwen2.5-7b": dict(
        label="Qwen2.5-7B", layers=28, hidden=3584, heads=28, kv_heads=4, head_dim=128,
        intermediate=18944, vocab=152064, qkv_bias=True, source=_HF % "Qwen/Qwen2.5-7B"),
    "qwen2.5-72b": dict(
        label="Qwen2.5-72B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        intermediate=29568, vocab=152064, qkv_bias=True, source=_HF % "Qwen/Qwen2.5-72B"),
    "qwen3-32b": dict(
        # config.json: 64 layers, hidden 5120, 64 heads (head_dim 128, so the attention width is
        # 8192, not hidden), 8 KV heads, intermediate 25600, vocab 151936, no attention bias
        # (Qwen3 has per-head q/k RMS norms instead: negligible work), untied embeddings
        label="Qwen3-32B", layers=64, hidden=5120, heads=64, kv_heads=8, head_dim=128,
        intermediate=25600, vocab=151936, source=_HF % "Qwen/Qwen3-32B"),
    "opt-13b": dict(
        # config.json of facebook/opt-13b: 40 layers, hidden 5120, 40 heads (no GQA), ffn_dim
        # 20480 with ReLU (not gated), biases, learned positions, embeddings tied to the LM head
        # (DistServe's and vLLM's papers' model)
        label="OPT-13B", layers=40, hidden=5120, heads=40, kv_heads=40, head_dim=128,
        intermediate=20480, vocab=50272, gated_mlp=False, biases=True, tied=True,
        source=_HF % "facebook/opt-13b"),
    "bloom-176b": dict(
        # n_layer 70, hidden_size 14336, n_head 112 (no GQA: 112 KV heads), a 4 x hidden GELU MLP
        # with biases, ALiBi (no position embeddings), tied word embeddings.
        label="BLOOM-176B", layers=70, hidden=14336, heads=112, kv_heads=112, head_dim=128,
        intermediate=57344, vocab=250880, gated_mlp=False, biases=True, tied=True,
        embed_norm=True, source=_HF % "bigscience/bloom"),
}

MODEL_DEFAULTS = dict(experts=1, experts_per_token=1, gated_mlp=True, qkv_bias=False,
                      biases=False, tied=False, embed_norm=False)
for _m in MODELS.values():
    for _k, _v in MODEL_DEFAULTS.items():
        _m.setdefault(_k, _v)

_NV = "nvidia.com/en-us/data-center/"
GPUS = {
    "a100-80gb": dict(
        label="A100 80GB SXM", gb=80, hbm_gb_s=2039, bf16_tflops=312, fp8_tflops=None,
        link_gb_s=600,
        source=_NV + "a100 (A100 80GB SXM datasheet: BF16 Tensor Core 312 TFLOPS, 624 with "
               "sparsity; 80GB HBM2e, 2,039 GB/s; NVLink 600 GB/s)"),
    "a100-40gb": dict(
        label="A100 40GB SXM", gb=40, hbm_gb_s=1555, bf16_tflops=312, fp8_tflops=None,
        link_gb_s=600,
        source=_NV + "a100 (A100 40GB SXM datasheet: BF16 312 TFLOPS; 40GB HBM2, 1,555 GB/s; "
               "NVLink 600 GB/s)"),
    "h100-80gb": dict(
        label="H100 SXM 80GB", gb=80, hbm_gb_s=3350, bf16_tflops=989.5, fp8_tflops=1979,
        link_gb_s=900,
        source=_NV + "h100 (H100 SXM datasheet: BF16 Tensor Core 1,979 TFLOPS and FP8 3,958 "
               "TFLOPS with sparsity; 80GB HBM3, 3.35 TB/s; NVLink 900 GB/s)"),
    "h200-141gb": dict(
        label="H200 SXM 141GB", gb=141, hbm_gb_s=4800, bf16_tflops=989.5, fp8_tflops=1979,
        link_gb_s=900,
        source=_NV + "h200 (H200 SXM datasheet: BF16 1,979 and FP8 3,958 TFLOPS with sparsity; "
               "141GB HBM3e, 4.8 TB/s; NVLink 900 GB/s)"),
    "l40s-48gb": dict(
        label="L40S 48GB", gb=48, hbm_gb_s=864, bf16_tflops=362.05, fp8_tflops=733,
        link_gb_s=64,
        source=_NV + "l40s (L40S datasheet: BF16 362.05 / 733 TFLOPS with sparsity, FP8 733 / "
               "1,466; 48GB GDDR6, 864 GB/s; no NVLink: PCIe Gen4 x16, 64 GB/s both ways)"),
    "b200-180gb": dict(
        label="B200 180GB (HGX)", gb=180, hbm_gb_s=7700, bf16_tflops=2250, fp8_tflops=4500,
        link_gb_s=1800,
        source=_NV + "hgx (HGX B200, 8 GPUs: 1.4 TB HBM3e, 62 TB/s; BF16 36 and FP8 72 PFLOPS "
               "with sparsity; NVLink 1.8 TB/s per GPU)"),
    "l4-24gb": dict(
        label="L4 24GB", gb=24, hbm_gb_s=300, bf16_tflops=121, fp8_tflops=242.5, link_gb_s=64,
        source=_NV + "l4 (L4 datasheet: BF16 242 and FP8 485 TFLOPS with sparsity; 24GB "
               "GDDR6, 300 GB/s; PCIe Gen4 x16)"),
    "rtx-4090-24gb": dict(
        label="RTX 4090 24GB", gb=24, hbm_gb_s=1008, bf16_tflops=165.2, fp8_tflops=None,
        link_gb_s=64,
        source="nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090 and NVIDIA's Ada "
               "GPU architecture whitepaper (FP16/BF16 tensor with FP32 accumulate 165.2 dense "
               "TFLOPS; 24GB GDDR6X, 1,008 GB/s; no NVLink, PCIe Gen4 x16)"),
}

GIB = 1 << 30


def vllm_serve_defaults(gpu: str) -> dict:
    """`vllm serve`'s batch defaults on `gpu` (a GPUS key), as vLLM picks them when the command
    gives no --max-num-seqs / --max-num-batched-tokens / --long-prefill-token-threshold.

    vLLM's rule, read in vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults (the table) and
    EngineArgs._set_default_max_num_seqs_and_batched_tokens_args (which applies it): a device of
    at least 70 GiB whose name has no "a100" ("Setting large max_num_batched_tokens for A100
    reduces throughput", vLLM PR #17885) gets, for UsageContext.OPENAI_API_SERVER (`vllm serve`),
    max_num_seqs 1024 and max_num_batched_tokens 8192; any other GPU 256 and 2048 (the LLM class
    gets 16384 / 8192 tokens instead: not the server). max_num_seqs is then min(it, the token
    budget), a no-op here. long_prefill_token_threshold defaults to 0, off (vllm/config/
    scheduler.py SchedulerConfig; the V1 scheduler caps a prefill only when 0 < threshold).
    vLLM reads the device's total memory; the marketed decimal size (gb x 1e9) is a little below
    it, and no preset lies near the 70 GiB line (the largest under it has 48 GB).

    >>> [vllm_serve_defaults(g)["max_num_seqs"] for g in ("h100-80gb", "a100-80gb", "l40s-48gb")]
    [1024, 256, 256]
    """
    g = GPUS[gpu]
    big = g["gb"] * 10**9 >= 70 * GIB
    a100 = "a100" in g["label"].lower()
    large = big and not a100
    return {"max_num_seqs": 1024 if large else 256,
            "max_num_batched_tokens": 8192 if large else 2048,
            "long_prefill_token_threshold": 0,
            "rule": "vllm serve's defaults on " + (
                "a GPU of at least 70 GiB that is not an A100" if large else
                "an A100 (vLLM keeps the smaller ones there)" if big else "a GPU under 70 GiB")}
