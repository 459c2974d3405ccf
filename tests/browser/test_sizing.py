"""The serving engineer's defaults in the page (issue 22, items 5, 6 and 9): "Run on this
deployment" runs vllm serve's own batch defaults for the GPU (the engine's rule, through the kv
answer), the sizing sweep reaches them and its recommendation and chart mark are the engine's,
and the deployment panel chooses the roofline's fit. Every number is the native engine's."""

from urllib.parse import urlsplit

from support.page import (flat_metrics, metrics_match, read_metrics, scenario_from_query, settle,
                          wait_state)

from py_engine.app.figures import FIGURES

LANES = ["static", "continuous", "vllm"]


def scenario_of(page):
    return scenario_from_query(urlsplit(page.url).query)


def deploy(page, native, gpu, model="llama-3.1-8b"):
    """Pick the deployment and run on it, once the panel shows that deployment's button (the one
    of the deployment picked before is there at once: clicking it raced the kv answer)."""
    page.select_option("#kv-model", model)
    page.select_option("#kv-gpu", gpu)
    name = native("kv", {"model": model, "gpu": gpu})["roofline"]["deployment"]
    page.wait_for_function("(name) => { const b = document.getElementById('btn-deploy-use');"
                           " return !!b && b.textContent.includes('(' + name + ')'); }", arg=name)
    page.click("#btn-deploy-use")
    settle(page)


def test_run_on_this_deployment_uses_vllm_serves_defaults(strict_page, site_url, native):
    """It kept slots 8 and budget 2,048: on an H100 vllm serve runs 1,024 / 8,192, on an A100
    256 / 2,048, both with long_prefill_token_threshold 0 (chunk 0 = off)."""
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    deploy(page, native, "h100-80gb")
    server = scenario_of(page)["server"]
    assert (server["slots"], server["max_num_batched_tokens"], server["chunk"]) == (1024, 8192, 0)
    assert "max_num_seqs 1,024, max_num_batched_tokens 8,192, long_prefill_token_threshold 0" in \
        page.text_content('[data-stat="roofline.serve_defaults"]')
    assert page.input_value("#ctl-slots") == "1024" and page.input_value("#ctl-chunk") == "0"
    scenario = scenario_of(page)
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(scenario, LANES))) >= 60
    # the sizing sweep reaches vLLM's default; its verdict and the chart's mark are the engine's
    values = FIGURES["slots"]["sweep"]["values"]
    assert values[-1] == 1024 and 256 in values
    sweep = native("sweep", {"scenario": scenario, "param": "slots", "values": values,
                             "schedulers": ["vllm"]})
    rec = sweep["recommendation"]["vllm"]
    assert page.text_content("#slots-advice .advice-text") == rec["text"] + "."
    assert page.get_attribute("#chart-slots", "data-best") == str(rec["value"])
    assert page.get_attribute('[data-sizing="1024.throughput_tok_s"]', "data-value") is not None
    assert "the largest tried" not in rec["text"]

    deploy(page, native, "a100-80gb")      # >= 70 GiB, but vLLM keeps the small defaults on an A100
    server = scenario_of(page)["server"]
    assert server["slots"] == 256 and server.get("max_num_batched_tokens", 2048) == 2048
    assert page.input_value("#ctl-max_num_batched_tokens") == "2048"
    assert "an A100" in page.text_content('[data-stat="roofline.serve_defaults"]')
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(scenario_of(page),
                                                                         LANES))) >= 60


def test_the_deployment_panel_chooses_the_roofline_fit(strict_page, site_url, native):
    """The panel named the fit (roofline.fit) but had no control: switching it gives the native
    pass times of that fit, and running on the deployment takes it along."""
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    page.select_option("#kv-model", "llama-3.1-70b")
    page.select_option("#kv-gpu", "h100-80gb")
    page.fill("#kv-gpus", "4")
    page.press("#kv-gpus", "Enter")
    page.wait_for_selector('[data-stat="roofline.fit"][data-value="vllm-2025"]')
    params = {"model": "llama-3.1-70b", "gpu": "h100-80gb", "gpus": 4}
    stats = ("decode_1_ms", "decode_32_ms", "prefill_ms")

    def shown():
        return {k: float(page.get_attribute('[data-stat="roofline.%s"]' % k, "data-value"))
                for k in stats}
    before = shown()
    assert before == {k: native("kv", {**params})["roofline"][k] for k in stats}
    page.select_option("#kv-fit", "splitwise-2023")
    page.wait_for_selector('[data-stat="roofline.fit"][data-value="splitwise-2023"]')
    old = native("kv", {**params, "fit": "splitwise-2023"})["roofline"]
    assert shown() == {k: old[k] for k in stats} != before
    page.click("#btn-deploy-use")
    settle(page)
    scenario = scenario_of(page)
    assert scenario["server"]["cost"]["fit"] == "splitwise-2023"
    assert scenario["server"]["cost"]["tp"] == 4
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(scenario, LANES))) >= 60
