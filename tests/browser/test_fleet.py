"""The fleet figure (replicas behind a router): a fleet URL's numbers, each replica's and every
router's in the comparison, equal native py_engine.simulate runs of the same scenario; hovering a
request names the replica it went to and the router's scores for it; the embed fits 820x520; the
router comparison is cancellable; a single-server page asks nothing of it until it is opened."""

import csv
import io
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from support.page import (COUNT_CALLS, flat_fleet, flat_metrics, fleet_runs, metrics_match,
                          read_metrics, scenario_from_query, settle)

# Three vLLM replicas, four 1,500-token system prompts, llm-d's scorers with a lighter KV weight.
FLEET = ("vllm=1&requests=120&arrival=poisson&rate=10&output_mean=48&prefix=system&groups=4"
         "&tokens=1500&kv_tokens=6000&replicas=3&router=llm_d&w_kv=0.5")


def kinds(native):
    return next(f for f in native("schema", {})["fields"] if f["path"] == "cluster.router.kind")["choices"]


def expected(native, query, scheduler):
    """Every number the page may show for this URL, natively: the one-server comparison of the
    main figures, the fleet, and every router on the same trace."""
    scenario = scenario_from_query(query)
    lanes = ["static", "continuous"] + (["vllm"] if "vllm=1" in query else [])
    one = {k: v for k, v in scenario.items() if k != "cluster"}
    fleet, routers = fleet_runs(native, scenario, scheduler)
    return fleet, routers, {**flat_metrics(native.compare(one, lanes)), **flat_fleet(fleet, routers)}


def fleet_metrics(shown):
    return {k: v for k, v in shown.items() if re.match(r"(fleet|router|replica\d+|routers)\.", k)}


def test_a_fleet_url_shows_the_native_numbers_and_why_each_request_went_where(
        strict_page, site_url, native):
    page = strict_page
    page.goto(f"{site_url}?{FLEET}")
    settle(page)
    fleet, routers, want = expected(native, FLEET, "vllm")
    shown = read_metrics(page)
    assert metrics_match(shown, want) >= 60
    fm = fleet_metrics(shown)
    for name in ("fleet.throughput_tok_s", "fleet.ttft.p95", "fleet.prefix_hit_rate",
                 "router.load_imbalance", "replica0.requests", "replica2.prefix_hit_rate",
                 "routers.round_robin.ttft.p95", "routers.kv_cost.load_imbalance"):
        assert name in fm, name
    assert page.locator("canvas.fleet-lane").count() == 3
    assert page.text_content("#fleet-what") == "3 replicas behind llm-d scorers (weight: KV 0.5)"
    # the comparison's llm-d row ran with those weights, the others with none to name: said so
    knobs = page.eval_on_selector_all("#fleet-routers tbody tr", """trs => Object.fromEntries(trs.map(
        tr => [tr.querySelector('.router-pick').dataset.router, tr.querySelector('.router-knobs')?.textContent ?? null]))""")
    assert knobs == {kind: ("(weight: KV 0.5)" if kind == "llm_d" else None) for kind in kinds(native)}
    assert page.locator("#fleet-compare-hint").is_hidden()      # a KV budget: no hint

    # Hover the tick of a request: the tooltip names its replica and the router's scores for it.
    req = fleet["requests"][40]
    k, arrive = req["replica"], req["arrive"]
    lane = page.locator(f'canvas.fleet-lane[data-replica="{k}"]')
    lane.scroll_into_view_if_needed()
    box = lane.bounding_box()
    x = 3 + arrive / fleet["metrics"]["makespan"] * (box["width"] - 6)
    page.mouse.move(box["x"] + x, box["y"] + box["height"] - 3)
    page.wait_for_selector("#fleet-tip:not([hidden])")
    text = page.inner_text("#fleet-tip")
    got = re.search(r"Request #(\d+) → replica (\d+)", text)
    assert got, text
    rid = int(got.group(1))
    assert int(got.group(2)) == fleet["requests"][rid]["replica"] == k
    scores = dict(fleet["router"]["scores"])[rid]
    shown_scores = re.findall(r"replica (\d+)(?: ←)?\s+([\d.,]+)", text.split("wins):")[1])
    assert [int(i) for i, _ in shown_scores] == list(range(3))
    assert [float(s.replace(",", "")) for _, s in shown_scores] == pytest.approx(scores, abs=0.006)
    reason = fleet["router"]["reasons"][rid]
    why = next(r for r in native("schema", {})["routers"] if r["name"] == "llm_d")["why"][reason]
    assert f"It {why}." in text


