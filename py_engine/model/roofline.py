"""The roofline cost model: how long one forward pass takes for a model on a GPU (x tensor
parallelism), from first principles, in exact integers.

A pass computes `tokens` new tokens (a prefill chunk's, one per decoding row) in `rows` rows; row
r brings n_r new tokens and has ctx_r tokens of context already in its KV cache. Per GPU:

    compute  = FLOPs / (tp x peak x flops_eff) + attention FLOPs / (tp x peak x attn_eff)
        FLOPs = 2 x active params per token x tokens            (the linear layers)
              + 2 x hidden x vocab x rows                        (the logits)
        attention FLOPs = 4 x layers x heads x head_dim x attention   (QK^T and PV)
        attention = sum_r n_r x (ctx_r + (n_r + 1) / 2)           (causal: token j sees ctx + j)
    memory   = bytes / (HBM bandwidth x bw_eff)
        bytes = weights read once per pass / tp                  (a mixture of experts reads the
                                                                   experts its tokens use: of E
                                                                   experts, k per token, that is
                                                                   E x (1 - (1 - k/E)^tokens) on
                                                                   average; all E stay resident)
              + KV bytes per token x (sum_r ctx_r + tokens) / kv shards   (read, then written)
    comm     = 2 all-reduces per layer of tokens x hidden x 2 bytes, a ring over tp GPUs:
               2 (tp - 1) / tp of it each way at link bandwidth / 2 x link_eff   (0 when tp = 1)
    pass     = overhead_ms + layers x layer_us + rows x row_us + 2 x layers x allreduce_us (tp > 1)
               + max(compute, memory) + comm

max() is the roofline: a pass of prefill chunks is compute-bound, a pass of decodes memory-bound
(the weights, then the KV cache as contexts grow). What it leaves out: kernel-level effects (tile
quantization, attention kernels' own efficiency curves), CUDA graphs vs eager launch, CPU-side
scheduling time beyond the fixed overhead, sampling, speculative decoding, pipeline parallelism,
communication/compute overlap, and power or clock throttling.

Exactness. Every per-unit cost is rounded once to an integer number of sub-ticks (SUB per tick:
1 ps when the unit is ms), so a pass's compute and memory lines are integer linear functions of
its state, and its cost in ticks is

    cost = K + ceil((max(compute, memory) + comm) / SUB)        K = the overheads, in ticks

Within a run of identical batches every row's context grows by its n_r per pass, so the compute
line grows by c_att x sum n_r^2 and the memory line by m_ctx x sum n_r per pass: pass i of a run
costs K + ceil((a + b i) / SUB) while one line stays on top (the core ends the run where they
cross), and the run's duration is a floor sum (`floor_sum`), so the engine stays event-driven.
"""

from fractions import Fraction

from . import kv
from ..data.deployments import GPUS, MODELS
from ..errors import ScenarioError
from ..sim.exact import SUB

ACT_BYTES = 2              # activations all-reduced in 16 bits
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}

# The efficiency factors and overheads a deployment is tuned by (fields server.cost.<name>).
TUNABLE = ("flops_eff", "attn_eff", "bw_eff", "link_eff", "overhead_ms", "layer_us", "row_us",
           "allreduce_us")
# Their defaults come from a named fit (server.cost.fit), each fitted to public measurements and
# re-fitted by `python -m py_engine validate`, which reports the errors on the held-out part:
# - "vllm-2025": vLLM 0.12-era serving (CUDA graphs, small per-pass overheads), fitted on
#   AIConfigurator's silicon measurements of served models on H100 (validate.SERVED_TRAIN); one
#   set for every GPU (the data is Hopper only: other GPUs take the same shares and overheads);
# - "splitwise-2023": the Splitwise measurements (2023 serving software: large per-pass and
#   per-row overheads), per GPU; GPUs with no measurements take the closest architecture's.
FIT_CHOICES = ("vllm-2025", "splitwise-2023")
DEFAULT_FIT = "vllm-2025"
VLLM_2025 = {"flops_eff": 0.440396, "attn_eff": 0.536899, "bw_eff": 0.907418,
             "link_eff": 0.565943, "overhead_ms": 0.666499, "layer_us": 55.178229,
             "row_us": 49.46289, "allreduce_us": 6.164551}
