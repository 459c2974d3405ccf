"""A serving engineer's session: choose a deployment, load a window of a production trace, run
the sizing sweep and apply its recommendation; every number the page shows is the native engine's.
Also: the reader's own trace file, and a calibration fitted in the page (numpy loaded on demand)."""

import json
import re
from urllib.parse import parse_qs, urlsplit

from support.page import flat_metrics, metrics_match, read_metrics, scenario_from_query, settle, wait_state
from support.published import azure_file


def query(page):
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def scenario_of(page):
    q = urlsplit(page.url).query
    return scenario_from_query(q), "vllm" in query(page)


def deploy(page):
    """The deployment panel: Llama-3.1-8B on one H100, then "run on this deployment"."""
    page.select_option("#kv-model", "llama-3.1-8b")
    page.select_option("#kv-gpu", "h100-80gb")
    page.wait_for_selector("#btn-deploy-use")
    page.click("#btn-deploy-use")
    settle(page)


def test_deployment_trace_sizing_and_apply(strict_page, site_url, native):
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    deploy(page)
    q = query(page)
    assert q["cost"] == "roofline" and q["kv_tokens"] == "auto" and q["vllm"] == "1"
    # a window of the Azure conversation trace, 150 requests, at 3 x its recorded rate
    page.select_option("#ctl-trace", "azure-conv-2023")
    page.fill("#ctl-count", "150")
    page.press("#ctl-count", "Enter")
    page.fill("#ctl-rate_scale", "3")
    page.press("#ctl-rate_scale", "Enter")
    settle(page)
    scenario, _ = scenario_of(page)
    assert scenario["workload"]["trace"] == {"name": "azure-conv-2023", "count": 150,
                                             "rate_scale": 3.0}
    want = native.compare(scenario, ["static", "continuous", "vllm"])
    assert metrics_match(read_metrics(page), flat_metrics(want)) >= 60
    credit = page.text_content("#fig-timeline [data-credit]")
    assert "Microsoft Azure" in credit and "CC BY 4.0" in credit and "x3 as dense" in credit
    # the sizing sweep of max_num_seqs, run by the page point by point
    from py_engine.app.figures import FIGURES
    values = FIGURES["slots"]["sweep"]["values"]          # what the page's figure sweeps
    sweep = native("sweep", {"scenario": scenario, "param": "slots", "values": values,
                             "schedulers": ["vllm"]})
    rec = sweep["recommendation"]["vllm"]
    assert page.get_attribute("#slots-advice [data-advice]", "data-advice") == str(rec["value"])
    # the engine's clause as a sentence
    assert page.text_content("#slots-advice .advice-text") == rec["text"][:1].upper() + rec["text"][1:] + "."
    for pt in sweep["points"]:
        for key in ("throughput_tok_s", "slo_attainment", "ttft.p95", "tpot.p95", "itl.p95"):
            cell = page.get_attribute('[data-sizing="%s.%s"]' % (pt["value"], key), "data-value")
            want_v = pt["vllm"]
            for k in key.split("."):
                want_v = want_v[k]
            assert (cell == "" and want_v is None) or abs(float(cell) - want_v) <= 1e-9 * abs(
                want_v), (pt["value"], key)
    # apply it: the setting changes, the URL says so, the numbers follow
    assert rec["value"] is not None and rec["value"] != 8
    page.click("#slots-apply")
    settle(page)
    assert query(page)["slots"] == str(rec["value"])
    scenario, _ = scenario_of(page)
    shown = read_metrics(page)
    assert metrics_match(shown, flat_metrics(native.compare(scenario, ["static", "continuous",
                                                                       "vllm"]))) >= 60


def test_a_mooncake_window_hits_the_prefix_cache_as_natively(strict_page, site_url, native):
    """The page decodes the Mooncake trace's hash ids itself: its vllm lane hits the prefix
    cache, every number the native engine's, and the credit names the paper and the license."""
    page = strict_page
    page.goto(f"{site_url}?trace=mooncake-conv-2025&count=50&vllm=1")
    wait_state(page, "ready")
    settle(page)
    scenario, _ = scenario_of(page)
    assert scenario["workload"]["trace"] == {"name": "mooncake-conv-2025", "count": 50}
    want = flat_metrics(native.compare(scenario, ["static", "continuous", "vllm"]))
    shown = read_metrics(page)
    assert want["vllm.prefix_hit_rate"] > 0
    assert shown["vllm.prefix_hit_rate"] == want["vllm.prefix_hit_rate"]
    assert metrics_match(shown, want) >= 60
    credit = page.text_content("#fig-timeline [data-credit]")
    for words in ("Qin et al.", "USENIX FAST 2025", "kvcache-ai/Mooncake", "Apache License 2.0",
                  "requests 0-49"):
        assert words in credit, words