def test_a_fleet_page_asks_the_engine_for_its_fleet_first(strict_page, site_url):
    """A fleet's link is opened for the fleet: its run is the engine's first call and the
    one-server timelines' run comes next (the worker answers in order). On the whole Mooncake
    trace that one-server run is refused after ~11 s in the page, and the fleet, asked after it,
    came at ~22 s instead of ~11. The one-server run's "simulating…" while it waits leaves the
    fleet's numbers drawn (test above: every fleet number shown)."""
    page = strict_page
    page.goto(f"{site_url}?{FLEET}")
    settle(page)
    fleet_end, main_end = page.evaluate("""() => ['cbx:fleet', 'cbx:engine'].map((name) => {
        const e = performance.getEntriesByName(name)[0];
        return e.startTime + e.duration; })""")
    assert fleet_end <= main_end, "the one-server run was answered before the fleet's"


def test_on_a_fleet_page_the_timelines_wait_for_the_fleet_and_cancel_stops_both(strict_page,
                                                                                 site_url):
    """While the engine runs the fleet first, the one-server timelines say they come after it and
    the fleet figure that it is simulating (not "as soon as the engine has loaded"); the Cancel
    that says "the engine is free" stops the fleet's run too, so the engine is free."""
    page = strict_page
    page.goto(f"{site_url}?trace=mooncake-conv-2025&count=3000&cost=roofline&model=llama-3.1-8b"
              "&gpu=h100-80gb&kv_tokens=auto&vllm=1&replicas=8")
    page.wait_for_selector("html[data-stale='simulating… after the fleet’s run']",
                           state="attached", timeout=120_000)
    assert page.inner_text("#fleet-status").startswith("simulating the fleet…")
    page.click("#btn-cancel-run")
    page.wait_for_selector("html:not([data-pending])", state="attached", timeout=120_000)
    assert page.get_attribute("html", "data-stale") == "cancelled"
    assert "engine is free" in page.inner_text("#timeline-wait")
    assert page.inner_text("#fleet-status").startswith("Cancelled")


FLEET_STATUS = """
window.__fleetStatus = [];
new MutationObserver(() => {
  const s = document.getElementById('fleet-status');
  if (s && s.textContent !== window.__fleetStatus[window.__fleetStatus.length - 1]) window.__fleetStatus.push(s.textContent);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def test_the_fleet_says_how_many_requests_are_done_while_it_runs(strict_page, site_url):
    """A burst is routed at once, and its replicas' tails are the fleet's run: the engine now
    reports the requests done inside them too (fleet/run.py slices), and the figure's line says
    it beside "simulating the fleet…" (it said only that)."""
    page = strict_page
    page.add_init_script(FLEET_STATUS)
    page.goto(f"{site_url}?requests=20000&output_mean=300&vllm=1&replicas=2")
    page.wait_for_selector("[data-metric='fleet.throughput_tok_s'][data-value]:not([data-value=''])",
                           state="attached", timeout=180_000)
    counts = [int(m.group(1).replace(",", "")) for m in
              (re.match(r"simulating the fleet… ([\d,]+) of 20,000 requests · ", t)
               for t in page.evaluate("window.__fleetStatus")) if m]
    assert any(0 < n < 20_000 for n in counts), page.evaluate("window.__fleetStatus")
    assert counts == sorted(counts)


def test_a_change_during_the_fleets_first_run_never_shows_the_old_fleet(strict_page, site_url,
                                                                        native):
    """Replicas changed while the fleet-first run of the old value is in the engine: the figure
    goes blank at once and never draws the old run's numbers under the new value (it did, for as
    long as the new run took), then shows the new fleet's native numbers."""
    page = strict_page
    page.add_init_script("""window.__what = [];
        new MutationObserver(() => { const e = document.getElementById('fleet-what');
          if (e) window.__what.push(e.textContent); })
        .observe(document, { subtree: true, childList: true, characterData: true });""")
    query = "requests=2000&arrival=poisson&rate=30&replicas=4"
    page.goto(f"{site_url}?{query}")
    page.wait_for_function("() => document.getElementById('fleet-status').textContent"
                           " === 'simulating the fleet…'", timeout=120_000)
    page.evaluate("window.__what = []")
    page.fill("#ctl-replicas", "5")
    page.press("#ctl-replicas", "Enter")
    settle(page)
    assert not any(w.startswith("4 replicas") for w in page.evaluate("window.__what"))
    assert page.text_content("#fleet-what") == "5 replicas behind round robin"
    fleet, _, _ = expected(native, query.replace("replicas=4", "replicas=5"), "continuous")
    shown = float(page.get_attribute('[data-metric="fleet.throughput_tok_s"]', "data-value"))
    assert shown == pytest.approx(fleet["metrics"]["throughput_tok_s"], rel=1e-12)