SPLITWISE_2023 = {
    "a100-80gb": {"flops_eff": 0.731355, "attn_eff": 0.667862, "bw_eff": 1.0,
                  "link_eff": 0.195776, "overhead_ms": 28.023438, "layer_us": 41.381836,
                  "row_us": 368.310546, "allreduce_us": 0.0},
    "h100-80gb": {"flops_eff": 0.714771, "attn_eff": 0.106157, "bw_eff": 1.0,
                  "link_eff": 0.210504, "overhead_ms": 3.53125, "layer_us": 233.52295,
                  "row_us": 290.429688, "allreduce_us": 0.0},
}
# GPUs with no Splitwise measurements take the fit of the closest architecture
FIT_OF = {"a100-80gb": "a100-80gb", "a100-40gb": "a100-80gb", "l40s-48gb": "a100-80gb",
          "l4-24gb": "a100-80gb", "rtx-4090-24gb": "a100-80gb", "h100-80gb": "h100-80gb",
          "h200-141gb": "h100-80gb", "b200-180gb": "h100-80gb"}


def fitted(fit, gpu):
    """The tunables' defaults of a named fit on a GPU."""
    if fit == "splitwise-2023":
        return SPLITWISE_2023[FIT_OF[gpu]]
    return VLLM_2025


def _ps(x):
    """seconds (a Fraction) -> integer sub-ticks, rounded once (1 sub-tick = 1e-12 s: the cost
    unit is ms, a tick 1e-6 of it)."""
    return round(x * 10**12)


