"""Load-time measurement of the built page in headless Chromium (runs inside the venv: playwright).

    .venv/bin/python -m tools.measure [--runs 3]          # what `python3 build.py measure` runs

Prints, from one run on this machine:
  - the reference: a bare Pyodide boot of the shipped runtime (loadPyodide in a Worker, no
    packages, navigation -> Python answers), median of `runs` fresh browser contexts;
  - the page's cold navigation -> data-state=ready, median of `runs` fresh contexts;
  - a warm reload (same context: Cache Storage filled);
  - a non-default embed (not in the build-time snapshot): navigation -> its numbers equal the
    native engine's;
each as milliseconds and as a ratio to the bare boot, with the bytes the page transferred.
bench/page.py uses `load()` from here for its own load milestones.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .browser import launch
from .common import DIST, ROOT
from .server import make_server

# Timestamps every change of the page's status line (init scripts are not subject to the CSP).
STATUS_RECORDER = """
window.__cbxStatus = [];
new MutationObserver(() => {
  const el = document.getElementById('engine-status-text');
  if (el) window.__cbxStatus.push([performance.now(), el.textContent]);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""

# The reference page: Pyodide's own loader on the shipped runtime, in a module Worker.
BARE_HTML = ('<!doctype html><meta charset="utf-8"><title>bare Pyodide</title>'
             '<link rel="icon" href="favicon.svg"><script type="module" src="bare.js"></script>')
BARE_JS = """
const w = new Worker(new URL('./bare-worker.js', import.meta.url), { type: 'module' });
w.onmessage = (e) => { document.documentElement.dataset.bare = String(performance.now()); };
"""
BARE_WORKER = """
const { loadPyodide } = await import('./pyodide/pyodide.mjs');
const py = await loadPyodide({ indexURL: new URL('./pyodide/', import.meta.url).href });
postMessage(py.runPython('1 + 1'));
"""
EMBED = "?embed=timeline&requests=48&skew=0.7&slots=12"   # not in the build-time snapshot


def serve_dist(directory=DIST):
    server = make_server(directory, 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


def load(page, url, timeout_ms=180_000):
    """Navigate and wait for ready (or failed): {state, snapshot_ms, ready_ms, bytes, requests,
    revalidated, stages}."""
    finished = []
    page.on("requestfinished", lambda r: finished.append(r))
    page.goto(url)
    page.wait_for_selector('html[data-state="ready"], html[data-state="failed"]', state="attached",
                           timeout=timeout_ms)
    state = page.evaluate("() => document.documentElement.dataset.state")
    marks = page.evaluate("() => Object.fromEntries(performance.getEntriesByType('mark')"
                          ".map(m => [m.name, m.startTime]))")
    now = page.evaluate("() => performance.now()")
    return {
        "state": state, "snapshot_ms": marks.get("cbx:first-timeline"),
        "ready_ms": marks.get("cbx:engine-ready", now),
        "bytes": sum(max(r.sizes()["responseBodySize"], 0) for r in finished),
        "requests": len(finished),
        "revalidated": sum(1 for r in finished if r.response() and r.response().status == 304),
        "stages": page.evaluate("() => window.__cbxStatus || []"),
    }


def _stages(stages):
    seen = []
    for t, text in stages:
        stage = " ".join(text.split(" ")[0:3])
        if not seen or seen[-1][1] != stage:
            seen.append((t, stage))
    return " | ".join(f"{t:.0f} ms {s}" for t, s in seen)


def _site_with_reference(tmp: Path) -> Path:
    """dist/ plus the bare-boot reference page and the raw .wasm Pyodide's own loader fetches."""
    site = tmp / "site"
    shutil.copytree(DIST, site)
    (site / "bare.html").write_text(BARE_HTML)
    (site / "bare.js").write_text(BARE_JS)
    (site / "bare-worker.js").write_text(BARE_WORKER)
    gz = site / "pyodide" / "pyodide.asm.wasm.gz"
    (site / "pyodide" / "pyodide.asm.wasm").write_bytes(gzip.decompress(gz.read_bytes()))
    return site


def _served_bytes(server, start):
    """Bytes the server sent since entry `start` of its log (it sees the engine worker's requests,
    which no page listener does)."""
    return sum(size for _, status, size in server.served[start:] if status == 200)


def _native_passes(query):
    sys.path.insert(0, str(ROOT))
    from py_engine.app.protocol import handle
    sys.path.insert(0, str(ROOT / "tests"))
    from support.urls import scenario_from_query
    r = handle({"method": "compare", "params": {"scenario": scenario_from_query(query)}})
    return r["result"]["continuous"]["metrics"]["passes"]


class BenchBeside:
    """`python -m py_engine bench` in a loop in another process while the loads are timed (the
    loaded machine the target is stated for); stopped with the measurement."""

    def __init__(self, on):
        self.on, self.proc, self.loops = on, None, 0
        self._stop = threading.Event()

    def __enter__(self):
        if self.on:
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()
        return self

    def _loop(self):
        while not self._stop.is_set():
            self.proc = subprocess.Popen([sys.executable, "-m", "py_engine", "bench"], cwd=ROOT,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.proc.wait()
            self.loops += 1

    def __exit__(self, *exc):
        self._stop.set()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


def _bare_boot(browser, url):
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(url + "bare.html")
    page.wait_for_selector("html[data-bare]", state="attached", timeout=180_000)
    ms = float(page.get_attribute("html", "data-bare"))
    ctx.close()
    return ms


def _distribution(xs):
    return f"median {statistics.median(xs):.2f}, worst {max(xs):.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description="time cold and warm loads of dist/")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--bench-beside", action="store_true",
                    help="loop `python -m py_engine bench` in another process meanwhile")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, BenchBeside(a.bench_beside) as beside:
        url, server = serve_dist(_site_with_reference(Path(tmp)))
        want = _native_passes(EMBED)
        bare, cold, warm, embed = [], [], [], []
        with sync_playwright() as p:
            browser = launch(p)
            # each cold load is paired with a bare boot just before it: the machine's load moves
            # over a run, and a ratio of neighbours measures the page, not the load's drift
            for i in range(a.runs):
                bare.append(_bare_boot(browser, url))
                ctx = browser.new_context()
                page = ctx.new_page()
                page.add_init_script(STATUS_RECORDER)
                start = len(server.served)
                r = load(page, url)
                r["bytes"] = _served_bytes(server, start)
                cold.append(r)
                print(f"load {i + 1}: bare boot {bare[-1]:.0f} ms; cold: state={r['state']}  "
                      f"navigation -> snapshot drawn {r['snapshot_ms']:.0f} ms, -> engine ready "
                      f"{r['ready_ms']:.0f} ms = {r['ready_ms'] / bare[-1]:.2f} x;  "
                      f"{r['bytes'] / 1e6:.2f} MB transferred")
                print("    status line: " + _stages(r["stages"]))
                page.close()   # the engine's shared worker ends with its last page
                start = len(server.served)
                w = load(ctx.new_page(), url)
                w["bytes"] = _served_bytes(server, start)
                warm.append(w)
                ctx.close()
            for i in range(min(a.runs, 3)):
                ctx = browser.new_context()
                page = ctx.new_page()
                page.goto(url + EMBED)
                done = page.wait_for_function(
                    """(want) => { const e = document.querySelector('[data-metric="continuous.passes"]');
                         return e && e.dataset.value === String(want) && performance.now(); }""",
                    arg=want, timeout=180_000, polling="raf")
                embed.append(done.json_value())
                ctx.close()
            browser.close()
        server.shutdown()

    ref = statistics.median(bare)
    med = statistics.median
    cold_x = [r["ready_ms"] / b for r, b in zip(cold, bare)]
    warm_x = [w["ready_ms"] / b for w, b in zip(warm, bare)]
    if a.bench_beside:
        print(f"meanwhile `python -m py_engine bench` looped in another process "
              f"({beside.loops} full runs ended)")
    print(f"reference: bare Pyodide boot of the shipped runtime (no packages), {a.runs} boots: "
          f"median {ref:.0f} ms, {min(bare):.0f}-{max(bare):.0f}")
    print(f"cold navigation -> ready / the bare boot before it, {a.runs} fresh contexts: "
          f"{_distribution(cold_x)}   (target: worst <= 0.5)")
    print(f"warm reload (same browser profile) -> ready / bare boot, {a.runs}: "
          f"{_distribution(warm_x)}   (target <= 0.4); "
          f"{med([x['bytes'] for x in warm]) / 1e6:.2f} MB transferred")
    print(f"non-default embed {EMBED} -> numbers equal native, median of {len(embed)}: "
          f"{med(embed):.0f} ms = {med(embed) / ref:.2f} x   (target <= 0.6)")
    print(f"first visit transferred (median): {med([r['bytes'] for r in cold]) / 1e6:.2f} MB")
    print(json.dumps({"bare_ms": ref, "ready_x": cold_x, "warm_x": warm_x,
                      "embed_ms": med(embed), "first_visit_mb": med([r["bytes"] for r in cold]) / 1e6}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
