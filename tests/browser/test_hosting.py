"""Where the engine runs and for whom: an embed framed by another site goes live (the browser
refuses it a SharedWorker and Cache Storage there), and a failed engine never says "computing…"."""

import functools
import http.server
import shutil
import threading

import pytest

from support.page import LOAD_TIMEOUT_MS, flat_metrics, metrics_match, read_metrics, status_text, wait_state

SETTLED = ("() => { const d = document.documentElement.dataset;"
           " return d.state === 'ready' && 'drawn' in d && !('busy' in d) && !('sweeping' in d); }")
# the pill over a figure whose numbers are not (yet) shown, as the reader sees it
BUSY_LABELS = "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.textContent)"


def _blog(directory, body):
    """The blogger's site: a plain static server (no CSP of ours) at http://localhost:<port>/,
    another *site* than the explorer's 127.0.0.1 (a site is the scheme and host, not the port)."""
    (directory / "post.html").write_text(
        '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>A blog post</title>'
        f"<p>The post.</p>{body}")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://localhost:{server.server_address[1]}"


def _frame(page, part):
    page.wait_for_function("p => [...document.querySelectorAll('iframe')].some(f => f.src.includes(p))", arg=part)
    for _ in range(2):   # the frame object appears with its first navigation
        frame = next((f for f in page.frames if part in f.url), None)
        if frame:
            return frame
        page.wait_for_event("framenavigated")
    raise AssertionError(f"no frame loads {part}")


# --- 1. an embed on another site -------------------------------------------------------------

def test_an_embed_on_another_site_goes_live_with_the_native_numbers(strict_page, site_url, native,
                                                                      tmp_path, page_origins):
    """A blog on localhost frames the explorer on 127.0.0.1. Chromium treats that frame as
    third-party: Cache Storage, a SharedWorker and a service worker are refused (as in Safari's
    default, Brave, incognito). The embed must still go live and show the engine's own numbers."""
    page = strict_page
    src = f"{site_url}?embed=metrics&amp;requests=32"
    server, blog = _blog(tmp_path, f'<iframe src="{src}" width="820" height="520" title="metrics"'
                                   ' style="border:0" data-cbx-embed></iframe>')
    page_origins.add(site_url.rstrip("/"))     # the blog is the first page; the site is framed
    try:
        page.set_viewport_size({"width": 1000, "height": 700})
        page.goto(f"{blog}/post.html")
        frame = _frame(page, "embed=metrics")
        # The conditions this test is about: storage is refused in that frame.
        refused = frame.evaluate("""async () => {
            try { await caches.open('probe'); return false; } catch (e) { return e.name; } }""")
        assert refused == "SecurityError", "the frame is not partitioned: this test would prove nothing"

        frame.wait_for_selector('html[data-state="ready"], html[data-state="failed"]', state="attached")
        assert frame.get_attribute("html", "data-state") == "ready", status_text(frame)
        assert frame.get_attribute("html", "data-engine") == "dedicated"   # the shared one was refused
        frame.wait_for_function(SETTLED, timeout=240_000)
        want = flat_metrics(native.compare({"workload": {"requests": 32}}))
        assert metrics_match(read_metrics(frame), want) >= 40
        assert frame.eval_on_selector_all(".busy-label", BUSY_LABELS) == []
        assert frame.text_content("#embed-status") == "live engine"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.allow_problems(r"HTTP 404: .*pyodide\.asm\.wasm", r"status of 404")
def test_a_failed_engine_never_says_computing(strict_page, site_dist, tmp_path, serve_dir):
    """A non-default embed (no build-time answer) whose engine cannot load: the figure says it is
    not simulated, not "computing…" (which would wait forever)."""
    site = tmp_path / "site"
    shutil.copytree(site_dist, site)
    (site / "pyodide" / "pyodide.asm.wasm.gz").unlink()
    page = strict_page
    page.goto(f"{serve_dir(site)}?embed=metrics&requests=33")
    wait_state(page, "failed", timeout=60_000)
    page.wait_for_selector("#timeline-wait:not([hidden])", state="attached")   # the reason, in red
    labels = page.eval_on_selector_all(".busy-label", BUSY_LABELS)
    assert labels and not any("computing" in t for t in labels), labels
    assert read_metrics(page) == {}, "numbers shown that no engine computed"
