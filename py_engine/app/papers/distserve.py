"""DistServe (Zhong et al., OSDI'24) Fig. 1: goodput per GPU, colocated against 2 prefill + 1
decode GPUs, found by the planner's capacity search."""

from ... import api
from .. import plan

DISTSERVE_SLO = {"ttft_ms": 400.0, "tpot_ms": 40.0, "e2el_ms": None, "attainment": 0.9}
# The vLLM DistServe compared against, as its evaluation started it (LLMServe/DistServe
# distserve/evaluation/2-benchmark-serving/2-start-api-server.py: --dtype float16 --block-size 16
# --gpu-memory-utilization 0.92 --max-num-batched-tokens 65536 --max-num-seqs 1024): whole
# prompts (that vLLM had no chunked prefill), and neither prefix caching nor async scheduling.
# Our server's defaults are the article's demo (8 slots): with them the one decode GPU of 2P1D
# holds 8 requests and caps the layout, which is what turned the direction round before.
DISTSERVE_SERVER = {"cost": {"kind": "roofline", "model": "opt-13b", "gpu": "a100-80gb",
                             "dtype": "fp16", "gpu_memory_utilization": 0.92},
                    "kv_tokens": "auto", "slots": 1024, "max_num_batched_tokens": 65_536,
                    "chunk": 0, "block_size": 16, "enable_prefix_caching": False,
                    "async_scheduling": False}
DISTSERVE_REQUESTS = 400   # 200 make a short run and a noisy search (colocated 4.0; with 400, 4.8)
DISTSERVE_LAYOUTS = (("colocated", {"kind": "colocated", "replicas": 1, "tp": 1}),
                     ("2P1D", {"kind": "disaggregated", "prefill": {"replicas": 2, "tp": 1},
                               "decode": {"replicas": 1, "tp": 1}}))


def distserve_fig1():
    base = {"scheduler": "vllm",
            "workload": {"requests": DISTSERVE_REQUESTS, "skew": 0, "prompt_mean": 512,
                         "output_mean": 64, "arrival": {"kind": "poisson", "rate": 2.0}},
            "server": DISTSERVE_SERVER, "slo": DISTSERVE_SLO}
    out = {}
    for label, cand in DISTSERVE_LAYOUTS:
        load, r = plan.capacity(plan.scenario_of(base, cand), None, steps=4)
        out[label] = (load or 0.0) / r["metrics"]["gpus"]
    x = out["2P1D"] / out["colocated"] if out["colocated"] else float("inf")
    ok = abs(out["colocated"] / 1.6 - 1) <= 0.25 and abs(out["2P1D"] / 3.3 - 1) <= 0.25
    alone = api.simulate(dict(base, workload=dict(base["workload"], requests=1)))["requests"][0]
    return {"ours": "colocated %.2f rps/GPU, 2P1D %.2f rps/GPU%s" % (
                out["colocated"], out["2P1D"], " (×%.2f)" % x if out["colocated"] else
                ": no load tried meets the SLO"),
            "pass": ok, "detail": "the planner's capacity search (app/plan.py: the highest "
            "Poisson rate, to within 2^(1/16), with 90 %% of %d requests within both TTFT 0.4 s "
            "and TPOT 0.04 s), vllm as DistServe's evaluation ran it (fp16, max_num_seqs 1,024, "
            "max_num_batched_tokens 65,536, whole prompts, no prefix caching or async "
            "scheduling) on the roofline's OPT-13B / A100-80GB with its current fit; the KV "
            "moves over the default link (50 GB/s: 8 ms for a 512-token prompt)"
            % DISTSERVE_REQUESTS,
            "why": None if ok else _distserve_gap(alone, out, x)}


def _distserve_gap(alone, out, x):
    """Why our per-GPU goodput differs, from the numbers: a lone request's own TPOT against the
    limit first (then no load can meet it), else the rates.

    Measured once with DistServe's own A100 profile of its vLLM baseline (LLMServe/DistServe
    simdistserve/estimators/profile_data/profiler-a100-80g.vllm.json, opt-13b tp 1: prefill 23.6
    + 0.151 / token ms, decode 19.6 + 0.05 / row + 0.0005 / context token ms) as a custom cost in
    this check's setting: colocated 4.00, 2P1D 6.62 rps/GPU; so the gap to the paper's 1.6 is not
    our roofline's."""
    limit = DISTSERVE_SLO["tpot_ms"]
    if alone["tpot"] > limit:
        return ("a lone request's TPOT on our OPT-13B / A100 roofline is %.1f ms, above the %.0f "
                "ms limit, so no load meets the SLO" % (alone["tpot"], limit))
    if x <= 1:
        return ("the direction is not reproduced: 2P1D ×%.2f of colocated per GPU (the paper "
                "×2.1)" % x)
    return ("the direction holds (×%.2f against ×2.1) but both rates are above the paper's: a "
            "lone request's prefill takes %.0f ms here and a decode step %.1f ms, near "
            "DistServe's own profile of its vLLM (103 and 20 ms), and at those pass times one "
            "A100 keeps 90 %% within the SLO to %.1f rps colocated; the paper's 1.6 is a "
            "measurement of 2023 vLLM whose overheads beyond the pass times we do not model, "
            "and our vllm runs decodes inside a prefill's pass (V1) where that vLLM paused them"
            % (x, alone["ttft"], alone["tpot"], out["colocated"]))


CHECKS = [
    {"id": "distserve-fig1", "title": "Fig. 1: goodput per GPU",
     "paper": "DistServe (Zhong et al., OSDI'24)", "fn": distserve_fig1,
     "source": "arXiv 2401.09670, §1 and Fig. 1",
     "workload": "a 13B LLM (OPT-13B) on A100-80GBs, input 512, output 64 tokens, Poisson "
                 "arrivals; 90 % of requests within the SLO (TTFT 0.4 s, TPOT 0.04 s, as "
                 "drawn in Fig. 1); ours: vLLM as DistServe's evaluation started it",
     "claim": "per-GPU goodput colocated 1.6 rps; 2 prefill + 1 decode GPU: 10 rps = 3.3 rps per "
              "GPU, 2.1× higher", "published": "1.6 vs 3.3 rps/GPU (×2.1)",
     "tolerance": "each within 25 %"},
]
