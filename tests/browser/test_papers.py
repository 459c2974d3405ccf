"""The papers figure (SPEC §11): computed by the engine in the page, every tile's verdict
(data-pass) equal to the native `python -m py_engine papers --json`, and its detail equal to the
native row; the embed fits 820x520 with the whole summary in view; the main page shows the
build-time snapshot's verdicts, said so, and recomputes them on a click."""

import os
from pathlib import Path

from support.page import settle

DONE_MS = 240_000      # every check in the page, on a loaded 2-core machine
SHOTS = os.environ.get("CB_PAPERS_SHOTS")   # a folder: write the screenshots there too


def tiles(page):
    return page.eval_on_selector_all(
        "[data-figure=papers] [data-paper]:not(#papers-detail)",
        "ts => ts.map(t => [t.dataset.paper, t.dataset.pass])")


def sources(page):
    return set(page.eval_on_selector_all("#papers-grid [data-paper]", "ts => ts.map(t => t.dataset.source)"))


def wait_done(page):
    page.wait_for_selector("#papers-grid[data-done]", state="attached", timeout=DONE_MS)


def test_the_papers_embed_equals_native_and_fits_820_by_520(strict_page, site_url, native):
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?embed=papers")
    settle(page)
    wait_done(page)
    rows = native("papers", {})
    assert len(rows) >= 12 and sum(r["pass"] for r in rows) >= 10
    assert tiles(page) == [[r["id"], "true" if r["pass"] else "false"] for r in rows]
    assert page.get_attribute("#papers-summary", "data-passed") == str(sum(r["pass"] for r in rows))
    height = native("schema", {})["figures"]["papers"]["embed_height"]
    doc = page.evaluate("() => document.documentElement.scrollHeight")
    content = page.evaluate("() => Math.ceil(document.body.getBoundingClientRect().bottom)")
    assert doc <= 520 and content <= height, (doc, content)
    grid = page.evaluate("() => document.getElementById('papers-grid').getBoundingClientRect().bottom")
    assert grid <= 520          # the summary is wholly in the frame, no scrolling
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / "papers-820x520.png"))
    # a failing check's tile opens its detail: the native row's numbers and its one-line why,
    # every failing one within the frame
    for failing in [r for r in rows if not r["pass"]] or rows[:1]:
        page.click(f'#papers-grid [data-paper="{failing["id"]}"]')
        assert page.get_attribute("#papers-detail", "data-paper") == failing["id"]
        assert page.text_content("#papers-detail .paper-ours") == failing["ours"]
        assert page.text_content("#papers-detail .paper-published") == failing["published"]
        if failing["why"]:
            assert page.text_content("#papers-detail .paper-why") == failing["why"]
        assert page.evaluate("() => document.documentElement.scrollHeight") <= 520, failing["id"]
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / "papers-820x520-detail.png"))


def test_the_main_page_recomputes_them_on_a_click(strict_page, site_url, native):
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(site_url)
    settle(page)
    rows = native("papers", {})
    verdicts = [[r["id"], "true" if r["pass"] else "false"] for r in rows]
    # before the page computed them, the build-time snapshot's (the native engine's), said so
    page.wait_for_function("() => document.querySelectorAll('[data-source=build]').length > 0")
    assert tiles(page) == verdicts
    assert sources(page) == {"build"}
    assert "at build time" in page.text_content("#papers-summary")
    page.click("#papers-run")
    wait_done(page)
    assert tiles(page) == verdicts
    assert sources(page) == {"page"}
    assert page.text_content("#papers-summary").endswith("computed in this page")
    if SHOTS:
        page.locator("#fig-papers").screenshot(path=str(Path(SHOTS) / "papers-1366.png"))
        page.set_viewport_size({"width": 390, "height": 844})
        page.locator("#fig-papers").scroll_into_view_if_needed()
        page.locator("#fig-papers").screenshot(path=str(Path(SHOTS) / "papers-390.png"))


def test_a_recompute_is_cancelled_by_its_button(strict_page, site_url, native):
    """About 15 s of checks had no Cancel (SPEC 7: any run in the page can be cancelled); the
    button cancels while they run, between two checks or inside one, and recomputes again."""
    page = strict_page
    page.goto(site_url)
    settle(page)
    label = page.text_content("#papers-run")
    page.click("#papers-run")
    page.wait_for_function("() => Number(document.getElementById('papers-summary').dataset.done) >= 1")
    assert page.text_content("#papers-run") == "Cancel"
    page.click("#papers-run")
    page.wait_for_function("() => document.getElementById('papers-summary').textContent.startsWith('cancelled')")
    assert page.text_content("#papers-run") == label
    assert page.get_attribute("#papers-grid", "data-done") is None
    assert page.locator(".paper-tile.busy").count() == 0
    page.click("#papers-run")                       # and again, to the end
    wait_done(page)
    rows = native("papers", {})
    assert tiles(page) == [[r["id"], "true" if r["pass"] else "false"] for r in rows]
