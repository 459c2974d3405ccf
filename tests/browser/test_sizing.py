"""The serving engineer's defaults in the page (issue 22, items 5, 6 and 9): "Run on this
deployment" runs vllm serve's own batch defaults for the GPU (the engine's rule, through the kv
answer), the sizing sweep reaches them and its recommendation and chart mark are the engine's,
and the deployment panel chooses the roofline's fit. Every number is the native engine's."""

from urllib.parse import urlsplit

from support.page import (COUNT_CALLS, flat_metrics, metrics_match, read_metrics,
                          scenario_from_query, settle, wait_state)

from py_engine.app.figures import FIGURES

LANES = ["static", "continuous", "vllm"]


def scenario_of(page):
    return scenario_from_query(urlsplit(page.url).query)


def sentence(text):
    """The engine's words (a clause) as the page writes them: a sentence."""
    return text[:1].upper() + text[1:] + "."


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
    assert page.text_content("#slots-advice .advice-text") == sentence(rec["text"])
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


# The walkthrough's sizing figure: azure-conv-2023 on one H100 (roofline), vLLM, 8 slots, a
# tight SLO. Its sizing sweeps are the native engine's, word for word.
CONV = ("?trace=azure-conv-2023&count=300&chunk=0&cost=roofline&max_num_batched_tokens=8192"
        "&kv_tokens=auto&ttft_ms=500&tpot_ms=15&vllm=1")


def native_sizing(native, page, param):
    values = next(p["values"] for p in FIGURES["slots"]["sweep"]["params"]
                  if p["param"] == param)
    return native("sweep", {"scenario": scenario_of(page), "param": param, "values": values,
                            "schedulers": ["vllm"]})


def test_the_sizing_advice_names_the_cap_that_binds_and_reads_as_the_table(strict_page,
                                                                            site_url, native):
    """Sweeping max_num_batched_tokens said "the load exceeds the deployment ... a bigger
    deployment or less traffic will" while every run had its 8 slots full (32 meet the SLO);
    the advice began in lower case; the TTFT column wrote "4.49 s" over "161.3 ms"."""
    page = strict_page
    page.goto(site_url + CONV)
    settle(page)
    slots = native_sizing(native, page, "server.slots")
    rec = slots["recommendation"]["vllm"]
    assert rec["value"] == 32
    text = page.text_content("#slots-advice .advice-text")
    assert text == sentence(rec["text"]) and text.startswith("Set max_num_seqs to 32: at 16, ")
    # the words' share is the table's "within SLO" (every limit at once)
    at16 = next(pt["vllm"] for pt in slots["points"] if pt["value"] == 16)
    share = page.text_content('[data-sizing="16.slo_attainment"]')
    assert share == "%d%%" % round(100 * at16["slo_attainment"])
    assert "(%s within the SLO; 90%% needed)" % share in text
    # one unit a column, from its largest value: seconds here (the queue at 1 slot), each cell
    # its value; TPOT's column stays in ms
    ttft = page.eval_on_selector_all('[data-sizing$=".ttft.p95"]', "els => els.map(e => "
                                     "[e.textContent, Number(e.dataset.value)])")
    assert len(ttft) == 11 and max(v for _, v in ttft) >= 1000
    for cell, ms in ttft:
        assert cell.endswith(" s") and abs(float(cell[:-2].replace(",", "")) - ms / 1000) \
            <= 0.0051 * max(1, ms / 1000), cell
    assert any(ms < 1000 for _, ms in ttft)           # "0.161 s", not "161.3 ms"
    assert all(c.endswith(" ms") for c in page.eval_on_selector_all(
        '[data-sizing$=".tpot.p95"]', "els => els.map(e => e.textContent)"))

    page.select_option("#slots-param", "server.max_num_batched_tokens")
    settle(page)
    budget = native_sizing(native, page, "server.max_num_batched_tokens")
    rec = budget["recommendation"]["vllm"]
    assert rec["value"] is None and rec["binds"] == "server.slots"
    assert page.text_content("#slots-advice .advice-text") == sentence(rec["text"])
    load = page.text_content("#slots-advice [data-overloaded]")
    assert load == "Careful: %s." % rec["load"]
    assert load.startswith("Careful: max_num_seqs = 8 caps the batch: ")
    assert "deployment" not in load and "try sweeping max_num_seqs" in load
    # the button sweeps the field that binds; its sweep recommends what meets the SLO
    assert page.text_content("#slots-advice .sweep-binds") == "Sweep max_num_seqs"
    page.click("#slots-advice .sweep-binds")
    settle(page)
    assert page.input_value("#slots-param") == "server.slots"
    assert page.text_content("#slots-apply") == "Apply: max_num_seqs = 32"