def test_cache_aware_hover_does_not_crown_a_load_that_did_not_decide(strict_page, site_url, native):
    """SGLang's cache-aware router keeps loads as its scores but follows a prefix match (or the
    smallest tree) unless the loads are imbalanced: there the tooltip bolds no lowest load."""
    page = strict_page
    query = FLEET.replace("router=llm_d&w_kv=0.5", "router=cache_aware")
    page.goto(f"{site_url}?{query}")
    settle(page)
    fleet = native("simulate", {"scenario": {**scenario_from_query(query), "scheduler": "vllm"}})
    req = fleet["requests"][40]
    lane = page.locator(f'canvas.fleet-lane[data-replica="{req["replica"]}"]')
    lane.scroll_into_view_if_needed()
    box = lane.bounding_box()
    x = 3 + req["arrive"] / fleet["metrics"]["makespan"] * (box["width"] - 6)
    page.mouse.move(box["x"] + x, box["y"] + box["height"] - 3)
    page.wait_for_selector("#fleet-tip:not([hidden])")
    text = page.inner_text("#fleet-tip")
    rid = int(re.search(r"Request #(\d+) →", text).group(1))
    assert fleet["router"]["reasons"][rid] != "balance"      # a match or the smallest tree decided
    assert "not what decided this request" in text and "wins)" not in text, text
    assert page.locator("#fleet-tip .tip-best").count() == 0


def test_the_prefix_tokens_held_at_routing_say_when_they_were_counted(strict_page, site_url, native):
    """Requests all routed at t = 0 find nothing cached anywhere: the count was "Prefix tokens
    cached where sent: 0" beside an 85% prefix hit rate. It says now that it is counted at routing,
    and why it is 0 there; where requests arrive over time it counts what was cached."""
    page = strict_page
    for query, zero in ((FLEET.replace("arrival=poisson&rate=10", "arrival=burst")
                         .replace("router=llm_d&w_kv=0.5", "router=cache_aware"), True),
                        (FLEET.replace("router=llm_d&w_kv=0.5", "router=cache_aware"), False)):
        page.goto(f"{site_url}?{query}")
        settle(page)
        fleet = native("simulate", {"scenario": {**scenario_from_query(query), "scheduler": "vllm"}})
        held = fleet["router"]["prefix_tokens_held"]
        assert (held == 0) == zero and fleet["metrics"]["prefix_hit_rate"] > 0.5
        text = page.text_content("#fleet-decisions")
        assert "At routing, prompt tokens the chosen replica already had cached: " in text, text
        assert float(page.get_attribute('[data-metric="router.prefix_tokens_held"]', "data-value")) == held
        assert ("nothing of their prompts was cached yet when they were routed" in text) == zero, text


