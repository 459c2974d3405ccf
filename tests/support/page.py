"""Helpers for browser tests: waiting for the page's state, reading the numbers it shows and
comparing them with a native run. Plain functions; tests import them by name."""

from __future__ import annotations

from support.urls import scenario_from_query  # noqa: F401  (re-exported for the browser tests)

LOAD_TIMEOUT_MS = 90_000  # a cold load takes seconds on a busy 2-core box; this bounds a broken run


def wait_state(page, state: str, timeout: float = LOAD_TIMEOUT_MS) -> str:
    """Wait until <html data-state> is `state` (snapshot|ready|failed). Reaching "failed" while
    waiting for something else raises AssertionError with the page's status text."""
    selector = f'html[data-state="{state}"]'
    if state != "failed":
        selector += ', html[data-state="failed"]'
    page.wait_for_selector(selector, state="attached", timeout=timeout)
    got = page.evaluate("() => document.documentElement.dataset.state")
    if got != state:
        raise AssertionError(f'data-state="{got}" while waiting for "{state}": {status_text(page)}')
    return got


SETTLE_TIMEOUT_MS = 240_000   # a sizing sweep on a loaded 2-core machine


def settle(page, sweeps: bool = True, timeout: float = SETTLE_TIMEOUT_MS, polling="raf") -> None:
    """Wait until the engine is live and the latest values are drawn (data-drawn, no data-busy),
    and, with sweeps, the side figures are done too (no data-sweeping). `page` may be a frame;
    one off screen gets no animation frames, so poll it every `polling` ms instead."""
    page.wait_for_function(
        "sweeps => { const d = document.documentElement.dataset; return d.state === 'ready'"
        " && 'drawn' in d && !('busy' in d) && !(sweeps && 'sweeping' in d); }",
        arg=sweeps, timeout=timeout, polling=polling)


# An init script: every engine call the page posts, by method, in window.__posted (a
# SharedWorker's port or a dedicated Worker; the calls the snapshot answers are not posted).
COUNT_CALLS = """window.__posted = [];
for (const C of [MessagePort, Worker]) {
  const post = C.prototype.postMessage;
  C.prototype.postMessage = function (m, ...rest) {
    if (m && m.method) window.__posted.push(m.method);
    return post.call(this, m, ...rest);
  };
}"""


def status_text(page) -> str:
    """The page's engine status line (it names what failed)."""
    return page.evaluate("() => (document.getElementById('engine-status-text') || {}).textContent || ''")


BOOLS = {"true": 1.0, "false": 0.0}   # a verdict (meets_slo) is shown as true / false


def read_metrics(page) -> dict[str, float | None]:
    """{data-metric: float(data-value)} of every metric shown with a value; JSON null -> None,
    true / false -> 1.0 / 0.0.
    The same metric shown twice must carry the same value."""
    pairs = page.eval_on_selector_all(
        "[data-metric]", "els => els.map(e => [e.dataset.metric, e.getAttribute('data-value')])")
    out: dict[str, float | None] = {}
    for name, raw in pairs:
        if raw is None or raw.strip() == "":
            continue
        value = None if raw == "null" else BOOLS[raw] if raw in BOOLS else float(raw)
        if name in out and out[name] != value:
            raise AssertionError(f"{name} is shown with two values: {out[name]} and {value}")
        out[name] = value
    return out


def flat_metrics(compare_result: dict) -> dict[str, float | None]:
    """A native compare result flattened to the page's data-metric names
    (<scheduler>.<metric path>, speedup.passes, speedup.time)."""
    out: dict[str, float | None] = {}
    for sched, res in compare_result.items():
        if sched == "speedup":
            _walk(out, "speedup", res)
        elif isinstance(res, dict) and "metrics" in res:
            _walk(out, sched, res["metrics"])
    return out


def metrics_match(shown: dict, expected: dict, rel: float = 1e-9) -> int:
    """Every metric the page shows equals the native one: integers exactly, floats to `rel`.
    Returns how many were compared (a test should also check that this is not zero)."""
    problems = []
    for name, value in shown.items():
        if name not in expected:
            problems.append(f"{name}: shown ({value}) but not in the native result")
            continue
        want = expected[name]
        if want is None or value is None:
            ok = want is None and value is None
        elif float(want).is_integer() and float(value).is_integer():
            ok = want == value
        else:
            ok = abs(value - want) <= rel * max(abs(want), abs(value))
        if not ok:
            problems.append(f"{name}: page {value!r} != native {want!r}")
    assert not problems, "page numbers differ from the native engine:\n  " + "\n  ".join(problems)
    return len(shown)


def _walk(out: dict, prefix: str, value) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(out, f"{prefix}.{k}", v)
    elif isinstance(value, (int, float)) or value is None:      # bools as 1.0 / 0.0
        out[prefix] = None if value is None else float(value)


