"""Page benchmark in headless Chromium: load milestones and control-change → redrawn-timeline latency.

    .venv/bin/python bench/page.py        # builds dist/, serves it, measures (needs the venv)
    .venv/bin/python bench/page.py --url URL       # measure an already served site
    .venv/bin/python bench/page.py --changes 30    # more samples per scenario

Prints, from one run:
  navigation → first timeline drawn (the build-time snapshot), → engine ready (Pyodide + py_engine),
  and p50 / p95 of "control change → timeline redrawn" for the default scenario and for a
  10,000-request scenario; and the vLLM lane on 10,000 Azure conversation requests under the
  roofline: the page's engine round trip against the same compare run natively (target <= 2.5x);
  and 8 vLLM replicas on the whole Mooncake trace: the fleet figure's run against native (--no-fleet
  skips it; target: <= 15 s in the page), and the link's wait from navigation to the fleet's answer. The latency is the page's own performance.measure("cbx:redraw"):
  from the input event to the end of the redraw, so it includes the engine call in the worker,
  the result's trip back and the drawing; "draw" is the drawing alone.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.browser import launch  # noqa: E402
from tools.measure import load, serve_dist  # noqa: E402  (the one load-time measurer)
from tools.site import build  # noqa: E402


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


# Main-thread tasks over 50 ms, from the page's first moment (init scripts run before the page).
LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); })
  .observe({ type: 'longtask', buffered: true });
"""


def change_slots(page, value):
    """Type a new slots value the way a user does (input + change) and wait for the redraw."""
    before = int(page.get_attribute("html", "data-drawn") or 0)
    page.evaluate("""v => { const i = document.getElementById('ctl-slots');
        i.value = String(v); i.dispatchEvent(new Event('change', {bubbles: true})); }""", value)
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=before,
                           timeout=120000)


def settle(page):
    """Cancel the sweeps the last change started and wait until the worker has nothing in flight,
    so each sample is one control change on an idle engine (sweeps are measured separately)."""
    page.evaluate("document.getElementById('skew-cancel').click()")
    page.wait_for_selector("html:not([data-pending]):not([data-busy])", state="attached", timeout=300000)


def measure_changes(page, n, values):
    """n changes -> redraw, engine and draw durations, and the main-thread tasks over 50 ms that
    ran meanwhile (while the runs were in flight)."""
    page.evaluate("performance.clearMeasures(); window.__longTasks = [];")
    for i in range(n):
        change_slots(page, values[i % len(values)])
        settle(page)
    get = lambda name: page.evaluate(f"performance.getEntriesByName('{name}').map(e => e.duration)")
    return (get("cbx:redraw"), get("cbx:engine")[-n:], get("cbx:draw"),
            page.evaluate("window.__longTasks"))


# Issue "Exact and fast": 10,000 Azure conversation requests with the vLLM lane, in the page and
# natively (the scenario of py_engine/bench/engine.py section 4, as the page's URL sets it).
AZURE_QUERY = ("trace=azure-conv-2023&count=10000&cost=roofline&model=llama-3.1-8b&gpu=h100-80gb"
               "&kv_tokens=auto&max_num_batched_tokens=8192&vllm=1")
AZURE_LANES = ["static", "continuous", "vllm"]


def _native(what, request):
    """Wall seconds of a protocol request run natively, and its result (SystemExit if refused:
    the page refuses it the same way, the engine's work cap)."""
    import time
    from py_engine.app.protocol import handle
    t = time.perf_counter()
    r = handle(request)
    if not r["ok"]:
        raise SystemExit("the %s is refused natively: %s" % (what, r["error"]["message"]))
    return time.perf_counter() - t, r["result"]


def _scenario(query):
    sys.path.insert(0, str(ROOT / "tests"))
    from support.urls import scenario_from_query
    return scenario_from_query(query)


def _native_compare(query):
    """Wall seconds of the page's compare run natively, and its vllm lane's passes."""
    s, r = _native("Azure compare", {"method": "compare", "params": {
        "scenario": _scenario(query), "schedulers": AZURE_LANES}})
    return s, r["vllm"]["metrics"]["passes"]


def vllm_lane_vs_native(page, url):
    """The page at the Azure scenario with 255 slots, then slots -> 256 (a live run on a ready
    engine): its cbx:engine round trip against the native run of the same request just before
    and after (the mean of the two: the machine's load moves). -> (page s, native s, same)."""
    page.goto(f"{url}?{AZURE_QUERY}&slots=255")
    page.wait_for_selector("html[data-state=ready]:not([data-busy])", state="attached",
                           timeout=600000)
    settle(page)
    before, passes = _native_compare(AZURE_QUERY + "&slots=256")
    page.evaluate("performance.clearMeasures()")
    change_slots(page, 256)
    engine = page.evaluate("performance.getEntriesByName('cbx:engine').map(e => e.duration)")[-1]
    shown = page.get_attribute('[data-metric="vllm.passes"]', "data-value")
    after, _ = _native_compare(AZURE_QUERY + "&slots=256")
    return engine / 1000, (before + after) / 2, shown == str(passes)