def test_own_trace_file_and_calibration(strict_page, site_url, native, tmp_path):
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    # a trace file with a bad value: the message names the file's line and the field
    bad = tmp_path / "mine.csv"
    bad.write_text("arrive,prompt,out\n0,100,20\n5,0,10\n")
    page.set_input_files("#trace-file", str(bad))
    page.wait_for_function("() => document.getElementById('trace-file-error').textContent")
    assert page.text_content("#trace-file-error").startswith("mine.csv line 3: prompt = 0")
    # ... and its status does not read as loaded (it said "mine.csv: 2 requests (CSV); ...")
    assert page.text_content("#trace-file-status") == "mine.csv: 2 requests read, not run: the engine refuses the line below."
    good = tmp_path / "mine.jsonl"
    items = [{"arrive": i * 10.0, "prompt": 50 + i, "out": 5 + i % 3, "prefix_id": i % 2,
              "prefix_len": 32} for i in range(20)]
    good.write_text("\n".join(json.dumps(it) for it in items))
    n = int(page.get_attribute("html", "data-drawn"))
    page.set_input_files("#trace-file", str(good))
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=n)
    assert "20 requests" in page.text_content("#trace-file-status")
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(
        {"workload": {"items": items}}))) >= 40
    # calibration: measurements in, the fitted cost drives the runs and is in the link
    page.click("#calibrate summary")
    csv = ("rows,prefill_tokens,context_tokens,step_ms\n1,0,1000,10.5\n8,0,8000,12.1\n"
           "32,0,32000,17.9\n1,2048,0,160\n4,4096,0,300\n")
    page.fill("#calibrate-csv", csv)
    page.click("#calibrate-fit")
    page.wait_for_selector("#calibrate-use", timeout=120_000)
    fit = native("calibrate", {"csv": csv})
    assert float(page.get_attribute('[data-stat="fit.per_context_token_ms"]', "data-value")) == \
        fit["cost"]["per_context_token_ms"]
    page.click("#calibrate-use")
    settle(page)
    q = query(page)
    assert q["cost"] == "custom" and float(q["per_context_token_ms"]) == fit["cost"][
        "per_context_token_ms"]
    scenario = {"workload": {"items": items}, "server": {"cost": fit["cost"]}}
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(scenario))) >= 40
    # the CLI's parser: upper-case headers, quoted cells and CR-only lines read as the CLI reads
    # them, and a number too big for a float is named as written
    odd = tmp_path / "excel.csv"
    odd.write_bytes(b'ARRIVE, "Prompt" ,Out\r0,"100",20\r"7.5",60,9\r')
    n = int(page.get_attribute("html", "data-drawn"))
    page.set_input_files("#trace-file", str(odd))
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=n)
    assert page.text_content("#trace-file-status").startswith("excel.csv: 2 requests (CSV);")
    cli = native("parse_trace", {"name": "excel.csv", "text": odd.read_bytes().decode()})
    scenario = {"workload": {"items": cli["items"]}, "server": {"cost": fit["cost"]}}
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(scenario))) >= 40
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"arrive": 0, "prompt": 5, "out": 1}\n{"arrive": 1e400, "prompt": 5, "out": 1}\n')
    page.set_input_files("#trace-file", str(huge))
    page.wait_for_function("() => document.getElementById('trace-file-error').textContent")
    assert page.text_content("#trace-file-error").startswith("huge.jsonl line 2: arrive = '1e400'")


def test_a_published_azure_file_runs_as_the_shipped_window(strict_page, site_url, native,
                                                           tmp_path):
    """The Azure CSV as published (its own columns and timestamps) is a trace file the page
    reads: the run is the shipped trace's window, to the number."""
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    mine = tmp_path / "AzureLLMInferenceTrace_conv.csv"
    mine.write_text("\r\n".join(azure_file("azure-conv-2023").split("\r\n")[:121]),
                    newline="")
    n = int(page.get_attribute("html", "data-drawn"))
    page.set_input_files("#trace-file", str(mine))
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=n)
    status = page.text_content("#trace-file-status")
    assert "120 requests (Azure CSV" in status, status
    window = {"workload": {"trace": {"name": "azure-conv-2023", "count": 120}}}
    assert metrics_match(read_metrics(page), flat_metrics(native.compare(window))) >= 40
    # a link cannot carry the file: sharing says so, and the JSON export carries it
    page.click("#btn-copy-link")
    page.wait_for_function("() => document.getElementById('export-status').textContent")
    assert ("Your trace file AzureLLMInferenceTrace_conv.csv (120 requests) is not in the link"
            in page.text_content("#export-status"))
    with page.expect_download() as got:
        page.click("#btn-json")
    doc = json.loads(open(got.value.path()).read())
    assert len(doc["request"]["params"]["scenario"]["workload"]["items"]) == 120


