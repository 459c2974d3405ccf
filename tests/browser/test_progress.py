"""A long run says how far the engine is (requests finished of the total, the engine's own count)
and about how long is left, with Cancel whenever it is in flight: also on a cold load, where the
run waits for the engine and then runs in it (it once said "computing… (the engine answers as soon
as it has loaded)" for the whole run, with the engine live and no Cancel)."""

import re

from support.page import settle, wait_state

# 19,366 Azure conversations under the roofline in three lanes: tens of seconds in the page
LONG = "trace=azure-conv-2023&count=19366&cost=roofline&vllm=1"
PROGRESS = re.compile(r"simulating… ([\d,]+) of ([\d,]+) requests \(3 lanes × ([\d,]+)\)")

# Every value <html data-run-progress> takes ("done/total"), even one set and cleared in the same
# task: the observer keeps each old value too.
RECORD = """() => {
window.__runProgress = [];
new MutationObserver((records) => {
  for (const r of records) if (r.oldValue) window.__runProgress.push(r.oldValue);
}).observe(document.documentElement, { attributes: true, attributeFilter: ['data-run-progress'],
                                      attributeOldValue: true });
}"""


def busy_text(page):
    return page.text_content("#engine-busy") or ""


def next_progress(page, after):
    """Wait for the status line to show more requests done than `after`; -> (done, total, lane)."""
    page.wait_for_function(
        "after => { const m = /simulating… ([\\d,]+) of/.exec("
        "document.getElementById('engine-busy').textContent);"
        " return m && Number(m[1].replace(/,/g, '')) > after; }", arg=after, timeout=120_000)
    m = PROGRESS.search(busy_text(page))
    assert m, busy_text(page)
    return tuple(int(g.replace(",", "")) for g in m.groups())


def engine_idle(page):
    """The shared engine has no work left of this page (its jobs hook)."""
    page.wait_for_function("async () => { const j = await window.__cbxEngine.jobs();"
                           " return j.queued === 0 && j.running === 0; }", timeout=30_000)


def test_a_cold_long_run_shows_its_progress_and_cancel_stops_it(strict_page, site_url):
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?{LONG}")
    # while the engine loads the run waits, and can already be cancelled
    page.wait_for_selector("html[data-stale]", state="attached")
    assert "computing" in busy_text(page)
    assert page.is_visible("#btn-cancel-run")
    # the engine live: it runs the waiting request and says how far it is, in numbers that rise
    seen = [next_progress(page, 0)]
    while len(seen) < 4:
        seen.append(next_progress(page, seen[-1][0]))
    assert {(t, lane) for _, t, lane in seen} == {(3 * 19366, 19366)}, seen
    assert [d for d, _, _ in seen] == sorted({d for d, _, _ in seen})
    status = page.text_content("#engine-status")
    assert "Engine live" in status and "as soon as it has loaded" not in status, status
    assert page.is_visible("#btn-cancel-run") and page.is_visible("#run-progress")
    fraction = page.evaluate("() => document.getElementById('run-progress').value")
    assert 0 < fraction < 1
    # from the measured rate, an estimate of the time left
    page.wait_for_function("() => / left$/.test(document.getElementById('engine-busy').textContent)"
                           " && !/estimating/.test(document.getElementById('engine-busy').textContent)",
                           timeout=60_000)
    page.click("#btn-cancel-run")
    page.wait_for_function("() => (document.documentElement.dataset.stale || '').startsWith('cancelled')")
    assert page.is_hidden("#btn-cancel-run") and page.is_hidden("#run-progress")
    assert "of" not in busy_text(page), busy_text(page)
    # the engine dropped it, the page is live, and the cancelled run is not started again
    engine_idle(page)
    wait_state(page, "ready")
    page.wait_for_function("() => !('busy' in document.documentElement.dataset)")
    engine_idle(page)
    assert page.get_attribute("html", "data-stale").startswith("cancelled")


def test_a_warm_run_counts_up_to_its_total_then_draws(strict_page, site_url):
    """Every count the page showed rises, to the total, before the result is drawn."""
    page = strict_page
    page.goto(f"{site_url}?trace=azure-conv-2023&count=200&cost=roofline&vllm=1")
    wait_state(page, "ready")
    settle(page, sweeps=False)
    drawn = int(page.get_attribute("html", "data-drawn"))
    page.evaluate(RECORD)
    page.fill("#ctl-count", "6000")
    page.press("#ctl-count", "Enter")
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=drawn,
                           timeout=240_000)
    values = [tuple(map(int, v.split("/"))) for v in page.evaluate("() => window.__runProgress")]
    assert len(values) >= 3, values
    assert {t for _, t in values} == {3 * 6000}, values
    dones = [d for d, _ in values]
    assert dones == sorted(dones) and dones[-1] == 3 * 6000, dones
    assert page.is_hidden("#run-progress") and page.is_hidden("#btn-cancel-run")
    assert page.get_attribute("html", "data-run-progress") is None


def test_a_run_cancelled_while_the_engine_loads_is_never_run(strict_page, site_url):
    """Cancel is offered while the run waits for the engine; taken then, the run is not sent when
    the engine goes live (nor started again by the page's switch to the live engine)."""
    page = strict_page
    page.goto(f"{site_url}?{LONG}")
    page.wait_for_selector("#btn-cancel-run:visible")
    page.click("#btn-cancel-run")
    page.wait_for_function("() => (document.documentElement.dataset.stale || '').startsWith('cancelled')")
    wait_state(page, "ready")
    page.wait_for_function("() => !('busy' in document.documentElement.dataset)")
    engine_idle(page)
    assert page.get_attribute("html", "data-stale").startswith("cancelled")
    assert page.is_hidden("#btn-cancel-run") and page.get_attribute("html", "data-run-progress") is None
    # the page is live: the next change is answered
    drawn = int(page.get_attribute("html", "data-drawn") or 0)
    page.fill("#ctl-count", "50")
    page.press("#ctl-count", "Enter")
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=drawn)
    assert page.get_attribute("html", "data-stale") is None