def test_a_fleet_page_links_its_top_to_the_fleet_figure(strict_page, site_url):
    """The fleet figure sits screens below the one-server timelines: at the top, a link says
    which fleet and what the timelines are, and takes the reader there; one server: no link."""
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?requests=300&arrival=poisson&rate=30&replicas=4&router=least_outstanding")
    settle(page)
    jump = page.locator("#fleet-jump")
    assert jump.is_visible() and "The fleet: 4 replicas behind least outstanding" in jump.inner_text()
    # continuous batching keeps no prefix cache: the router comparison says why the routers tie
    page.wait_for_selector("#fleet-compare-hint:not([hidden])", state="attached")
    assert "keeps no prefix cache" in page.text_content("#fleet-compare-hint")
    assert not page.locator("#fig-fleet").is_visible() or page.evaluate(
        "document.getElementById('fig-fleet').getBoundingClientRect().top > innerHeight")
    jump.locator("a").click()
    page.wait_for_function("() => { const r = document.getElementById('fig-fleet')"
                           ".getBoundingClientRect(); return r.top >= -1 && r.top < innerHeight / 2; }")
    page.fill("#ctl-replicas", "1")
    page.press("#ctl-replicas", "Enter")
    page.wait_for_selector("#fleet-jump", state="hidden")


def test_the_router_comparison_lists_every_router_and_picks_one(strict_page, site_url, native):
    page = strict_page
    page.add_init_script(COUNT_CALLS)
    query = "requests=300&arrival=poisson&rate=30&replicas=4"      # continuous, round robin
    page.goto(f"{site_url}?{query}")
    settle(page)
    names = page.eval_on_selector_all("#fleet-routers [data-router]", "bs => bs.map(b => b.dataset.router)")
    assert names == kinds(native)
    _, routers, want = expected(native, query, "continuous")
    shown = read_metrics(page)
    assert metrics_match(shown, want) > 0
    for kind in names:
        for key in ("throughput_tok_s", "ttft.p95", "slo_attainment", "load_imbalance"):
            assert f"routers.{kind}.{key}" in shown, (kind, key)
    assert page.get_attribute('#fleet-routers tr.current [data-router]', "data-router") == "round_robin"
    # a router's button sets it: the fleet figure follows, the link too; the one-server figures
    # depend on no router: they keep their answers, and the engine runs nothing (the fleet's run
    # under that router is the comparison's)
    before = page.get_attribute("html", "data-drawn")
    page.evaluate("window.__posted = []")
    # its runs are in hand: the figure shows them at once (no "…" meanwhile)
    now = page.evaluate("""() => {
        document.querySelector('#fleet-routers [data-router="least_outstanding"]').click();
        const shown = (m) => document.querySelector(`#fig-fleet [data-metric="${m}"]`).dataset.value;
        return [shown('fleet.throughput_tok_s'), shown('routers.round_robin.ttft.p95'),
                document.querySelector('#fleet-routers tr.current [data-router]').dataset.router];
    }""")
    assert now[0] != "" and now[1] != "" and now[2] == "least_outstanding", now
    page.wait_for_function("n => document.documentElement.dataset.drawn !== n", arg=before)
    settle(page)
    assert page.evaluate("window.__posted") == []
    assert parse_qs(urlsplit(page.url).query)["router"] == ["least_outstanding"]
    assert page.get_attribute('#fleet-routers tr.current [data-router]', "data-router") == "least_outstanding"
    assert "behind least outstanding" in page.text_content("#fleet-what")
    _, again, want = expected(native, query + "&router=least_outstanding", "continuous")
    assert again == routers                                  # the same trace, the same runs
    assert metrics_match(read_metrics(page), want) > 0


def test_a_single_server_page_opens_the_fleet_on_request(strict_page, site_url, native):
    page = strict_page
    page.goto(site_url)
    settle(page)
    assert page.is_visible("#fleet-open") and not page.is_visible("#fleet-body")
    assert not fleet_metrics(read_metrics(page))            # no fleet runs for one server
    page.click("#fleet-open")
    settle(page)
    assert parse_qs(urlsplit(page.url).query)["replicas"] == ["4"]
    _, _, want = expected(native, "replicas=4", "continuous")
    shown = read_metrics(page)
    assert len(fleet_metrics(shown)) > 30 and metrics_match(shown, want) > 30
    # back to one server: the figure closes and no fleet number stays behind
    page.fill("#ctl-replicas", "1")
    page.press("#ctl-replicas", "Enter")
    page.wait_for_selector("#fleet-open", state="visible")
    settle(page)
    assert "replicas" not in parse_qs(urlsplit(page.url).query)
    assert not fleet_metrics(read_metrics(page))


