"""DistServe (Zhong et al., OSDI'24) Fig. 1: goodput per GPU, colocated against 2 prefill + 1
decode GPUs, found by the planner's capacity search.

The colocated baseline is the vLLM DistServe measured: its evaluation README clones
interestingLSY/vllm branch distserve-baseline-vllm, which is vLLM v0.1.7 (vllm/__init__.py
__version__ = "0.1.7"; six commits over upstream 90eb3f43 "Bump up the version to v0.1.7", none
in vllm/core/) with the flags of evaluation/2-benchmark-serving/2-start-api-server.py (lines
58-68). Its scheduler (vllm/core/scheduler.py Scheduler._schedule, lines 126-260) runs a step of
prompts only or of decodes only, prompts first; DistServe's maintainers confirm it of that branch
(LLMServe/DistServe issue #18), and simdistserve models its vLLM the same way
(simdistserve/base/worker.py Worker.run: a prefill whenever one waits, decodes otherwise, no
mixing). That scheduler is the policy lab's example vllm_v017.py, run here as custom code.

2P1D is DistServe's own engine: its context instances batch whole prompts and its decoding
instance adds an arrived request to the running decode batch (distserve/decoding_stage_scheduler.py
DecodingStageFCFSScheduler.get_next_batch, lines 183-224), which our vllm does on each pool.

Measured when this was written (this engine, 400 requests, colocated rps per GPU): on the
roofline 4.76 with our vllm (V1: decodes inside a prefill's pass) and 4.00 with vllm_v017; on
DistServe's own profile of that vLLM (profile_cost below) 2.59 with V1 and 2.00 with vllm_v017,
which over workload seeds 0-3 spans 1.7 to above 2.1 (400 requests make a noisy P90).
simdistserve itself (HEAD 82831f1, simulate_dist.py --backend vllm --model facebook/opt-13b, the
same 512 / 64 Poisson workload, both targets on 400 requests; it needs simpy and pandas, so it is
not run here) keeps 90 % within both at 1.7 rps on all 4 seeds tried, at 1.8 on 2, at 1.9 on 1:
about 1.8, where the paper measured 1.6. So the scheduler and the decode step's time together
explain the paper's colocated rate; our roofline's decode step (17 ms for a lone request, against
the profile's 25.5 with Ray's overhead) is what keeps our own number at 4. The roofline's other
fit, splitwise-2023, overshoots: a lone decode step of 42.9 ms, above the 40 ms limit, so no load
meets the SLO on it."""

from ... import api
from ...policies import examples
from ...scenario.prepared import prepare
from .. import plan

DISTSERVE_SLO = {"ttft_ms": 400.0, "tpot_ms": 40.0, "e2el_ms": None, "attainment": 0.9}
# 2-start-api-server.py lines 58-68: --dtype half --block-size 16 --swap-space 16
# --gpu-memory-utilization 0.95 --max-num-batched-tokens 16384 --max-num-seqs 1024; whole
# prompts (v0.1.7 had no chunked prefill), no prefix caching or async scheduling (it had neither).
DISTSERVE_SERVER = {"cost": {"kind": "roofline", "model": "opt-13b", "gpu": "a100-80gb",
                             "dtype": "fp16", "gpu_memory_utilization": 0.95},
                    "kv_tokens": "auto", "slots": 1024, "max_num_batched_tokens": 16_384,
                    "chunk": 0, "block_size": 16, "enable_prefix_caching": False,
                    "async_scheduling": False}
DISTSERVE_REQUESTS = 400   # 200 make a short run and a noisy search
DISTSERVE_LAYOUTS = (("colocated", {"kind": "colocated", "replicas": 1, "tp": 1}),
                     ("2P1D", {"kind": "disaggregated", "prefill": {"replicas": 2, "tp": 1},
                               "decode": {"replicas": 1, "tp": 1}}))
