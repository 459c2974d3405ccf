"""Load-time measurement of the built page in headless Chromium (runs inside the venv: playwright).

    .venv/bin/python -m tools.measure [--runs 3]          # what `python3 build.py measure` runs

Serves dist/, loads the page cold (fresh browser context) `runs` times and once warm, and prints
navigation -> snapshot drawn / engine ready, the status line's stages and the bytes served.
bench/page.py uses `load()` from here for its own load milestones.
"""

from __future__ import annotations

import argparse
import statistics
import threading

from .browser import launch
from .common import DIST
from .server import make_server

# Timestamps every change of the page's status line (init scripts are not subject to the CSP).
STATUS_RECORDER = """
window.__cbxStatus = [];
new MutationObserver(() => {
  const el = document.getElementById('engine-status-text');
  if (el) window.__cbxStatus.push([performance.now(), el.textContent]);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


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


def main(argv=None):
    ap = argparse.ArgumentParser(description="time cold and warm loads of dist/")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    url, server = serve_dist()
    rows = []
    with sync_playwright() as p:
        browser = launch(p)
        for i in range(a.runs):
            ctx = browser.new_context()
            page = ctx.new_page()
            page.add_init_script(STATUS_RECORDER)
            r = load(page, url)
            rows.append((r["snapshot_ms"], r["ready_ms"], r["bytes"]))
            print(f"cold load {i + 1}: state={r['state']}  navigation -> snapshot drawn "
                  f"{r['snapshot_ms']:.0f} ms, -> engine ready {r['ready_ms']:.0f} ms;  "
                  f"{r['requests']} requests, {r['bytes'] / 1e6:.2f} MB served")
            print("    status line: " + _stages(r["stages"]))
            if i == a.runs - 1:
                w = load(ctx.new_page(), url)
                print(f"warm reload: state={w['state']}  -> snapshot drawn {w['snapshot_ms']:.0f} ms, "
                      f"-> engine ready {w['ready_ms']:.0f} ms;  {w['requests']} requests "
                      f"({w['revalidated']} revalidated, 304), {w['bytes'] / 1e6:.2f} MB served")
            ctx.close()
        browser.close()
    server.shutdown()
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"median of {a.runs} cold loads: snapshot drawn {med[0]:.0f} ms, engine ready "
          f"{med[1]:.0f} ms, {med[2] / 1e6:.2f} MB served")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