class Deployment:
    """A model on a GPU with tensor parallelism tp: the integer coefficients of its pass cost."""

    def __init__(self, model, gpu, tp=1, dtype="bf16", kv_dtype=None, fit=DEFAULT_FIT, **tuned):
        """tuned: any of TUNABLE; None or absent = the named fit's value on this GPU (fitted)."""
        m, g = MODELS[model], GPUS[gpu]
        base = fitted(fit, gpu)
        p = {k: (tuned.get(k) if tuned.get(k) is not None else base[k]) for k in TUNABLE}
        self.model, self.gpu, self.tp, self.dtype, self.fit = model, gpu, tp, dtype, fit
        self.kv_dtype = kv_dtype or dtype
        self.params = p
        tflops = g["fp8_tflops"] if dtype == "fp8" else g["bf16_tflops"]
        if tflops is None:
            raise ScenarioError("server.cost.dtype", dtype, "bf16 or fp16 on %s (it has no FP8 "
                                                           "tensor cores)" % g["label"])
        frac = lambda x: Fraction(repr(float(x)))  # noqa: E731  decimal reading, as written
        flops = frac(tflops) * 10**12 * tp * frac(p["flops_eff"])      # FLOP/s of the group
        bw = frac(g["hbm_gb_s"]) * 10**9 * frac(p["bw_eff"])           # bytes/s of one GPU
        link = frac(g["link_gb_s"]) * 10**9 / 2 * frac(p["link_eff"])   # bytes/s each way
        L, h, hd, f = m["layers"], m["hidden"], m["head_dim"], m["intermediate"]
        q, kvw = m["heads"] * hd, m["kv_heads"] * hd
        wb = DTYPE_BYTES[dtype]
        attn = h * q + 2 * h * kvw + q * h
        expert = (3 if m["gated_mlp"] else 2) * h * f
        e, k = m["experts"], m["experts_per_token"]
        lm_head = m["vocab"] * h
        # compute, per token / row / attention unit (sub-ticks)
        self.c_tok = _ps(Fraction(2 * L * (attn + k * expert)) / flops)
        self.c_row = _ps(Fraction(2 * lm_head) / flops)
        # attention kernels run at their own share of the peak (attn_eff)
        self.c_att = _ps(Fraction(4 * L * m["heads"] * hd) / (
            frac(tflops) * 10**12 * tp * frac(p["attn_eff"])))
        # memory, per GPU: the weights every pass reads (experts apart), KV per context token
        dense = L * (attn + (0 if e > 1 else expert)) + lm_head
        self.m_w = _ps(Fraction(dense * wb, tp) / bw)
        self.experts, self.per_token = e, k
        self.m_exp = _ps(Fraction(L * expert * wb, tp) / bw) if e > 1 else 0
        shards = min(tp, m["kv_heads"])
        kv_bytes = kv.kv_bytes_per_token(L, m["kv_heads"], hd, kv.DTYPES[self.kv_dtype])
        self.kv_bytes = kv_bytes        # per token, the whole model (a KV transfer's size)
        self.m_ctx = _ps(Fraction(kv_bytes, shards) / bw)
        # tensor-parallel all-reduce per token, and the fixed overheads (ticks)
        self.comm_tok = (_ps(Fraction(4 * L * (tp - 1) * h * ACT_BYTES, tp) / link)
                         if tp > 1 else 0)
        self.K = round(frac(p["overhead_ms"]) * 10**6 + L * frac(p["layer_us"]) * 10**3
                       + (2 * L * frac(p["allreduce_us"]) * 10**3 if tp > 1 else 0))
        self.K_row = round(frac(p["row_us"]) * 10**3)
        self._experts_read = {}
        self._all_experts = _tokens_reading_all(self.m_exp, e, k) if self.m_exp else 0

    def experts_read(self, tokens):
        """Sub-ticks to read the experts `tokens` tokens use, on average: m_exp times the expected
        distinct experts e - (e - k)^t / e^(t - 1), floored (exact, cached).

        Past `_all_experts` tokens the missing share m_exp (e - k)^t / e^(t - 1) is below one
        sub-tick, so the floor is m_exp e - 1 exactly: a closed form, not a power of a
        million-digit number (a 65,536-token pass once cost seconds)."""
        got = self._experts_read.get(tokens)
        if got is None:
            e, k = self.experts, self.per_token
            if tokens > self._all_experts:
                return self.m_exp * e - 1
            distinct = e - Fraction((e - k) ** tokens, e ** (tokens - 1)) if tokens else 0
            got = self._experts_read[tokens] = (self.m_exp * distinct).__floor__()
        return got

    def lines(self, tokens, rows, ctx, attention):
        """(compute, memory, comm) sub-ticks of a pass with this state (see the docstring)."""
        c = self.c_tok * tokens + self.c_row * rows + self.c_att * attention
        m = self.m_w + self.m_ctx * (ctx + tokens)
        if self.m_exp:
            m += self.experts_read(tokens)
        return c, m, self.comm_tok * tokens

    def pass_ticks(self, tokens, rows, ctx, attention, prefill_tokens=0):
        """One pass's cost in integer ticks."""
        c, m, comm = self.lines(tokens, rows, ctx, attention)
        return self.K + self.K_row * rows + -(-(max(c, m) + comm) // SUB)

    def run_line(self, tokens, rows, ctx, attention, d_ctx, d_attention, prefill_tokens=0):
        """For a run of identical batches: (K, a, b, cross): pass i costs K + ceil((a + b i) /
        SUB) for i < cross (None: for every i), where one roofline line stays on top."""
        c, m, comm = self.lines(tokens, rows, ctx, attention)
        dc, dm = self.c_att * d_attention, self.m_ctx * d_ctx
        if c >= m:
            a, b, o, ob = c, dc, m, dm
        else:
            a, b, o, ob = m, dm, c, dc
        cross = None if ob <= b else (a - o) // (ob - b) + 1
        return self.K + self.K_row * rows, a + comm, b, cross

    def describe(self):
        m, g = MODELS[self.model], GPUS[self.gpu]
        return "%s on %d x %s (%s)" % (m["label"], self.tp, g["label"], self.dtype)


def _tokens_reading_all(m_exp, e, k):
    """The fewest tokens t with m_exp (e - k)^t < e^(t - 1): from there on the expected experts
    read fall short of all e by less than one sub-tick (found exactly, by doubling and bisection
    on integers; t stays in the hundreds)."""
    if k >= e:
        return 1

    def below(t):
        return m_exp * (e - k) ** t < e ** (t - 1)
    hi = 1
    while not below(hi):
        hi *= 2
    lo = hi // 2              # below(lo) is false (or lo = 0), below(hi) true
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if below(mid):
            hi = mid
        else:
            lo = mid
    return hi


class ContextCost:
    """The custom cost with a context term (what a calibration fits, calibrate.py): a pass costs
    fixed + per_row x rows + per_prefill_token x prefill tokens + per_context_token x context
    tokens, the last in sub-ticks; within a run the context grows by sum n_r per pass, so pass i
    costs K + ceil((a + b i) / SUB), like the roofline."""

    def __init__(self, fixed, per_row, per_token, per_context_sub):
        self.fixed, self.per_row, self.per_token = fixed, per_row, per_token
        self.per_context = per_context_sub

    def pass_ticks(self, tokens, rows, ctx, attention, prefill_tokens=0):
        return (self.fixed + self.per_row * rows + self.per_token * prefill_tokens
                + -(-self.per_context * ctx // SUB))

    def run_line(self, tokens, rows, ctx, attention, d_ctx, d_attention, prefill_tokens=0):
        K = self.fixed + self.per_row * rows + self.per_token * prefill_tokens
        return K, self.per_context * ctx, self.per_context * d_ctx, None


def context_cost(cost, ticks):
    """A normalised custom cost with a context term -> its ContextCost (None without one)."""
    per_ctx = cost.get("per_context_token_ms", 0.0)
    if not per_ctx:
        return None
    return ContextCost(ticks["fixed"], ticks["per_row"], ticks["per_prefill_token"],
                       round(Fraction(repr(float(per_ctx))) * 10**9))


def from_cost(cost):
    """A normalised server.cost of kind roofline -> its Deployment."""
    return Deployment(cost["model"], cost["gpu"], cost["tp"], cost["dtype"], cost["kv_dtype"],
                      cost["fit"], **{k: cost[k] for k in TUNABLE})


def kv_pool_tokens(cost, utilization):
    """The KV pool of the deployment (the KV calculator's own formula: kv.kv_capacity)."""
    r = kv.kv_capacity(cost["model"], cost["gpu"], dtype=cost["dtype"],
                       kv_dtype=cost["kv_dtype"], gpus=cost["tp"],
                       gpu_mem_utilization=utilization)
    return r


LEAVES_OUT = ("kernel-level effects (tile quantization, attention kernels' own curves), CUDA "
              "graphs vs eager launch, CPU-side scheduling beyond the fitted overheads, sampling, "
              "speculative decoding, pipeline parallelism, overlap of communication with "
              "compute, and power or clock throttling")


def examples(model, gpu, tp=1, dtype="bf16", kv_dtype=None, context=2048, fit=DEFAULT_FIT):
    """What a deployment's passes cost, for the deployment panel: a decode pass of 1 and of 32
    requests at `context` tokens each, and the prefill of one `context`-token prompt (ms)."""
    d = Deployment(model, gpu, tp, dtype, kv_dtype, fit)
    decode = lambda b: d.pass_ticks(b, b, b * (context - 1), b * context) / 1e6  # noqa: E731
    return {"deployment": d.describe(), "context": context,
            "decode_1_ms": decode(1), "decode_32_ms": decode(32),
            "prefill_ms": d.pass_ticks(context, 1, 0, context * (context + 1) // 2) / 1e6,
            "fit": fit, "fit_gpu": FIT_OF[gpu] if fit == "splitwise-2023" else None,
            "leaves_out": LEAVES_OUT}