# DistServe's A100 profiles (simdistserve/estimators/profile_data/, facebook/opt-13b, tp 1) of
# its vLLM (profiler-a100-80g.vllm.json: each a full llm_engine.step() timed by its
# 0-test-single-forward-performance/sut/sut_vllm.py) and of its own engine
# (profiler-a100-80g.distserve.json), and what simdistserve adds to a step (base/worker.py
# add_ray_overhead: 2 ms + 0.0001 ms a context token; time_estimator.py get_prefill_time: + 1 ms
# at pp 1): prefill a + b x tokens + c x tokens^2, decode (batch < 95) a + b x context + c x rows.
VLLM_PREFILL = (22.052204789310185, 0.14050923870128956, 8.076584822611088e-06)
VLLM_DECODE = (23.475041008414784, 0.000592934466077393, 0.060726861260369455)
DISTSERVE_PREFILL = (18.10254647486372, 0.1019122572698738, 7.122264314252114e-06)
DISTSERVE_DECODE = (19.934702624895458, 0.0006269356524350583, 0.03850697740828398)
RAY_MS, RAY_PER_TOKEN_MS, PP_MS = 2.0, 0.0001, 1.0
SIMDISTSERVE_RPS = 1.8     # simdistserve's own run of this setting (the module's docstring), quoted


def profile_cost(prompt, prefill=VLLM_PREFILL, decode=VLLM_DECODE):
    """A profile as one custom cost for prompts of `prompt` tokens: a decode pass exactly (its
    fixed, per-row and per-context terms, Ray's added), a lone prompt's pass exactly (its
    per-token term carries the rest of the profile's prefill at that length)."""
    a, b, c = decode
    fixed, per_ctx = a + RAY_MS, b + RAY_PER_TOKEN_MS
    pa, pb, pc = prefill
    whole = pa + pb * prompt + pc * prompt ** 2 + PP_MS + RAY_MS + RAY_PER_TOKEN_MS * prompt
    return {"fixed_ms": fixed, "per_row_ms": c, "per_context_token_ms": per_ctx,
            "per_prefill_token_ms": (whole - fixed - c - per_ctx * prompt) / prompt}


def _on_profiles():
    """(colocated, 2P1D) rps per GPU with DistServe's profiles as the cost: its vLLM's under
    vllm_v017, its own engine's on each pool (our vllm; a custom cost has no tp, so the layout
    is written out rather than planned)."""
    pool = prepare({"server": DISTSERVE_SERVER}).kv_pool
    srv = dict(DISTSERVE_SERVER, cost=profile_cost(512), kv_tokens=pool)
    colocated = _per_gpu(dict(_base(server=srv), **_v017()))
    srv = dict(srv, cost=profile_cost(512, DISTSERVE_PREFILL, DISTSERVE_DECODE))
    two_one = dict(_base(server=srv), cluster={"prefill": {"replicas": 2},
                                               "decode": {"replicas": 1}})
    return colocated, _per_gpu(two_one)


def _v017():
    code = next(e["code"] for e in examples.sources() if e["name"] == "vllm_v017")
    return {"scheduler": "custom", "custom": {"name": "vllm-0.1.7", "code": code}}


def _base(requests=DISTSERVE_REQUESTS, server=DISTSERVE_SERVER):
    return {"scheduler": "vllm", "slo": DISTSERVE_SLO, "server": server,
            "workload": {"requests": requests, "skew": 0, "prompt_mean": 512,
                         "output_mean": 64, "arrival": {"kind": "poisson", "rate": 2.0}}}


def p90s_within(r):
    """Fig. 1's verdict (§1: "Under the SLO attainment of 90%, the maximum achievable goodput
    ..., which is constrained by the more stringent one of TTFT and TPOT requirements"; the
    figure draws the P90 TTFT and the P90 TPOT against their limits): 90 % of the requests
    within the TTFT limit and 90 % within the TPOT limit, each on its own."""
    reqs, share = r["requests"], DISTSERVE_SLO["attainment"]
    return all(sum(q[k] <= DISTSERVE_SLO[k + "_ms"] for q in reqs) >= share * len(reqs)
               for k in ("ttft", "tpot"))