SERVED = ("batch,prompt,ttft_ms,tpot_ms\n1,512,60,12.5\n8,512,380,14\n32,512,1500,21\n"
          "64,512,2900,30\n")


def test_calibration_after_a_deployment_keeps_its_kv_pool(strict_page, site_url, native):
    """Deployment -> Calibrate -> "Use the fitted cost model" failed: kv_tokens 'auto' needs a
    roofline cost. The page now keeps the pool auto had resolved to, and says so."""
    page = strict_page
    page.goto(site_url + "?requests=24")
    wait_state(page, "ready")
    deploy(page)
    scenario, _ = scenario_of(page)
    pool = native.compare(scenario, ["static", "continuous", "vllm"])["vllm"]["metrics"][
        "kv_pool_tokens"]
    assert query(page)["kv_tokens"] == "auto" and pool > 0
    page.click("#calibrate summary")
    page.fill("#calibrate-csv", SERVED)
    page.click("#calibrate-fit")
    page.wait_for_selector("#calibrate-use", timeout=120_000)
    page.click("#calibrate-use")
    settle(page)
    assert page.locator(".error, [role=alert]").filter(has_text="needs a roofline").count() == 0
    q = query(page)
    assert q["cost"] == "custom" and q["kv_tokens"] == str(pool)
    assert "stays at {:,} tokens".format(pool) in page.text_content("#calibrate-note")
    fit = native("calibrate", {"csv": SERVED})
    scenario, _ = scenario_of(page)
    assert scenario["server"]["kv_tokens"] == pool
    for k, v in fit["cost"].items():
        assert scenario["server"]["cost"][k] == v
    want = native.compare(scenario, ["static", "continuous", "vllm"])
    assert metrics_match(read_metrics(page), flat_metrics(want)) >= 60


def test_a_fit_the_data_cannot_pin_down_is_not_offered(strict_page, site_url, native):
    """Every row at one batch size: R^2 1.0000 with arbitrary coefficients, offered for use."""
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    page.click("#calibrate summary")
    csv = "rows,prefill_tokens,context_tokens,step_ms\n4,0,1000,10\n4,0,3000,12\n4,100,0,20\n"
    page.fill("#calibrate-csv", csv)
    page.click("#calibrate-fit")
    page.wait_for_selector("#calibrate-problem", timeout=120_000)
    assert page.locator("#calibrate-use").count() == 0
    want = native("calibrate", {"csv": csv})
    assert not want["usable"]
    assert page.text_content("#calibrate-problem") == "Not usable: %s." % want["problem"]


def test_a_roofline_scenario_shows_its_deployment_and_what_auto_would_size(strict_page, site_url,
                                                                           native):
    """?cost=roofline&gpu=h100-80gb left the deployment panel at the article's "custom" GPU, and
    KV capacity empty (unlimited) with nothing saying that auto sizes the pool from the GPU. The
    panel shows the scenario's deployment (its tokens are the pool kv_tokens=auto would take) and
    follows it; the KV field's hint says what auto is; a pool's server hint has an example that
    works with the cost model chosen."""
    page = strict_page
    q = "cost=roofline&model=llama-3.1-8b&gpu=h100-80gb&vllm=1&requests=24"
    page.goto(f"{site_url}?{q}")
    settle(page)

    def pool(scenario):
        scenario = dict(scenario, server={**scenario.get("server", {}), "kv_tokens": "auto"})
        return native.compare(scenario, ["static", "continuous", "vllm"])["vllm"]["metrics"]["kv_pool_tokens"]

    want = pool(scenario_from_query(q))
    page.wait_for_function("n => document.querySelector('[data-stat=\"kv.tokens\"]')?.dataset.value === String(n)",
                           arg=want)
    assert page.input_value("#kv-model") == "llama-3.1-8b" and page.input_value("#kv-gpu") == "h100-80gb"
    assert "auto: the KV the GPU leaves" in page.text_content("#ctl-kv_tokens-hint")
    assert '{"cost": {"tp": 2}}' in page.text_content("#ctl-prefill_server-hint")
    # the sidebar's GPU changed: the panel follows
    page.select_option("#ctl-gpu", "a100-80gb")
    settle(page)
    want = pool(scenario_of(page)[0])
    page.wait_for_function("n => document.querySelector('[data-stat=\"kv.tokens\"]')?.dataset.value === String(n)",
                           arg=want)
    assert page.input_value("#kv-gpu") == "a100-80gb"
    # under the article's cost a TP is no server field: the hints say neither
    page.select_option("#ctl-cost", "article")
    settle(page)
    assert "auto: the KV the GPU leaves" not in page.text_content("#ctl-kv_tokens-hint")
    hint = page.text_content("#ctl-prefill_server-hint")
    assert '{"slots": 16}' in hint and '{"cost": {"tp": 2}}' not in hint
    assert page.input_value("#kv-gpu") == "a100-80gb"       # the panel keeps the last deployment


