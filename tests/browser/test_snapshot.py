"""Whatever the page asks before its engine is live, the build-time snapshot answers: for the default
view, every preset (by link and by button), every embedded figure, every story step and every
example link in the README. The engine is held back (its runtime download is aborted), so the page can only use the
snapshot; a request it misses is counted in <html data-snapshot-misses>."""

import re

import pytest

from support.page import read_metrics
from tools.snapshot import searches

SETTLED = "html[data-drawn]:not([data-busy]):not([data-sweeping]):not([data-pending])"


def _no_engine(page):
    """Hold the engine back: a dedicated worker (whose requests the page can route), and its
    runtime download aborted."""
    page.add_init_script("delete window.SharedWorker;")
    page.route(re.compile(r".*/pyodide\.asm\.wasm\.gz$"), lambda route: route.abort("aborted"))


def _misses(page):
    return page.evaluate("() => document.documentElement.dataset.snapshotMisses || '0'")


@pytest.fixture(scope="module")
def start_searches(native):
    schema, presets, story = native("schema", {}), native("presets", {}), native("story", {})
    return searches(presets, schema["figures"], story)


def test_every_start_up_request_is_in_the_snapshot(strict_page, site_url, start_searches):
    page = strict_page
    _no_engine(page)
    assert len(start_searches) > 10
    for search in start_searches:
        page.goto(site_url + search)
        page.wait_for_selector(SETTLED, state="attached")
        assert _misses(page) == "0", f"{search or '(default)'}: the page asked the engine before it was live ({page.evaluate('document.documentElement.dataset.snapshotMissed')})"
        if "embed" not in search or re.search(r"embed=(timeline|metrics)", search):
            assert read_metrics(page), f"{search}: no numbers shown from the snapshot"


def test_preset_buttons_before_the_engine_is_live(strict_page, site_url, native):
    page = strict_page
    _no_engine(page)
    page.goto(site_url)
    page.wait_for_selector(SETTLED, state="attached")
    for name in native("presets", {}):
        before = int(page.get_attribute("html", "data-drawn"))
        page.click(f'[data-preset="{name}"]')
        page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n", arg=before)
        page.wait_for_selector(SETTLED, state="attached")
        assert _misses(page) == "0", f"preset {name}: asked the engine before it was live"