@pytest.mark.parametrize("query", [FLEET, "prefill_replicas=1&decode_replicas=3"])
def test_on_a_phone_the_time_axis_is_under_the_lanes(strict_page, site_url, query):
    """390 px hides the lanes' optional columns: the axis row still lines up with the lanes (it
    spanned the hidden columns too, and sat to the right of the lanes with nothing under it)."""
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{site_url}?{query}")
    settle(page)
    box = "c => { const r = c.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; }"
    lanes = page.eval_on_selector_all("canvas.fleet-lane", f"cs => cs.map({box})")
    axis = page.eval_on_selector("canvas.fleet-axis", box)
    assert lanes and all(lane == axis for lane in lanes), (lanes, axis)
    assert axis[1] - axis[0] > 390 / 2            # the lanes take most of the width


@pytest.mark.parametrize("query", [FLEET, FLEET.replace("replicas=3", "replicas=8"), "story=12&embed=fleet"])
def test_the_fleet_embed_fits_820_by_520(strict_page, site_url, native, query):
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?embed=fleet&{query}" if "embed" not in query else f"{site_url}?{query}")
    settle(page)
    height = native("schema", {})["figures"]["fleet"]["embed_height"]
    doc = page.evaluate("() => document.documentElement.scrollHeight")
    content = page.evaluate("() => Math.ceil(document.body.getBoundingClientRect().bottom)")
    assert doc <= 520 and content <= height, (doc, content)
    assert page.is_visible('[data-figure="fleet"]') and page.is_visible("#embed-open")
    # every router's row has its numbers, and the lanes are wholly inside the frame
    assert page.locator("#fleet-routers tbody tr").count() == len(kinds(native))
    lanes = page.eval_on_selector_all("canvas.fleet-lane", "cs => cs.map(c => c.getBoundingClientRect().right)")
    assert lanes and max(lanes) <= 820
    shown = fleet_metrics(read_metrics(page))
    assert sum(1 for k in shown if k.startswith("routers.")) == 5 * len(kinds(native))   # 5 columns


def test_a_fleet_embed_runs_no_one_server_comparison(strict_page, site_url, native):
    """The embed shows the fleet alone: the one-server comparison of all its traffic (three
    lanes, on a whole trace many seconds of the reader's CPU) is not run for nobody to see."""
    page = strict_page
    page.add_init_script(COUNT_CALLS)
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?embed=fleet&{FLEET}")
    settle(page)
    posted = page.evaluate("window.__posted")
    assert "compare" not in posted, posted
    # the fleet, then every other router (the router set is its own row: the same run)
    assert posted.count("simulate") == len(kinds(native)), posted


def test_a_fleet_embed_draws_at_once_from_the_build_time_snapshot(strict_page, site_url, native):
    """`?embed=fleet` as the page's embed snippet writes it with no fleet set: the fleet its
    button opens (it showed an empty figure), every number drawn from the build-time snapshot
    while the engine loads (SPEC: the build-time result of every figure at once), each equal to
    native; once the engine is live it runs the fleet and every router again itself."""
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.add_init_script(COUNT_CALLS)
    page.add_init_script("delete window.SharedWorker;")   # a worker whose requests the page routes
    held = []
    page.route(re.compile(r".*/pyodide\.asm\.wasm\.gz$"), lambda route: held.append(route))
    page.goto(f"{site_url}?embed=fleet")
    rows = len(kinds(native))
    page.wait_for_function("n => document.querySelectorAll('#fleet-routers [data-metric$=\".throughput_tok_s\"]"
                           ":not([data-value=\"\"])').length === n", arg=rows)
    assert page.get_attribute("html", "data-state") == "snapshot"
    replicas = native("schema", {})["figures"]["fleet"]["open_replicas"]
    assert page.text_content("#fleet-what") == f"{replicas} replicas behind round robin"
    _, _, want = expected(native, f"replicas={replicas}", "continuous")
    shown = fleet_metrics(read_metrics(page))
    assert metrics_match(shown, want) == len(shown) >= 5 * rows + 7

    assert held, "the runtime download was not held"
    for route in held:
        route.continue_()
    settle(page)
    # the engine's own numbers: the fleet (round robin) and the other routers, run in the page
    assert page.evaluate("window.__posted").count("simulate") == rows
    assert metrics_match(fleet_metrics(read_metrics(page)), want) == len(shown)