def test_a_calibration_fit_is_cancelled_and_only_the_latest_fit_is_shown(strict_page, site_url,
                                                                           native):
    """SPEC: any run in the page can be cancelled. The fit waits for numpy's first load (held
    here): Cancel stops it in the engine too, and says so; Fit runs it again, and its answer is
    the native one."""
    page = strict_page
    page.add_init_script("delete window.SharedWorker;")   # a worker whose requests the page routes
    held = []
    page.route(re.compile(r".*/numpy-[^/]*\.whl$"), lambda route: held.append(route))
    page.goto(site_url + "?requests=24")
    wait_state(page, "ready")
    page.click("#calibrate summary")
    page.fill("#calibrate-csv", SERVED)
    with page.expect_request(re.compile(r".*/numpy-[^/]*\.whl$")):
        page.click("#calibrate-fit")
    assert page.is_visible("#calibrate-cancel")
    page.click("#calibrate-cancel")
    page.wait_for_function("() => document.getElementById('calibrate-result').textContent"
                           ".startsWith('Cancelled')")
    assert page.locator("#calibrate-cancel").is_hidden()
    # the engine dropped it: with numpy still held, a fit left in its queue would stay there
    page.wait_for_function("async () => { const j = await window.__cbxEngine.jobs();"
                           " return !j.queued && !j.running; }")
    assert held
    for route in held:
        route.continue_()
    page.click("#calibrate-fit")
    page.wait_for_selector("#calibrate-use", timeout=120_000)
    assert page.locator("#calibrate-cancel").is_hidden()
    fit = native("calibrate", {"csv": SERVED})
    assert float(page.get_attribute('[data-stat="fit.per_context_token_ms"]', "data-value")) == \
        fit["cost"]["per_context_token_ms"]


def test_a_refused_gb_box_is_answered_in_gb_and_the_old_answer_is_not_offered(strict_page, site_url):
    """The panel's GPU memory box is in GB, the engine's field in bytes: 1e15 typed there read
    "gpu_bytes = 999999999999999983222784: must be an integer from 1 to 10,000,000,000,000,000",
    beside the last answer's "Use … tokens as the vLLM KV budget", still clickable. The message is
    the box's now, in GB, and the old answer is dimmed with its buttons off until the form is
    answered again."""
    page = strict_page
    page.goto(site_url)
    settle(page)
    page.wait_for_selector("#kv-result button")
    for typed, words in (("1e15", "GPU memory = 1e15 GB: must be a number above 0 up to 10,000,000 GB"),
                         ("-1", "GPU memory = -1 GB: must be a number above 0 up to 10,000,000 GB")):
        page.fill("#kv-gpu_gb", typed)
        page.press("#kv-gpu_gb", "Enter")
        page.dispatch_event("#kv-gpu_gb", "change")
        page.wait_for_function("w => document.querySelector('[data-error-for=\"kv-gpu_gb\"]').textContent === w", arg=words)
        assert page.get_attribute("#kv-result", "class") == "kv-result stale"
        assert page.eval_on_selector_all("#kv-result button", "bs => bs.length > 0 && bs.every(b => b.disabled)")
    page.fill("#kv-weight_gb", "-2")
    page.dispatch_event("#kv-weight_gb", "change")
    page.fill("#kv-gpu_gb", "80")
    page.dispatch_event("#kv-gpu_gb", "change")
    page.wait_for_function("() => /^Weight memory = -2 GB: must be a number from 0 up to /.test(document.querySelector('[data-error-for=\"kv-weight_gb\"]').textContent)")
    page.fill("#kv-weight_gb", "16")
    page.dispatch_event("#kv-weight_gb", "change")
    page.wait_for_selector("#kv-result:not(.stale) button:not([disabled])")
