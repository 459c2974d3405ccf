"""Time to the first picture: navigation -> the first <html data-drawn> (the build-time snapshot's
picture), at 1366x768, median of `runs` cold loads (a fresh browser context each: empty HTTP cache,
no service worker) and of a warm reload after each; prints the document's requests of the last cold
load up to that moment (start -> end, ms, and who asked: link = a preload in index.html).

    .venv/bin/python -m tools.first_draw [DIST] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics

from .browser import launch
from .common import DIST
from .measure import serve_dist

# Init scripts are not subject to the page's CSP.
RECORDER = """
window.__first = null;
new MutationObserver(() => {
  const html = document.documentElement;
  if (window.__first === null && html.hasAttribute('data-drawn'))
    window.__first = { t: performance.now(), paint: html.dataset.firstPaint, state: html.dataset.state };
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-drawn'] });
"""
REQUESTS = """() => performance.getEntriesByType('resource').filter((e) => e.startTime < window.__first.t)
  .map((e) => [e.name.replace(location.origin + '/', ''), Math.round(e.startTime), Math.round(e.responseEnd), e.initiatorType])"""


def _first(page) -> dict:
    page.wait_for_function("() => window.__first !== null", timeout=60_000)
    return page.evaluate("() => window.__first")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dist", nargs="?", default=str(DIST))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    url, server = serve_dist(args.dist)
    cold, warm, rows = [], [], []
    try:
        with sync_playwright() as p:
            browser = launch(p)
            for _ in range(args.runs):
                ctx = browser.new_context(viewport={"width": 1366, "height": 768})
                page = ctx.new_page()
                page.add_init_script(RECORDER)
                page.goto(url)
                cold.append(_first(page))
                rows = page.evaluate(REQUESTS)
                page.reload()
                warm.append(_first(page))
                ctx.close()
            browser.close()
    finally:
        server.shutdown()
    for name, start, end, how in rows:
        print(f"  {start:6d} -> {end:6d} ms  {how:6s} {name}")
    for label, runs in (("cold", cold), ("warm", warm)):
        print(f"{label}: navigation -> first data-drawn {round(statistics.median(r['t'] for r in runs))} ms "
              f"(median of {len(runs)}: {[round(r['t']) for r in runs]}); first picture from "
              f"{sorted({r['paint'] for r in runs})}, state {sorted({r['state'] for r in runs})}")


if __name__ == "__main__":
    main()