def test_the_fleet_embed_keeps_its_height_while_the_routers_run(strict_page, site_url):
    """The comparison's progress and Cancel sit on its title's line: the frame does not grow by
    a row while the routers run (it did, to 538 px, with 8 replicas on the Mooncake trace)."""
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?embed=fleet&trace=mooncake-conv-2025&count=3000&cost=roofline"
              "&model=llama-3.1-8b&gpu=h100-80gb&kv_tokens=auto&vllm=1&replicas=8")
    page.wait_for_selector('[data-metric="fleet.throughput_tok_s"]:not([data-value=""])',
                           state="attached", timeout=120_000)
    page.wait_for_selector("#fleet-cancel:not([hidden])", state="attached")
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 520
    page.click("#fleet-cancel")
    page.wait_for_selector("#fleet-cancel[hidden]", state="attached")


def test_the_router_comparison_is_cancelled(strict_page, site_url):
    page = strict_page
    page.goto(f"{site_url}?requests=4000&arrival=poisson&rate=60&replicas=8")
    # the fleet's own run is drawn and the comparison is under way
    page.wait_for_function("() => document.querySelector('[data-metric=\"fleet.throughput_tok_s\"]')?.dataset.value"
                           " && !document.getElementById('fleet-cancel').hidden", timeout=240_000)
    page.click("#fleet-cancel")
    page.wait_for_selector("html:not([data-sweeping])", state="attached")
    assert page.text_content("#fleet-run-status") == "cancelled"
    assert page.is_hidden("#fleet-cancel")
    # the rows not run stay empty, the fleet's own numbers stay
    assert page.locator('#fleet-routers [data-metric][data-value=""]').count() > 0
    assert page.get_attribute('[data-metric="fleet.throughput_tok_s"]', "data-value")


def test_the_router_comparisons_ttft_column_has_one_unit(strict_page, site_url, native):
    """The story's last step compares every router: TTFT p95 from 0.18 s to 11.7 s. Each cell
    picked its own unit ("8.05 s" over "177.5 ms"); the column now has one, from its largest."""
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?story=12")
    settle(page)
    cells = page.eval_on_selector_all('#fleet-routers [data-metric$=".ttft.p95"]',
                                      "ss => ss.map(s => [s.textContent, s.dataset.value])")
    values = [float(v) for _, v in cells]
    assert len(cells) == len(kinds(native)) and min(values) < 1000 <= max(values), cells   # a column that mixed
    units = {text.split()[-1] for text, _ in cells}
    assert units == {"s"}, cells
    for text, v in cells:
        assert float(text.split()[0]) == pytest.approx(float(v) / 1000, rel=0.01), (text, v)


def test_the_router_comparison_bolds_every_tie_and_no_column_of_equals(strict_page, site_url):
    """A light load: round robin, least outstanding and Dynamo all read "192.3" tok/s, and the
    table bolded Dynamo alone (192.345 over 192.33, digits it does not show). The caption's rule:
    every router that ties for the best as shown is bold; a column that reads alike has none."""
    page = strict_page
    page.goto(f"{site_url}?requests=200&arrival=poisson&rate=2&replicas=4")
    settle(page)
    columns = page.evaluate("""() => {
        const trs = [...document.querySelectorAll('#fleet-routers tbody tr')];
        return [...trs[0].querySelectorAll('td')].map((_, i) => trs.map((tr) => {
            const td = tr.querySelectorAll('td')[i], hook = td.querySelector('[data-metric]');
            return { text: hook.textContent, value: hook.dataset.value, bold: td.classList.contains('best') };
        }));
    }""")
    better = {"throughput_tok_s": max, "ttft.p95": min, "slo_attainment": max, "prefix_hit_rate": max,
              "load_imbalance": min}
    for key, col in zip(better, columns):
        values = [float(c["value"]) for c in col if c["value"]]
        top = next(c["text"] for c in col if c["value"] and float(c["value"]) == better[key](values)) \
            if values else None
        alike = len({c["text"] for c in col}) == 1
        assert [c["bold"] for c in col] == [not alike and c["text"] == top for c in col], (key, col)
    tok = [c for c in columns[0] if c["bold"]]
    assert len(tok) >= 2 and len({c["value"] for c in tok}) >= 2, columns[0]   # a tie as shown
    assert "in bold, ties too" in page.text_content(".fleet-compare-what")


