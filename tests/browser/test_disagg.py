"""Prefill/decode pools and the planner in the page: a P/D URL's fleet numbers, each pool's
replicas and each TTFT part's mean and p95 equal a native run of the same scenario; a request's
parts (hover) add up to its TTFT and equal the native ones; the planner's ranking, numbers and
reason equal `python -m py_engine plan --json` for the same scenario and budget, and its Apply
sets the candidate (the fleet figure then shows that candidate's goodput per GPU); the planner
is cancellable; both fit an 820x520 embed."""

import csv
import io
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from py_engine.scenario import fields
from support.cli import run_cli
from support.page import (flat_fleet, fleet_runs, metrics_match, read_metrics,
                          scenario_from_query, settle)

# A vLLM fleet split 1 prefill : 2 decode replicas over a 10 GB/s link, 1,500-token prompts.
PD = ("vllm=1&requests=60&arrival=poisson&rate=8&prompt_mean=1500&output_mean=64"
      "&prefill_replicas=1&decode_replicas=2&link_gb_s=10")
# A real deployment (Llama 3.1 8B on H100s, the roofline) for the planner.
PLAN = ("cost=roofline&vllm=1&requests=60&arrival=poisson&rate=6&prompt_mean=2000"
        "&output_mean=150&skew=0.2&kv_tokens=auto&slots=64&max_num_batched_tokens=8192"
        "&ttft_ms=1500&tpot_ms=35")
PARTS = ("prefill_queue", "prefill", "transfer", "decode_queue", "first_decode")


def fleet_shown(page):
    return {k: v for k, v in read_metrics(page).items()
            if re.match(r"(fleet|router|replica\d+|prefill\d+|decode\d+|routers)\.", k)}


def ms(text):
    """'12.3 ms' / '2.10 s' -> ms."""
    n, unit = re.fullmatch(r"([\d.,]+) (ms|s)", text.strip()).groups()
    return float(n.replace(",", "")) * (1000 if unit == "s" else 1)


def test_a_pd_fleet_shows_the_native_pools_and_ttft_parts(strict_page, site_url, native):
    page = strict_page
    page.goto(f"{site_url}?{PD}")
    settle(page)
    fleet, routers = fleet_runs(native, scenario_from_query(PD), "vllm")
    shown = fleet_shown(page)
    assert metrics_match(shown, flat_fleet(fleet, routers)) >= 60
    for part in PARTS:
        for stat in ("mean", "p95"):
            assert f"fleet.ttft_parts.{part}.{stat}" in shown, (part, stat)
    for name in ("prefill0.requests", "decode0.requests", "decode1.requests", "fleet.goodput_per_gpu"):
        assert name in shown, name
    assert shown["prefill0.requests"] == 60 == shown["decode0.requests"] + shown["decode1.requests"]
    assert page.locator('canvas.fleet-lane[data-pool="prefill"]').count() == 1
    assert page.locator('canvas.fleet-lane[data-pool="decode"]').count() == 2
    assert "1 prefill + 2 decode replicas" in page.text_content("#fleet-what")
    # a prefill replica emits no output tokens (its one sampled token is dropped): its tok/s is
    # the prompt tokens it computed per second, and its pool's heading says so
    assert "prefill0.prompt_throughput_tok_s" in shown and "prefill0.throughput_tok_s" not in shown
    assert shown["prefill0.prompt_throughput_tok_s"] > 10 * fleet["metrics"]["throughput_tok_s"]
    assert "decode0.throughput_tok_s" in shown and "decode0.prompt_throughput_tok_s" not in shown
    assert "(tok/s: prompt tokens)" in page.text_content("#fleet-lanes tr.pool-head")
    # the means of the parts add up to the mean TTFT (each request's do, exactly, in ticks)
    mean_parts = sum(shown[f"fleet.ttft_parts.{p}.mean"] for p in PARTS)
    assert mean_parts == pytest.approx(fleet["metrics"]["ttft"]["mean"], rel=1e-9)

    # hover a request's bar: its parts, as the native run has them, add up to its TTFT
    bars = page.locator("canvas.parts-bars")
    bars.scroll_into_view_if_needed()
    box = bars.bounding_box()
    n = len(fleet["requests"])
    k = 17
    page.mouse.move(box["x"] + (k + 0.5) * box["width"] / n, box["y"] + box["height"] - 2)
    page.wait_for_selector("#fleet-tip:not([hidden])")
    text = page.inner_text("#fleet-tip")
    got = re.search(r"Request #(\d+): prefill (\d+) → decode (\d+)", text)
    assert got, text
    req = fleet["requests"][int(got.group(1))]
    assert int(got.group(1)) == k and int(got.group(3)) == req["replica"]
    values = dict(re.findall(r"^(.+?)\s+([\d.,]+ m?s)", text, re.M))
    labels = dict(native("schema", {})["figures"]["fleet"]["parts"])
    for p in PARTS:
        assert ms(values[labels[p]]) == pytest.approx(req["ttft_parts"][p], rel=0.01, abs=0.06)
    assert ms(values["TTFT"]) == pytest.approx(req["ttft"], rel=0.01)
    assert sum(req["ttft_parts"].values()) == pytest.approx(req["ttft"], rel=1e-12)

    # Download CSV: the fleet's rows carry their prefill and decode replicas and TTFT parts (ms)
    with page.expect_download() as got:
        page.click("#btn-csv")
    rows = [r for r in csv.DictReader(io.StringIO(open(got.value.path()).read())) if r["run"] == "fleet"]
    assert len(rows) == n
    for r in rows:
        want = fleet["requests"][int(r["id"])]
        assert (int(r["replica"]), int(r["prefill_replica"])) == (want["replica"], want["prefill_replica"])
        for p in PARTS:
            assert abs(float(r[f"ttft_parts.{p} (ms)"]) - want["ttft_parts"][p]) <= 0.0005 * (1 + 1e-9), (p, r["id"])