def test_the_sizing_figure_says_it_is_updating_until_its_sweep_comes_round(strict_page,
                                                                           site_url, native):
    """After a change the figure kept the old SLO line, verdict and Apply (up to ~100 s on big
    traces, behind the fleet, planner, stall and skew figures) as if they were current."""
    page = strict_page
    page.goto(site_url + CONV)
    settle(page)
    assert page.is_enabled("#slots-apply")
    assert not page.eval_on_selector("#fig-slots", "e => e.classList.contains('stale')")
    # the change and what the figure shows in the same task: before any new answer can arrive
    now = page.evaluate("""() => {
      const input = document.getElementById('ctl-tpot_ms');
      input.value = '12';
      input.dispatchEvent(new Event('change'));
      const fig = document.getElementById('fig-slots');
      return { stale: fig.classList.contains('stale'),
               apply: document.getElementById('slots-apply')?.disabled ?? null,
               status: document.getElementById('slots-status').textContent,
               rule: document.getElementById('slots-rule').textContent };
    }""")
    assert now["stale"] and now["apply"] is True
    assert now["status"].startswith("updating…")
    assert "TPOT ≤ 15 ms" in now["rule"]                 # what the dimmed figure answers
    settle(page)
    assert not page.eval_on_selector("#fig-slots", "e => e.classList.contains('stale')")
    assert page.text_content("#slots-status") == ""
    assert "TPOT ≤ 12 ms" in page.text_content("#slots-rule")
    rec = native_sizing(native, page, "server.slots")["recommendation"]["vllm"]
    assert page.text_content("#slots-advice .advice-text") == sentence(rec["text"])
    if rec["value"] not in (None, 8):
        assert page.is_enabled("#slots-apply")


def test_the_skew_sweep_is_not_run_on_a_production_trace(strict_page, site_url):
    """Skew shapes the generator's lengths only: on a trace its sweep drew a flat line (~20 s on
    Mooncake) and held up the sizing figure behind it. Now it is not run, and says why."""
    page = strict_page
    page.add_init_script(COUNT_CALLS)
    page.goto(site_url + CONV)
    settle(page)
    assert page.is_visible("#skew-off") and page.is_hidden("#chart-skew")
    assert page.text_content("#skew-off").startswith("Length skew applies to generated "
                                                     "workloads only")
    # every sweep call was the sizing figure's (11 points, asked again once the engine is live)
    sizing = len(FIGURES["slots"]["sweep"]["values"])
    calls = page.evaluate("() => window.__posted.filter((m) => m === 'sweep').length")
    assert calls and calls % sizing == 0, calls
    assert page.text_content("#slots-apply") == "Apply: max_num_seqs = 32"
    # back to the generator: the sweep runs and is drawn
    page.select_option("#ctl-trace", "none")
    settle(page)
    assert page.is_hidden("#skew-off") and page.is_visible("#chart-skew")
    assert page.evaluate("() => window.__posted.filter((m) => m === 'sweep').length") >= \
        calls + len(FIGURES["skew"]["sweep"]["values"])


def test_with_a_fleet_the_sizing_figure_says_it_is_one_server(strict_page, site_url, native):
    """A fleet set: the sizing sweep is still one server taking all of the traffic (the figures
    but the fleet's run one server), and says so, rather than pass for a replica's sizing; its
    numbers are that one server's, natively."""
    page = strict_page
    query = "?requests=120&arrival=poisson&rate=12&replicas=4&router=least_outstanding"
    page.goto(site_url + query)
    settle(page)
    page.wait_for_selector("#slots-advice [data-advice]", state="attached")
    assert page.is_visible("#slots-one-server")
    assert "one server taking all of its traffic" in page.text_content("#slots-one-server")
    one = scenario_of(page)
    one.pop("cluster", None)
    want = native("sweep", {"scenario": one, "param": "slots",
                            "values": FIGURES["slots"]["sweep"]["values"],
                            "schedulers": ["continuous"]})["recommendation"]["continuous"]["value"]
    assert page.get_attribute("#slots-advice [data-advice]", "data-advice") == str(want)
    # one replica: no such words; a fleet again: they come back (the points stay the same)
    for replicas, hidden in (("1", True), ("3", False)):
        page.fill("#ctl-replicas", replicas)
        page.press("#ctl-replicas", "Enter")
        settle(page)
        assert page.is_hidden("#slots-one-server") is hidden, replicas


def test_the_readers_own_setting_is_swept_too(strict_page, site_url, native):
    """At max_num_seqs = 24 (between the grid's powers of two) the advice said "Current:
    max_num_seqs = 24 (not one of the points swept)": the engineer's own setting had no verdict.
    Now it is a point of the sweep, drawn and judged as the engine judges the grid and 24."""
    page = strict_page
    page.goto(site_url + CONV + "&slots=24")
    settle(page)
    grid = FIGURES["slots"]["sweep"]["values"]
    assert 24 not in grid
    values = sorted(grid + [24])
    sweep = native("sweep", {"scenario": scenario_of(page), "param": "slots", "values": values,
                             "schedulers": ["vllm"]})
    rec = sweep["recommendation"]["vllm"]
    assert page.text_content("#slots-advice .advice-text") == sentence(rec["text"])
    at24 = next(pt["vllm"] for pt in sweep["points"] if pt["value"] == 24)
    assert page.text_content('[data-sizing="24.slo_attainment"]') == \
        "%d%%" % round(100 * at24["slo_attainment"])
    advice = page.text_content("#slots-advice")
    assert "not one of the points swept" not in advice
    if rec["value"] != 24:
        verdict = "meets the SLO" if at24["slo_attainment"] >= 0.9 else "fails it"
        assert "Current: max_num_seqs = 24, %s" % verdict in advice
    # the axis keeps the grid's ticks; the other sweep of the figure does not take 24
    page.select_option("#slots-param", "server.max_num_batched_tokens")
    settle(page)
    assert page.eval_on_selector_all('[data-sizing$=".slo_attainment"]', "els => els.length") == \
        len(next(p["values"] for p in FIGURES["slots"]["sweep"]["params"]
                 if p["param"] == "server.max_num_batched_tokens"))
