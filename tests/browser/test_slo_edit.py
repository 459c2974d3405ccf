"""An SLO edit simulates nothing (py_engine/analysis/slo_memo.py): on a fleet page, the main
comparison, the fleet's run, every router's and the sweep points are asked again and each is
answered with no run (the worker reports a run's progress, its last always: none comes), and
every number the page shows is a fresh native run's under the new SLO."""

from support.page import flat_fleet, flat_metrics, fleet_runs, metrics_match, read_metrics, \
    scenario_from_query, settle

# Three vLLM replicas behind llm-d, four shared system prompts (test_fleet.py's fleet).
FLEET = ("vllm=1&requests=120&arrival=poisson&rate=10&output_mean=48&prefix=system&groups=4"
         "&tokens=1500&kv_tokens=6000&replicas=3&router=llm_d&w_kv=0.5")

# An init script: the engine calls the page posts ({id: method}) and the calls the engine said
# progress of (a SharedWorker's port or a dedicated Worker: its onmessage).
WATCH = """window.__calls = {}; window.__progress = [];
for (const C of [MessagePort, Worker]) {
  const post = C.prototype.postMessage;
  C.prototype.postMessage = function (m, ...rest) {
    if (m && m.method) window.__calls[m.id] = m.method;
    return post.call(this, m, ...rest);
  };
  const d = Object.getOwnPropertyDescriptor(C.prototype, 'onmessage');
  Object.defineProperty(C.prototype, 'onmessage', { ...d, set(fn) {
    d.set.call(this, fn && function (ev) {
      if (ev.data && ev.data.kind === 'progress') window.__progress.push(ev.data.id);
      return fn.call(this, ev);
    });
  } });
}"""


def expected(native, query):
    scenario = scenario_from_query(query)
    one = {k: v for k, v in scenario.items() if k != "cluster"}
    fleet, routers = fleet_runs(native, scenario, "vllm")
    return {**flat_metrics(native.compare(one, ["static", "continuous", "vllm"])),
            **flat_fleet(fleet, routers)}


def watched(page):
    """({method: calls posted}, the methods of the calls the engine said progress of)."""
    calls, progress = page.evaluate("[window.__calls, window.__progress]")
    posted = {}
    for m in calls.values():
        posted[m] = posted.get(m, 0) + 1
    return posted, sorted({calls[str(i)] for i in progress if str(i) in calls})


def test_an_slo_edit_on_a_fleet_page_runs_nothing_again(strict_page, site_url, native):
    page = strict_page
    page.add_init_script(WATCH)
    page.goto(f"{site_url}?{FLEET}")
    settle(page)
    posted, progressed = watched(page)
    assert "simulate" in progressed and "compare" in progressed      # runs say their progress
    before = read_metrics(page)
    page.evaluate("window.__calls = {}; window.__progress = []")
    drawn = page.get_attribute("html", "data-drawn")
    page.fill("#ctl-ttft_ms", "100")
    page.press("#ctl-ttft_ms", "Enter")
    page.wait_for_function("n => document.documentElement.dataset.drawn !== n", arg=drawn)
    settle(page)
    posted, progressed = watched(page)
    # asked again: the comparison, the fleet and its 8 routers (one call: the fleet's is one of
    # them), the sweep points; not one simulated
    assert posted.get("compare") == 1 and posted.get("simulate") == 8 and posted.get("sweep"), posted
    assert progressed == []
    shown = read_metrics(page)
    assert metrics_match(shown, expected(native, FLEET + "&ttft_ms=100")) >= 60
    changed = [k for k in shown if k.endswith("slo_attainment") and shown[k] != before.get(k)]
    assert any(k.startswith("routers.") for k in changed) and "fleet.slo_attainment" in changed
