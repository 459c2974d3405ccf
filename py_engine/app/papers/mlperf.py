"""MLPerf Inference: its server latency limits as presets, and whether a deployment of ours meets
them. One function over a table: a row per MLPerf benchmark and the deployment we chose for it."""

from functools import partial

from ... import api

# mlcommons/inference loadgen/mlperf.conf (commit 001712e): <model>.Server.ttft_latency /
# tpot_latency in ms, judged at *.Server.target_latency_percentile = 99
MLPERF = {"llama2-70b": {"ttft_ms": 2000.0, "tpot_ms": 200.0},
          "llama3_1-8b": {"ttft_ms": 2000.0, "tpot_ms": 100.0}}
MLPERF_PERCENTILE = 99
# (check id, MLPerf's name, its label, our deployment: model, GPU, tp, Poisson rate)
DEPLOYMENTS = (("mlperf-llama2-70b", "llama2-70b", "Llama-2-70B", "llama-2-70b", "h100-80gb", 8,
                2.0),
               ("mlperf-llama3.1-8b", "llama3_1-8b", "Llama-3.1-8B", "llama-3.1-8b", "h100-80gb",
                1, 4.0))


def mlperf_slo(name, model, gpu, tp, rate):
    """The preset as a scenario's SLO (every request within both limits, 99 % of them)."""
    lim = MLPERF[name]
    return {"scheduler": "vllm",
            "workload": {"requests": 200, "arrival": {"kind": "poisson", "rate": rate},
                         "prompt_mean": 1000, "output_mean": 200},
            "server": {"cost": {"kind": "roofline", "model": model, "gpu": gpu, "tp": tp},
                       "kv_tokens": "auto", "slots": 256, "max_num_batched_tokens": 8192},
            "slo": {"ttft_ms": lim["ttft_ms"], "tpot_ms": lim["tpot_ms"], "e2el_ms": None,
                    "attainment": MLPERF_PERCENTILE / 100}}


def meets(name, model, gpu, tp, rate):
    m = api.simulate(mlperf_slo(name, model, gpu, tp, rate))["metrics"]
    return {"ours": "p99 TTFT %.0f ms, p99 TPOT %.1f ms: %s" % (
                m["ttft"]["p99"], m["tpot"]["p99"], "meets" if m["meets_slo"] else "fails"),
            "pass": m["meets_slo"], "detail": "%s on %d × %s (roofline), vllm, %g req/s, 200 "
            "requests of 1,000 → 200 tokens (our generator; MLPerf's dataset is not shipped)" % (
                model, tp, gpu, rate),
            "why": None if m["meets_slo"] else "this deployment misses the limits at this load: "
            + ", ".join(m["slo"]["failing"])}


def _check(check_id, name, label, model, gpu, tp, rate):
    ttft, tpot = ("{:,.0f}".format(MLPERF[name][k]) for k in ("ttft_ms", "tpot_ms"))
    return {"id": check_id, "title": "%s server SLO" % label,
            "paper": "MLPerf Inference", "fn": partial(meets, name, model, gpu, tp, rate),
            "source": "github.com/mlcommons/inference loadgen/mlperf.conf (%s.Server)" % name,
            "workload": "Server scenario: %s" % label,
            "claim": "TTFT ≤ %s ms and TPOT ≤ %s ms at the 99th percentile" % (ttft, tpot),
            "published": "%s ms / %s ms, p%d" % (ttft, tpot, MLPERF_PERCENTILE),
            "tolerance": "our deployment meets both at p%d" % MLPERF_PERCENTILE}


CHECKS = [_check(*row) for row in DEPLOYMENTS]
