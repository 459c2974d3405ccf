"""The roofline's named fits (server.cost.fit) and the served-model check (analysis/served.py)."""

import statistics

import pytest

import py_engine
from py_engine.analysis import served, validate
from py_engine.model import roofline


def _run(model, gpu, tp, fit=None):
    cost = {"kind": "roofline", "model": model, "gpu": gpu, "tp": tp}
    if fit:
        cost["fit"] = fit
    return py_engine.simulate({"scheduler": "vllm", "server": {"cost": cost,
                                                                "kv_tokens": "auto"}})


# main at 1653fe3, before the fits had names (its only fit was Splitwise's): examples' decode of
# 1 and 32 rows and prefill (ms), and a default vllm run's mean TPOT and p95 TTFT (ms)
OLD = [("llama-3.1-8b", "h100-80gb", 1, (15.854938, 27.342299, 62.187351), (18.17035299754464, 10419.336257)),
       ("llama-3.1-70b", "h100-80gb", 4, (32.968499, 44.811191, 219.713746), (37.26124624815713, 21008.594672)),
       ("opt-13b", "a100-80gb", 1, (43.464547, 80.389508, 264.167067), (48.090577108571445, 27227.613879))]


@pytest.mark.parametrize("model,gpu,tp,passes,run", OLD)
def test_the_splitwise_fit_gives_the_old_numbers_exactly(model, gpu, tp, passes, run):
    e = roofline.examples(model, gpu, tp, fit="splitwise-2023")
    assert (e["decode_1_ms"], e["decode_32_ms"], e["prefill_ms"]) == passes
    m = _run(model, gpu, tp, "splitwise-2023")["metrics"]
    assert (m["tpot"]["mean"], m["ttft"]["p95"]) == run


def test_the_default_fit_is_vllm_2025_and_differs():
    r = _run("llama-3.1-8b", "h100-80gb", 1)
    assert r["scenario"]["server"]["cost"]["fit"] == "vllm-2025"
    assert r["metrics"]["tpot"]["mean"] < OLD[0][4][0]


@pytest.mark.parametrize("bad", ["vllm-2024", "", 3])
def test_a_bad_fit_names_the_field_and_the_choices(bad):
    with pytest.raises(py_engine.ScenarioError) as e:
        py_engine.simulate({"server": {"cost": {"kind": "roofline", "fit": bad}}})
    msg = str(e.value)
    assert "server.cost.fit" in msg and "vllm-2025" in msg and "splitwise-2023" in msg


def test_repricing_a_closed_loop_equals_simulating_it():
    sc = served.scenario({"model": "qwen3-32b", "gpu": "h100-80gb", "tp": 2})
    loop = served.Loop(sc, 16, 1024, 128, 2)
    old = served.scenario({"model": "qwen3-32b", "gpu": "h100-80gb", "tp": 2,
                           "fit": "splitwise-2023"})
    assert loop.reprice(old.deployment) == served.Loop(old, 16, 1024, 128, 2).measure
    assert loop.reprice(sc.deployment) == loop.measure




def _held_out_tpot(params_of):
    _, test = validate.served_split()
    errs = []
    for pt in test:
        if pt[1] != "h100-80gb" or pt[3] != "bf16":
            continue                       # the bf16 H100 held-out group: Qwen3-32B at tp 4
        loop, sc = validate.served_loop(pt)
        errs.append(abs(validate.served_predict(loop, sc, params_of(pt))[1] - pt[8]) / pt[8])
    return statistics.median(errs), len(errs)


def test_the_vllm_fit_holds_on_held_out_served_measurements():
    new, n = _held_out_tpot(lambda pt: roofline.VLLM_2025)
    old, _ = _held_out_tpot(lambda pt: roofline.fitted("splitwise-2023", pt[1]))
    assert n == 30
    assert new <= 0.10 < old          # the target for decode: median <= 10 %
