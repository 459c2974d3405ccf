"""The live engine arrives fast and shared: it is restored from the build-time memory snapshot, several
embeds on one host page share one Python, and until it answers no number is shown under a control
it does not belong to."""

import http.server
import functools
import re
import threading

from support.page import flat_metrics, metrics_match, read_metrics, wait_state


def test_the_engine_is_restored_from_its_memory_snapshot(strict_page, site_url, native):
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    assert page.get_attribute("html", "data-engine-boot") == "snapshot"
    assert page.get_attribute("html", "data-engine") == "shared"
    assert "memory snapshot" in page.get_attribute("html", "data-engine-note")
    page.wait_for_selector("html:not([data-busy])", state="attached")
    assert metrics_match(read_metrics(page), flat_metrics(native.compare({}))) >= 46


def test_no_old_numbers_under_a_new_control_before_the_engine_answers(strict_page, site_url,
                                                                       native):
    page = strict_page
    held = []
    page.add_init_script("delete window.SharedWorker;")   # a worker whose requests the page routes
    page.route(re.compile(r".*/pyodide\.asm\.wasm\.gz$"), lambda route: held.append(route))
    page.goto(site_url)
    page.wait_for_selector("html[data-drawn]:not([data-busy])", state="attached")
    assert page.get_attribute("html", "data-state") == "snapshot"
    assert read_metrics(page), "the snapshot's numbers are shown at once"

    page.fill("#ctl-slots", "5")            # not a state the build-time snapshot covers
    page.press("#ctl-slots", "Enter")
    page.wait_for_selector("html[data-stale]", state="attached")
    assert read_metrics(page) == {}, "old numbers shown under the new value"
    assert set(page.eval_on_selector_all("[data-shown]", "els => els.map(e => e.textContent)")) == {"…"}
    assert "computing" in page.text_content("#fig-timeline .busy-label")

    assert held, "the runtime download was not held"
    for route in held:
        route.continue_()
    wait_state(page, "ready")
    page.wait_for_selector("html[data-drawn]:not([data-busy]):not([data-stale])", state="attached")
    assert metrics_match(read_metrics(page), flat_metrics(native.compare({"server": {"slots": 5}}))) >= 46


class _PlainHandler(http.server.SimpleHTTPRequestHandler):
    """The blog: another origin, no CSP of ours."""
    def log_message(self, *a):
        pass


def test_three_embeds_on_one_host_page_boot_one_python(strict_page, site_url, tmp_path, native,
                                                       server_log, page_origins):
    page_origins.add(site_url.rstrip("/"))   # the blog (another origin) embeds the site
    figures = ["timeline", "metrics", "skew"]
    frames = "".join(
        f'<iframe src="{site_url}?embed={f}&requests=32&skew=0.8" width="820" height="520" '
        f'title="{f}"></iframe>' for f in figures)
    (tmp_path / "host.html").write_text(f"<!doctype html><title>a blog post</title>{frames}")
    (tmp_path / "favicon.ico").write_bytes(b"")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_PlainHandler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log = server_log(site_url)
    start = len(log)
    try:
        page = strict_page
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/host.html")
        for frame in page.frames[1:]:
            frame.wait_for_selector('html[data-state="ready"]', state="attached")
        assert len(page.frames) == 4
        clients = [int(f.evaluate("() => document.documentElement.dataset.engineClients"))
                   for f in page.frames[1:]]
        assert max(clients) >= 3, clients
        fetched = [path for path, _, _ in log[start:]]
        assert fetched.count("/engine/memory.bin.gz") == 1, "more than one Python was booted"
        assert fetched.count("/pyodide/pyodide.asm.wasm.gz") == 1
        # and each figure shows the native numbers for its scenario
        want = flat_metrics(native.compare({"workload": {"requests": 32, "skew": 0.8}}))
        timeline = page.frames[1]
        timeline.wait_for_selector("html:not([data-busy])", state="attached")
        assert metrics_match(read_metrics(timeline), want) >= 4
    finally:
        server.shutdown()
        server.server_close()