def test_a_tie_of_scores_marks_the_replica_the_router_chose(strict_page, site_url, native):
    """llm-d breaks a tie of best scores at random: the hover bolded the first tied replica
    (replica 0 of a 4-way tie) while the request went to another. It marks where the request
    went and says how the router broke the tie, in the router's own words (schema routers)."""
    page = strict_page
    page.goto(f"{site_url}?{FLEET}")
    settle(page)
    fleet = native("simulate", {"scenario": {**scenario_from_query(FLEET), "scheduler": "vllm"}})
    reqs = fleet["requests"]
    rid, scores = next((g, s) for g, s in fleet["router"]["scores"]
                       if s.count(max(s)) > 1 and reqs[g]["replica"] != s.index(max(s)))
    k = reqs[rid]["replica"]
    lane = page.locator(f'canvas.fleet-lane[data-replica="{k}"]')
    lane.scroll_into_view_if_needed()
    box = lane.bounding_box()
    x = 3 + reqs[rid]["arrive"] / fleet["metrics"]["makespan"] * (box["width"] - 6)
    page.mouse.move(box["x"] + x, box["y"] + box["height"] - 3)
    page.wait_for_selector("#fleet-tip:not([hidden])")
    text = page.inner_text("#fleet-tip")
    assert f"Request #{rid} → replica {k}" in text, text
    best = page.eval_on_selector_all("#fleet-tip .tip-best", "ds => ds.map(d => d.previousElementSibling.textContent)")
    assert best == [f"replica {k} ←"], (best, text)
    tied = [i for i, s in enumerate(scores) if s == max(scores)]
    tie = next(r for r in native("schema", {})["routers"] if r["name"] == "llm_d")["tie"]
    assert f"tie: replicas {', '.join(map(str, tied))} scored" in text and f"chosen {tie}" in text, text


def test_download_json_carries_the_fleet_and_every_router_run(strict_page, site_url, native):
    """The JSON export held the one-server comparison alone: its scenario without the cluster, no
    fleet, no router. With a fleet set it now carries the fleet figure's runs, as the native
    engine answers them."""
    page = strict_page
    query = "requests=300&arrival=poisson&rate=30&replicas=4"      # continuous, round robin
    page.goto(f"{site_url}?{query}")
    settle(page)
    with page.expect_download() as got:
        page.click("#btn-json")
    doc = json.loads(open(got.value.path()).read())
    fleet, routers = fleet_runs(native, scenario_from_query(query), "continuous")
    assert "cluster" not in doc["request"]["params"]["scenario"]    # the one-server comparison
    assert doc["fleet"]["request"]["params"]["scenario"]["cluster"]["replicas"] == 4
    got_fleet = doc["fleet"]["result"]
    assert got_fleet["metrics"] == fleet["metrics"] and got_fleet["requests"] == fleet["requests"]
    assert [r["metrics"] for r in got_fleet["replicas"]] == [r["metrics"] for r in fleet["replicas"]]
    assert set(doc["fleet"]["routers"]) == set(routers)
    for kind, run in routers.items():
        assert doc["fleet"]["routers"][kind]["result"]["metrics"] == run["metrics"], kind
    # Download CSV: the fleet's requests after the one-server rows, told apart by `run`
    with page.expect_download() as got:
        page.click("#btn-csv")
    rows = list(csv.DictReader(io.StringIO(open(got.value.path()).read())))
    one = [r for r in rows if r["run"] == "one server"]
    mine = [r for r in rows if r["run"] == "fleet"]
    assert len(one) == 2 * 300 and len(mine) == len(fleet["requests"]) == 300 and len(rows) == 600 + 300
    assert {r["replica"] for r in one} == {"0"} and {r["scheduler"] for r in mine} == {"continuous"}
    for r in mine:
        want = fleet["requests"][int(r["id"])]
        assert int(r["replica"]) == want["replica"]
        assert abs(float(r["ttft (ms)"]) - want["ttft"]) <= 0.0005 * (1 + 1e-9)
