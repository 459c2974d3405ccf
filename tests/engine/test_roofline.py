"""The roofline cost model: its closed forms, its coefficients, and the event-driven engine against
a brute-force pass-by-pass loop under it (every token time)."""

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

import py_engine.analysis.results
from py_engine.api import run_sim
from py_engine.bench.vllm import run_stepped
from py_engine.model.roofline import Deployment
from py_engine.sim.exact import SUB, floor_sum
from py_engine.scenario.prepared import prepare
from py_engine.workload.generator import generate
from references.batching import brute_force


@given(st.integers(0, 300), st.integers(1, 5000), st.integers(0, 10**7), st.integers(0, 10**9))
def test_floor_sum_is_the_sum_of_floors(n, m, a, b):
    assert floor_sum(n, m, a, b) == sum((a * i + b) // m for i in range(n))


def test_a_decode_pass_is_memory_bound_and_a_prefill_compute_bound():
    d = Deployment("llama-3.1-8b", "h100-80gb")
    c, m, _ = d.lines(tokens=1, rows=1, ctx=100, attention=101)
    assert m > 20 * c                                   # one token: reading 16 GB of weights
    c, m, _ = d.lines(tokens=4096, rows=1, ctx=0, attention=4096 * 4097 // 2)
    assert c > 2 * m                                    # 4,096 prompt tokens: FLOPs
    # bytes / (bandwidth x efficiency): Llama-3.1-8B's bf16 weights every pass reads (32 layers
    # of attention 2 x 4096^2 + 2 x 4096 x 1024 and MLP 3 x 4096 x 14336, and the 128256 x 4096
    # lm_head; not the embedding table, read a row at a time) on one H100 (3.35 TB/s)
    weights = 2 * (32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 128256 * 4096)
    assert weights == 15_009_316_864
    assert d.m_w == round(weights / (3350e9 * d.params["bw_eff"]) * 1e12)
    # tensor parallelism splits the weights' reads and adds all-reduces
    d4 = Deployment("llama-3.1-70b", "h100-80gb", tp=4)
    assert d4.comm_tok > 0 and Deployment("llama-3.1-8b", "h100-80gb").comm_tok == 0


def test_a_mixture_of_experts_reads_the_experts_its_tokens_use():
    d = Deployment("mixtral-8x7b", "h100-80gb", tp=2)
    one, eight, many = (d.experts_read(n) for n in (1, 8, 4096))
    assert one == d.m_exp * 2 // 1 and one < eight < many <= d.m_exp * 8
    assert many >= d.m_exp * 8 - 1                      # a prefill uses them all


def roofline(model="llama-3.1-8b", gpu="h100-80gb", tp=1, **kw):
    return {"kind": "roofline", "model": model, "gpu": gpu, "tp": tp, **kw}


@st.composite
def traces(draw):
    n = draw(st.integers(1, 14))
    return [{"arrive": draw(st.integers(0, 400)) / 2, "prompt": draw(st.integers(1, 900)),
             "out": draw(st.integers(1, 40))} for _ in range(n)]


DEPLOYMENTS = [roofline(), roofline("llama-3.1-70b", "h100-80gb", 4),
               roofline("mixtral-8x7b", "a100-80gb", 2), roofline("qwen2.5-7b", "l40s-48gb"),
               roofline("bloom-176b", "b200-180gb", 8, dtype="fp8", kv_dtype="fp8")]


def gaps_of(sim):
    """Every gap between consecutive tokens of a request, as the engine records them."""
    got = Counter({g: c for g, c in sim.rec.gap_weights.items() if c})
    lines_sum = 0
    for K, a, b, n, w in sim.rec.gap_lines:
        for i in range(n):
            got[K + -(-(a + b * i) // SUB)] += w
            lines_sum += w * (K + -(-(a + b * i) // SUB))
    assert sim.rec.gap_lines_sum == lines_sum     # the lines' total, as the core priced the runs
    return +got


@settings(max_examples=150, deadline=None)
@given(traces(), st.sampled_from(["continuous", "static"]), st.integers(1, 6),
       st.sampled_from([16, 64, 512]), st.sampled_from(range(len(DEPLOYMENTS))))
def test_engine_equals_brute_force_under_the_roofline(items, scheduler, slots, chunk, d):
    sc = prepare({"scheduler": scheduler, "workload": {"items": items},
                    "server": {"slots": slots, "chunk": chunk, "cost": DEPLOYMENTS[d]}})
    trace = generate(sc["workload"])
    sim = run_sim(sc, trace).sim
    ref = brute_force(scheduler, *trace[:3], slots, chunk, sc.deployment.pass_ticks)
    assert sim.passes == ref["passes"]
    assert list(sim.first_tick) == ref["first_tick"] and list(sim.done_tick) == ref["done_tick"]
    assert list(sim.first_pass) == ref["first_pass"] and list(sim.done_pass) == ref["done_pass"]
    assert gaps_of(sim) == +ref["gaps"]            # every token's time, as gaps
    m = py_engine.analysis.results.result_meta(run_sim(sc, trace), sim.n)["metrics"]
    gaps = sorted(ref["gaps"].elements())
    if gaps:
        for p in (50, 95, 99):
            assert m["itl"]["p%d" % p] == gaps[max(1, -(-p * len(gaps) // 100)) - 1] / 1e6
        assert m["itl"]["mean"] == pytest.approx(sum(gaps) / len(gaps) / 1e6, rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(traces(), st.integers(1, 6), st.sampled_from([16, 64, 512]),
       st.sampled_from(range(len(DEPLOYMENTS))), st.booleans())
def test_vllm_event_driven_equals_stepped_under_the_roofline(items, slots, chunk, d, tight):
    kv = "auto"
    if tight:
        kv = max(-(-(it["prompt"] + it["out"] - 1) // 16) for it in items) * 16 + 32
    sc = prepare({"scheduler": "vllm", "workload": {"items": items},
                    "server": {"slots": slots, "chunk": chunk, "kv_tokens": kv,
                               "max_num_batched_tokens": 256, "cost": DEPLOYMENTS[d]}})
    trace = generate(sc["workload"])
    a, b = run_sim(sc, trace).sim, run_stepped(sc, trace)
    assert a.passes == b.passes
    for name in ("first_tick", "done_tick", "preemptions"):
        assert list(getattr(a, name)) == list(getattr(b, name)), name
    assert gaps_of(a) == gaps_of(b)


def test_kv_tokens_auto_is_the_calculators_number():
    sc = prepare({"server": {"kv_tokens": "auto", "cost": roofline("llama-3.1-70b", tp=4)}})
    calc = py_engine.kv_capacity("llama-3.1-70b", "h100-80gb", gpus=4)
    assert sc.kv_pool == calc["tokens"] and sc["server"]["kv_tokens"] == "auto"
    with pytest.raises(py_engine.ScenarioError) as e:
        prepare({"server": {"kv_tokens": "auto", "cost": roofline("llama-3.1-70b", tp=1)}})
    assert e.value.field == "server.cost.tp" and "at least 3" in e.value.message
    with pytest.raises(py_engine.ScenarioError) as e:
        prepare({"server": {"kv_tokens": "auto"}})
    assert e.value.field == "server.kv_tokens"
    with pytest.raises(py_engine.ScenarioError) as e:
        prepare({"server": {"cost": roofline(gpu="a100-80gb", dtype="fp8")}})
    assert e.value.field == "server.cost.dtype"


def test_longer_contexts_cost_more_and_batches_slow_decodes():
    def tpot(out, prompt, slots):
        r = py_engine.simulate({"workload": {"items": [{"arrive": 0, "prompt": prompt,
                                                        "out": out}] * slots},
                                "server": {"slots": slots, "cost": roofline()}})
        return r["metrics"]["tpot"]["mean"]
    assert tpot(64, 8000, 1) > tpot(64, 100, 1)        # KV reads grow with the context
    assert tpot(64, 1000, 64) > tpot(64, 1000, 1)      # a bigger batch reads more KV per pass


def test_validate_meets_its_targets_and_the_defaults_are_the_fit():
    from py_engine.analysis import validate
    r = validate.run()
    assert set(r["gpus"]) == {"a100-80gb", "h100-80gb"} and "Splitwise" in r["source"]
    for gpu, g in r["gpus"].items():
        assert g["agrees"], gpu                    # roofline.FITTED is what the fit finds
        assert g["decode_median"] <= 0.10 and g["prefill_median"] <= 0.15, gpu
        assert g["test"] > 30 and any("bloom" in name for name in g["groups"])
    text = validate.report(r)
    assert "held-out" in text and "worst" in text


def test_a_calibrated_cost_is_exact_and_event_driven_too():
    # what a calibration fits: the custom cost with a context term, linear within a run
    from py_engine.analysis import calibrate
    csv = ("rows,prefill_tokens,context_tokens,step_ms\n1,0,1000,10.5\n8,0,8000,12.1\n"
           "32,0,32000,17.9\n1,2048,0,160\n4,4096,0,300\n")
    fit = calibrate.fit(csv)
    assert fit["error"]["median_ape"] < 0.05 and fit["cost"]["per_context_token_ms"] > 0
    items = [{"arrive": i * 3.0, "prompt": 100 + 37 * i, "out": 5 + i % 7} for i in range(12)]
    for scheduler in ("continuous", "static"):
        sc = prepare({"scheduler": scheduler, "workload": {"items": items},
                        "server": {"slots": 4, "chunk": 64, "cost": fit["cost"]}})
        trace = generate(sc["workload"])
        sim = run_sim(sc, trace).sim
        ref = brute_force(scheduler, *trace[:3], 4, 64, sc.deployment.pass_ticks)
        assert list(sim.done_tick) == ref["done_tick"] and gaps_of(sim) == +ref["gaps"]


def test_calibration_input_errors_name_the_line_and_column():
    from py_engine.analysis import calibrate
    with pytest.raises(py_engine.ScenarioError) as e:
        calibrate.fit("batch,prompt,ttft_ms,tpot_ms\n8,512,900,30\n16,512,-3,31\n")
    assert e.value.field == "calibration line 3: ttft_ms"
    with pytest.raises(py_engine.ScenarioError) as e:
        calibrate.fit("a,b\n1,2\n")
    assert e.value.field == "calibration line 1"
    with pytest.raises(py_engine.ScenarioError) as e:     # in words ("'<1 measurements>'" before)
        calibrate.fit("rows,prefill_tokens,context_tokens,step_ms\n1,0,1000,10.5\n")
    assert e.value.message == "calibration: 1 measurement; must be at least 2"
    served = calibrate.fit("batch,prompt,ttft_ms,tpot_ms\n1,512,80,30\n8,512,600,32\n"
                           "32,512,2400,40\n")
    assert served["form"] == "served" and served["points"] == 6