def plan_natively(query, gpus, scheduler, *extra):
    """`python -m py_engine plan --json` with the flags the URL's fields stand for."""
    args = ["plan", "--gpus", str(gpus), "--json", "--scheduler", scheduler, *extra]
    for key, raw in parse_qs(query).items():
        f = fields.BY_URL.get(key)
        if f is not None and f.control:
            args += ["--" + f.flag, raw[0]]
    p = run_cli(*args)
    assert p.returncode == 0, p.stderr[-400:]
    return json.loads(p.stdout)


def flat(doc, prefix=""):
    """A JSON document as {"a.0.b": leaf}."""
    if not isinstance(doc, (dict, list)):
        return {prefix: doc}
    out = {}
    for k, v in (doc.items() if isinstance(doc, dict) else enumerate(doc)):
        out.update(flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def candidate_key(row):
    keep = ("kind", "replicas", "tp") if row["kind"] == "colocated" else ("kind", "prefill", "decode")
    return {k: row[k] for k in keep}


def test_the_planner_in_the_page_ranks_as_the_command_line_and_applies(strict_page, site_url, native):
    page = strict_page
    page.goto(f"{site_url}?{PLAN}")
    settle(page)
    page.fill("#plan-gpus", "4")
    page.click("#plan-run")
    page.wait_for_selector("#plan-reason-text", state="attached", timeout=240_000)
    settle(page)
    want = plan_natively(PLAN, 4, "vllm")
    keys = page.eval_on_selector_all("#plan-table tr[data-candidate]", "rs => rs.map(r => JSON.parse(r.dataset.candidate))")
    assert keys == [candidate_key(r) for r in want["candidates"]]
    assert len(keys) >= 6
    assert page.text_content("#plan-reason-text") == want["reason"]
    shown = {k: v for k, v in read_metrics(page).items() if k.startswith("plan.")}
    expected = {}
    for i, r in enumerate(want["candidates"], 1):
        for name in ("goodput_per_gpu", "slo_attainment", "meets_slo", "ttft_p95", "tpot_p95"):
            expected[f"plan.{i}.{name}"] = float(r[name])
    assert metrics_match(shown, expected) == 5 * len(keys)
    # its latencies are the p95s the SLO verdict and every other figure use, and say so
    heads = page.eval_on_selector_all("#plan-table thead th", "ths => ths.map(t => t.textContent)")
    assert "TTFT p95" in heads and "TPOT p95" in heads and not any("p90" in h for h in heads)
    assert page.is_hidden("#plan-bar")                    # done: no empty progress bar
    assert "4 GPUs" in page.text_content("#plan-what")
    # Download JSON carries the plan shown: its budget and the command line's ranking
    with page.expect_download() as got:
        page.click("#btn-json")
    plan = json.loads(open(got.value.path()).read())["plan"]
    assert plan["request"]["params"]["gpus"] == 4
    got, native_plan = flat(plan["result"]), flat(want)
    assert got.keys() == native_plan.keys()
    words = {k for k, v in native_plan.items() if isinstance(v, str)}
    assert {k: got[k] for k in words} == {k: native_plan[k] for k in words} and words
    numbers = {k: v for k, v in got.items() if k not in words}
    assert metrics_match(numbers, native_plan) == len(numbers) > 100

    # Apply the recommended candidate: the scenario takes it, the fleet figure runs it
    before = page.get_attribute("html", "data-drawn")
    page.click("#plan-table tr.recommended .plan-apply")
    page.wait_for_function("n => document.documentElement.dataset.drawn !== n", arg=before)
    settle(page)
    rec, q = want["recommended"], parse_qs(urlsplit(page.url).query)
    if rec["kind"] == "colocated":
        assert q.get("replicas", ["1"]) == [str(rec["replicas"])] and q.get("tp", ["1"]) == [str(rec["tp"])]
    else:
        assert q["prefill_replicas"] == [str(rec["prefill"]["replicas"])]
        assert json.loads(q["decode_server"][0]) == {"cost": {"tp": rec["decode"]["tp"]}}
    if rec["kind"] == "disaggregated" or rec["replicas"] > 1:
        got = float(page.get_attribute('[data-metric="fleet.goodput_per_gpu"]', "data-value"))
        assert got == pytest.approx(rec["goodput_per_gpu"], rel=1e-9)
        # the row's TTFT p95 is the fleet figure's, once applied
        got = float(page.get_attribute('[data-metric="fleet.ttft.p95"]', "data-value"))
        assert got == pytest.approx(rec["ttft_p95"], rel=1e-9)
    assert page.locator("#plan-table tr.current").count() == 1      # marked as the one set now


def embedded_plan(page, url, query, gpus, scheduler):
    """The planner embedded at `url` (820x520), planned: its rows and reason are those of
    `plan --json` for the fields of `query` -> that plan."""
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(url)
    settle(page)
    page.wait_for_selector("#plan-reason-text", state="attached", timeout=240_000)
    settle(page)
    want = plan_natively(query, gpus, scheduler)
    keys = page.eval_on_selector_all("#plan-table tr[data-candidate]", "rs => rs.map(r => JSON.parse(r.dataset.candidate))")
    assert keys == [candidate_key(r) for r in want["candidates"]]
    assert page.text_content("#plan-reason-text") == want["reason"]
    return want


def test_a_plans_link_and_embed_carry_its_gpu_budget(strict_page, site_url):
    """The budget lived in the planner alone: embed=plan always planned 8 GPUs, and a link's
    gpus=4 was "no setting of the page". Now the link carries it (and capacity=1) both ways."""
    page = strict_page
    embedded_plan(page, f"{site_url}?embed=plan&gpus=4&{PLAN}", PLAN, 4, "vllm")
    assert page.input_value("#plan-gpus") == "4" and "4 GPUs" in page.text_content("#plan-what")
    assert "gpus" not in page.text_content("#form-message")       # a setting, not a stray word
    # the page writes what the reader sets back into its link
    page.fill("#plan-gpus", "2")
    page.press("#plan-gpus", "Enter")
    page.check("#plan-capacity")
    page.wait_for_function("() => /[?&]gpus=2\\b/.test(location.search) && /[?&]capacity=1\\b/.test(location.search)")
    page.goto(f"{site_url}?embed=plan&gpus=999&{PLAN}")
    settle(page)
    assert "gpus = 999: must be an integer from 1 to 64" in page.text_content("#form-message")


def test_a_planner_embed_with_no_cost_model_plans_a_roofline_deployment(strict_page, site_url):
    """`?embed=plan` (the page's embed snippet on the default scenario) only said it needs a
    roofline deployment, with no button to set one in an embed: it now opens on one, as the
    page's button does, and plans it as the command line does."""
    page = strict_page
    want = embedded_plan(page, f"{site_url}?embed=plan", "cost=roofline", 8, "continuous")
    assert len(want["candidates"]) >= 6
    assert page.text_content("#plan-what") == "8 GPUs (h100-80gb) for llama-3.1-8b"   # the defaults
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 520


def test_the_planner_at_capacity_ranks_as_plan_capacity(strict_page, site_url):
    """'at capacity': each candidate at its highest load within the SLO, as plan --capacity."""
    page = strict_page
    query = PLAN.replace("requests=60", "requests=30")
    page.goto(f"{site_url}?{query}")
    settle(page)
    page.fill("#plan-gpus", "2")
    page.check("#plan-capacity")
    page.click("#plan-run")
    page.wait_for_selector("#plan-reason-text", state="attached", timeout=240_000)
    settle(page)
    want = plan_natively(query, 2, "vllm", "--capacity")
    assert want["capacity"] is True
    keys = page.eval_on_selector_all("#plan-table tr[data-candidate]", "rs => rs.map(r => JSON.parse(r.dataset.candidate))")
    assert keys == [candidate_key(r) for r in want["candidates"]]
    assert page.text_content("#plan-reason-text") == want["reason"]
    shown = {k: v for k, v in read_metrics(page).items() if k.startswith("plan.")}
    expected = {f"plan.{i}.{name}": float(r[name]) for i, r in enumerate(want["candidates"], 1)
                for name in ("goodput_per_gpu", "capacity_rps", "slo_attainment", "meets_slo",
                             "ttft_p95", "tpot_p95")}
    assert metrics_match(shown, expected) == len(expected)
    assert "at capacity" in page.text_content("#plan-what")
    q = parse_qs(urlsplit(page.url).query)
    assert q["gpus"] == ["2"] and q["capacity"] == ["1"]        # the link carries the plan


def test_the_planner_needs_a_deployment_and_is_cancelled(strict_page, site_url):
    page = strict_page
    page.goto(f"{site_url}?requests=20")
    settle(page)
    assert page.is_hidden("#plan-bar")                # nothing runs: no empty progress bar
    page.click("#plan-run")
    page.wait_for_selector("#plan-roofline", state="visible")
    # in the page's words (its controls, not the command line's --model and --gpu)
    status = page.text_content("#plan-status")
    assert status.startswith("Cost model is article:") and "--" not in status, status
    assert "Set Cost model to roofline and choose its Model and GPU" in status, status
    assert page.is_hidden("#plan-bar")
    # the title claims no deployment (the roofline's model and GPU fields have values, unused)
    assert page.text_content("#plan-what") == "a GPU budget"
    # at capacity on burst arrivals: no load to search, said of the workload before any candidate
    page.click("#plan-roofline")
    settle(page)
    page.wait_for_selector("#plan-reason-text", state="attached", timeout=240_000)
    page.check("#plan-capacity")
    page.wait_for_function("() => /^At capacity: workload.arrival.kind = 'burst'/.test(document.getElementById('plan-status').textContent)",
                           timeout=240_000)
    assert "clear \"at capacity\"" in page.text_content("#plan-status")
    assert page.locator("#plan-table tr").count() == 0 and page.text_content("#plan-what") == "a GPU budget"
    page.fill("#plan-gpus", "99")
    page.click("#plan-run")
    assert "must be an integer from 1 to 64" in page.text_content("#plan-gpus-err")
    # styled as every other message beside a control
    color = "s => getComputedStyle(document.querySelector(s)).color"
    assert page.evaluate(f"({color})('#plan-gpus-err')") == page.evaluate(f"({color})('#ctl-requests-err')")
    assert page.get_attribute("#plan-gpus", "aria-invalid") == "true"
    # a longer plan, cancelled between candidates
    page.goto(f"{site_url}?{PLAN.replace('requests=60', 'requests=400')}")
    settle(page)
    page.click("#plan-run")
    page.wait_for_function("() => /^[1-9]\\d* of \\d+ candidates$/.test(document.getElementById('plan-run-status').textContent)",
                           timeout=240_000)
    page.click("#plan-cancel")
    page.wait_for_selector("html:not([data-sweeping])", state="attached")
    assert page.text_content("#plan-run-status") == "cancelled"
    assert page.is_hidden("#plan-cancel") and page.locator("#plan-reason-text").count() == 0


@pytest.mark.parametrize("query", [f"embed=fleet&{PD}", f"embed=plan&{PLAN}"])
def test_pools_and_the_planner_fit_an_820_by_520_embed(strict_page, site_url, native, query):
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?{query}")
    settle(page)
    name = "fleet" if "embed=fleet" in query else "plan"
    if name == "plan":                    # an embedded planner runs without a click
        page.wait_for_selector("#plan-reason-text", state="attached", timeout=240_000)
        settle(page)
    height = native("schema", {})["figures"][name]["embed_height"]
    doc = page.evaluate("() => document.documentElement.scrollHeight")
    content = page.evaluate("() => Math.ceil(document.body.getBoundingClientRect().bottom)")
    assert doc <= 520 and content <= height, (doc, content)
    assert page.is_visible(f'[data-figure="{name}"]') and page.is_visible("#embed-open")
    if name == "fleet":
        assert page.is_visible("canvas.parts-bars")
        right = page.eval_on_selector_all("canvas.fleet-lane, canvas.parts-bars", "cs => cs.map(c => c.getBoundingClientRect().right)")
        assert right and max(right) <= 820
    if name == "plan":   # the table takes the room left, in whole rows: none cut in half
        rows = page.evaluate("""() => { const box = document.getElementById('plan-table').getBoundingClientRect();
          return [...document.querySelectorAll('#plan-table tbody tr')].map((t) => t.getBoundingClientRect())
            .filter((r) => r.top < box.bottom - 1 && r.bottom > box.top).map((r) => [r.bottom, box.bottom]); }""")
        assert len(rows) >= 12 and all(bottom <= box + 1 for bottom, box in rows), rows


def test_a_bad_pool_server_is_named_beside_its_box(strict_page, site_url):
    """A pool's server JSON the engine refuses ({"nonsense": 1}, or a TP under the article's cost)
    was accepted without a word beside the box: only the fleet runs the cluster's fields, and its
    refusal stayed inside the fleet figure. It goes beside the control it names, and goes once
    the fleet runs."""
    page = strict_page
    page.goto(f"{site_url}?requests=20&prefill_replicas=1&decode_replicas=2"
              "&prefill_server=%7B%22nonsense%22%3A1%7D")
    err = '[data-error-for="prefill_server"]'
    page.wait_for_selector(f"{err}:not(:empty)", state="attached", timeout=120_000)
    assert page.text_content(err).startswith("cluster.prefill.server.nonsense: unknown key")
    assert "invalid" in page.get_attribute('[data-field="prefill_server"]', "class")
    # the hint's example works with the article's cost
    example = re.search(r"e\.g\. (\{.*?\})[;.]", page.text_content("#ctl-prefill_server-hint")).group(1)
    page.fill("#ctl-prefill_server", example)
    page.press("#ctl-prefill_server", "Enter")
    page.wait_for_selector('[data-metric="prefill0.requests"]:not([data-value=""])', state="attached",
                           timeout=120_000)
    settle(page)
    assert page.text_content(err) == "" and page.locator(".field.invalid").count() == 0
    assert page.get_attribute('[data-metric="prefill0.requests"]', "data-value") == "20"
    # {"cost": {"tp": 2}} under the article's cost: named too
    page.fill("#ctl-prefill_server", '{"cost": {"tp": 2}}')
    page.press("#ctl-prefill_server", "Enter")
    page.wait_for_selector(f"{err}:not(:empty)", state="attached", timeout=120_000)
    assert page.text_content(err).startswith("cluster.prefill.server.cost.tp: unknown key")