def router_scenarios(scenario: dict, kinds) -> dict[str, dict]:
    """The fleet figure's router comparison natively: the scenario once per router kind, each
    keeping the router knobs that exist for that kind (fields.py `when`), as the page does."""
    import copy

    from py_engine.scenario import fields

    router = scenario.get("cluster", {}).get("router", {})
    router = {"kind": router} if isinstance(router, str) else router
    out = {}
    for kind in kinds:
        sc = copy.deepcopy(scenario)
        new = {"kind": kind}
        for f in fields.FIELDS:
            if not f.path.startswith("cluster.router.") or f.path == "cluster.router.kind":
                continue
            if kind not in f.when.get("cluster.router.kind", [kind]):
                continue
            node, parts = router, f.path.split(".")[2:]
            for p in parts[:-1]:
                node = node.get(p, {}) if isinstance(node, dict) else {}
            if isinstance(node, dict) and parts[-1] in node:
                tgt = new
                for p in parts[:-1]:
                    tgt = tgt.setdefault(p, {})
                tgt[parts[-1]] = node[parts[-1]]
        sc["cluster"]["router"] = new
        out[kind] = sc
    return out


def flat_fleet(fleet: dict, routers: dict[str, dict] | None = None) -> dict[str, float | None]:
    """A native fleet result (and the router comparison's results by kind) flattened to the fleet
    figure's data-metric names: fleet.<metric path>, router.<counter path>, replica<k>.requests
    and replica<k>.<metric path> (prefill<k> / decode<k> for pools), routers.<kind>.<metric path> and routers.<kind>.load_imbalance."""
    out: dict[str, float | None] = {}
    _walk(out, "fleet", fleet["metrics"])
    _walk(out, "router", {k: v for k, v in fleet["router"].items() if k not in ("scores", "reasons")})
    for rep in fleet["replicas"]:          # a disaggregated fleet's: prefill<k>, decode<k>
        name = f"{rep.get('pool', 'replica')}{rep['replica']}"
        out[f"{name}.requests"] = float(rep["requests"])
        if rep["metrics"]:
            _walk(out, name, rep["metrics"])
    for kind, res in (routers or {}).items():
        _walk(out, f"routers.{kind}", res["metrics"])
        _walk(out, f"routers.{kind}", {"load_imbalance": res["router"]["load_imbalance"]})
    return out


def fleet_runs(native, scenario: dict, scheduler: str) -> tuple[dict, dict[str, dict]]:
    """What the fleet figure runs for a scenario with a cluster, natively: (the fleet, {router
    kind: the same scenario behind that router}), on `scheduler` (the last lane on screen)."""
    kinds = next(f for f in native("schema", {})["fields"]
                 if f["path"] == "cluster.router.kind")["choices"]

    def run(sc):
        return native("simulate", {"scenario": {**sc, "scheduler": scheduler}})

    return run(scenario), {k: run(sc) for k, sc in router_scenarios(scenario, kinds).items()}


# An init script (page.add_init_script) that records what the page's canvases write: every
# fillText's canvas (class and lane), text and font, the last font per text.
CANVAS_TEXT_RECORDER = """
window.__cbxCanvasText = {};
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
  const c = this.canvas;
  if (c && c.className) {
    const lane = (c.dataset && (c.dataset.lane || c.dataset.blocks)) || '';
    window.__cbxCanvasText[`${c.className}|${lane}|${text}`] = this.font;
  }
  return fillText.call(this, text, ...rest);
};
"""


# An init script that records each chart's last drawing: window.__cbxChartBoxes[key] = [[text,
# left, right, the canvas's CSS width], ...], key the canvas's id (cleared when it is drawn again:
# clearRect from 0, 0), or "export" for a canvas outside the page (Download PNG's).
CHART_TEXT_RECORDER = """
window.__cbxChartBoxes = {};
const clearRect0 = CanvasRenderingContext2D.prototype.clearRect;
CanvasRenderingContext2D.prototype.clearRect = function (x, y, ...rest) {
  if (this.canvas?.id && x === 0 && y === 0) window.__cbxChartBoxes[this.canvas.id] = [];
  return clearRect0.call(this, x, y, ...rest);
};
const fillText0 = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
  const c = this.canvas;
  const key = c?.id || (c && !c.className && !c.isConnected ? 'export' : null);
  if (key) {
    const w = this.measureText(text).width, a = this.textAlign;
    const left = a === 'center' ? x - w / 2 : a === 'right' || a === 'end' ? x - w : x;
    const dpr = key === 'export' ? Math.max(1, window.devicePixelRatio || 1) : 1;
    (window.__cbxChartBoxes[key] ||= []).push([String(text), left, left + w, c.width / dpr]);
  }
  return fillText0.call(this, text, x, y, ...rest);
};
"""


def chart_boxes(page, key: str) -> list:
    """[[text, left, right, canvas width], ...] of a chart's last drawing (CHART_TEXT_RECORDER)."""
    return page.evaluate("k => window.__cbxChartBoxes[k] || []", key)


def canvas_texts(page, canvas_class: str) -> list[tuple[str, str, float]]:
    """[(lane, text, font px)] written on the canvases of canvas_class (needs CANVAS_TEXT_RECORDER)."""
    import re
    rows = page.evaluate("() => Object.entries(window.__cbxCanvasText || {})")
    out = []
    for key, font in rows:
        cls, lane, text = key.split("|", 2)
        if cls.split() and canvas_class in cls.split():
            out.append((lane, text, float(re.search(r"([\d.]+)px", font).group(1))))
    return out