def _per_gpu(sc):
    load, r = plan.capacity(sc, None, steps=4, meets=p90s_within)
    return (load or 0.0) / r["metrics"]["gpus"]


def distserve_fig1():
    out = {label: _per_gpu(plan.scenario_of(dict(_base(), **(_v017() if label == "colocated"
                                                              else {})), cand))
           for label, cand in DISTSERVE_LAYOUTS}
    x = out["2P1D"] / out["colocated"] if out["colocated"] else float("inf")
    ok = abs(out["colocated"] / 1.6 - 1) <= 0.25 and abs(out["2P1D"] / 3.3 - 1) <= 0.25
    alone = api.simulate(dict(_base(1), **_v017()))["requests"][0]
    on_profile = _on_profiles()
    return {"ours": "colocated %.2f rps/GPU, 2P1D %.2f rps/GPU%s" % (
                out["colocated"], out["2P1D"], " (×%.2f)" % x if out["colocated"] else
                ": no load tried meets the SLO"),
            "pass": ok, "detail": "capacity search (app/plan.py): the highest Poisson rate, to "
            "2^(1/16), with 90 %% of %d requests within TTFT 0.4 s and 90 %% within TPOT 0.04 "
            "s; roofline OPT-13B / A100-80GB; colocated: vLLM 0.1.7's scheduler (example "
            "vllm_v017), 2P1D: our vllm per pool. On DistServe's own profiles (its vLLM; its "
            "engine for 2P1D): colocated %.2f, 2P1D %.2f rps/GPU (×%.2f)"
            % ((DISTSERVE_REQUESTS,) + on_profile + (on_profile[1] / on_profile[0],)),
            "why": None if ok else _distserve_gap(alone, out, x, on_profile)}


def _distserve_gap(alone, out, x, on_profile):
    """Why our per-GPU goodput differs, from the numbers: a lone request's own TPOT against the
    limit first (then no load can meet it), else the rates."""
    limit = DISTSERVE_SLO["tpot_ms"]
    if alone["tpot"] > limit:
        return ("a lone request's TPOT on our OPT-13B / A100 roofline is %.1f ms, above the %.0f "
                "ms limit, so no load meets the SLO" % (alone["tpot"], limit))
    if x <= 1:
        return ("the direction is not reproduced: 2P1D ×%.2f of colocated per GPU (the paper "
                "×2.1)" % x)
    a, b, c = VLLM_DECODE
    step = a + c + RAY_MS
    return ("the direction holds (×%.2f vs ×2.1); colocated is high as our decode step is "
            "%.1f ms, DistServe's profile of its vLLM %.1f (with Ray): %.0f, not %.0f, ms a token "
            "left for stalling prefills; on that profile the same scheduler serves %.2f rps "
            "(simdistserve %.1f)"
            % (x, alone["tpot"], step, limit - alone["tpot"], limit - step, on_profile[0],
               SIMDISTSERVE_RPS))

CHECKS = [
    {"id": "distserve-fig1", "title": "Fig. 1: goodput per GPU",
     "paper": "DistServe (Zhong et al., OSDI'24)", "fn": distserve_fig1,
     "source": "arXiv 2401.09670, §1 and Fig. 1",
     "workload": "OPT-13B, A100-80GB, 512 in / 64 out, Poisson; P90 TTFT 0.4 s, P90 TPOT "
                 "0.04 s; colocated: vLLM 0.1.7 as DistServe ran it",
     "claim": "per-GPU goodput colocated 1.6 rps; 2 prefill + 1 decode GPU: 10 rps = 3.3 rps per "
              "GPU, 2.1× higher", "published": "1.6 vs 3.3 rps/GPU (×2.1)",
     "tolerance": "each within 25 %"},
]