# Issue "Fleets": 8 vLLM replicas behind round robin on the whole Mooncake conversation trace
# (py_engine/bench/fleet.py's scenario, as the page's URL sets it).
FLEET_QUERY = ("trace=mooncake-conv-2025&count=12031&cost=roofline&model=llama-3.1-8b"
               "&gpu=h100-80gb&kv_tokens=auto&max_num_batched_tokens=8192&slots=256&vllm=1&replicas=8"
               "&router=round_robin")


def _native_fleet(query):
    """Wall seconds of the fleet figure's run natively, and its fleet throughput."""
    s, r = _native("fleet run", {"method": "simulate", "params": {
        "scenario": {**_scenario(query), "scheduler": "vllm"}}})
    return s, r["metrics"]["throughput_tok_s"]


def fleet_vs_native(page, url):
    """The page at the fleet URL: its fleet run's round trip (cbx:fleet, web/ui/fleet.js) against
    the same run natively just after, and the link's wait: navigation -> the fleet's answer in
    the page (a fleet's page asks it first: web/main.js). -> (page s, native s, same throughput
    shown, navigation -> answered s)."""
    page.goto(f"{url}?{FLEET_QUERY}")
    page.wait_for_function("() => performance.getEntriesByName('cbx:fleet').length > 0",
                           timeout=900000, polling=1000)
    engine, answered = page.evaluate("""() => { const e = performance.getEntriesByName('cbx:fleet')[0];
        return [e.duration, e.startTime + e.duration]; }""")
    page.wait_for_selector('[data-metric="fleet.throughput_tok_s"]:not([data-value=""])',
                           state="attached", timeout=60000)
    shown = float(page.get_attribute('[data-metric="fleet.throughput_tok_s"]', "data-value"))
    native, tput = _native_fleet(FLEET_QUERY)
    return engine / 1000, native, abs(shown - tput) <= 1e-9 * abs(tput), answered / 1000


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="site to measure (default: build and serve dist/)")
    ap.add_argument("--changes", type=int, default=20, help="control changes per scenario")
    ap.add_argument("--fleet", action=argparse.BooleanOptionalAction, default=True,
                    help="the fleet lane: 8 replicas on the whole Mooncake trace (minutes)")
    ap.add_argument("--big", type=int, nargs="*", default=[10000, 20000],
                    help="requests in the big scenarios")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    if not a.url:
        build()
    url, server = (a.url, None) if a.url else serve_dist()
    rows = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.add_init_script(LONG_TASKS)
        first = load(page, url)
        settle(page)
        rows.append(("default (64 requests)", *measure_changes(page, a.changes, [9, 8])))
        for big in a.big:
            page.goto(f"{url}?requests={big}")
            page.wait_for_selector("html[data-state=ready]:not([data-busy])", state="attached",
                                   timeout=300000)
            settle(page)
            n_big = max(5, a.changes // 2)
            rows.append((f"{big:,} requests", *measure_changes(page, n_big, [9, 8])))
        lane = vllm_lane_vs_native(page, url)
        fleet = fleet_vs_native(page, url) if a.fleet else None
        browser.close()
    if server:
        server.shutdown()

    print(f"site: {url}")
    print(f"navigation -> first timeline drawn : {first['snapshot_ms']:8.0f} ms")
    print(f"navigation -> engine ready         : {first['ready_ms']:8.0f} ms")
    print("control change -> redrawn timeline (ms). Targets: default p95 <= 50; 10,000 requests")
    print("  p50 <= 500; 20,000 p50 <= 1000; no main-thread task over 50 ms while a run is in flight")
    print("  (engine = the worker round trip inside it; draw = drawing the timelines alone;")
    print("   long tasks = main-thread tasks over 50 ms during those changes, and the longest)")
    print(f"  {'scenario':24s} {'n':>3s} {'p50':>8s} {'p95':>8s} {'engine p50':>11s} {'draw p50':>9s}"
          f" {'draw p95':>9s} {'long tasks':>11s} {'longest':>8s}")
    for name, r, e, d, lt in rows:
        print(f"  {name:24s} {len(r):3d} {pct(r, 50):8.1f} {pct(r, 95):8.1f} {pct(e, 50):11.1f} "
              f"{pct(d, 50):9.2f} {pct(d, 95):9.2f} {len(lt):11d} {max(lt, default=0):8.0f}")
    page_s, native_s, same = lane
    print(f"10,000 Azure conversation requests, lanes {', '.join(AZURE_LANES)} (roofline Llama-3.1-8B on "
          f"H100, 256 slots): page engine round trip {page_s:.2f} s, native {native_s:.2f} s -> "
          f"{page_s / native_s:.2f} x   (target <= 2.5; the page's vllm passes equal native's: "
          f"{'yes' if same else 'NO'})")
    if fleet:
        page_s, native_s, same, answered_s = fleet
        print(f"8 vLLM replicas behind round robin, the whole Mooncake conversation trace (12,031 "
              f"requests, roofline Llama-3.1-8B on H100): page fleet run {page_s:.1f} s, native "
              f"{native_s:.1f} s -> {page_s / native_s:.2f} x   (target: the page <= 15 s; the "
              f"page's fleet throughput equals native's: {'yes' if same else 'NO'}); "
              f"navigation -> fleet answered {answered_s:.1f} s (the engine's load included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
