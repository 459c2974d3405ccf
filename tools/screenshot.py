"""The README's picture: the built page, live engine, default scenario (runs inside the venv).

    .venv/bin/python -m tools.screenshot [OUT.png]      # what `python3 build.py screenshot` runs
"""

from __future__ import annotations

import sys
from pathlib import Path

from .browser import launch
from .common import WEB
from .measure import serve_dist


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else WEB / "img" / "screenshot.png"
    from playwright.sync_api import sync_playwright

    url, server = serve_dist()
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1200, "height": 760}, device_scale_factor=1)
        page.goto(f"{url}?theme=light")
        page.wait_for_selector('html[data-state="ready"]:not([data-pending]):not([data-sweeping])',
                               state="attached", timeout=180_000)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()
    server.shutdown()
    print(f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
