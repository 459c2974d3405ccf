"""Where the engine runs and for whom: an embed framed by another site goes live (the browser
refuses it a SharedWorker and Cache Storage there), a failed engine never says "computing…", the
offline copy is claimed only when this build is wholly stored (an update the network interrupted
leaves the old copy working), and the shared engine is fair to its pages (a light request passes a
heavy one; a closed page's work is dropped)."""

import functools
import hashlib
import http.server
import json
import shutil
import socket
import threading
import zipfile

import pytest

from support.page import LOAD_TIMEOUT_MS, flat_metrics, metrics_match, read_metrics, settle, status_text, wait_state
from tools.server import SiteHandler, SiteServer

# the pill over a figure whose numbers are not (yet) shown, as the reader sees it
BUSY_LABELS = "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.textContent)"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):      # the blog's server says nothing on the test's output
        pass


def _blog(directory, body):
    """The blogger's site: a plain static server (no CSP of ours) at http://localhost:<port>/,
    another *site* than the explorer's 127.0.0.1 (a site is the scheme and host, not the port)."""
    (directory / "post.html").write_text(
        '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>A blog post</title>'
        f"<p>The post.</p>{body}")
    handler = functools.partial(_Quiet, directory=str(directory))
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
        settle(frame)
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


# --- 2. the offline copy and an interrupted update --------------------------------------------

class Site:
    """The built site on its own port, which can go down; hold=path keeps that request waiting
    until cut() (then the network is gone: that request gets no answer, the server none at all)."""

    def __init__(self, directory, port=0, hold=None):
        self.arrived, self.release = threading.Event(), threading.Event()
        site = self

        class Handler(SiteHandler):
            quiet = True

            def do_GET(self):
                if hold and self.path == hold:
                    site.arrived.set()
                    site.release.wait()
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                super().do_GET()

        self.server = SiteServer(("127.0.0.1", port), functools.partial(Handler, directory=str(directory)))
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def cut(self):
        self.server.shutdown()
        self.server.server_close()
        self.release.set()


def _rebuild(site_dir, build):
    """What a new build changes here: its id (engine/build.js, manifest.json), index.html and the
    engine wheel (so its runtime differs from the old build's), each with its new sha256."""
    manifest = json.loads((site_dir / "manifest.json").read_text())

    def rewrite(rel, data):
        (site_dir / rel).write_bytes(data)
        manifest["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}

    html = (site_dir / "index.html").read_bytes().replace(b"</body>", f"<!-- {build} --></body>".encode())
    rewrite("index.html", html)
    rewrite("engine/build.js", f"// a rebuild\nexport const BUILD = '{build}';\n".encode())
    wheel = site_dir / manifest["engine"]["wheel"]
    with zipfile.ZipFile(wheel, "a") as z:
        z.comment = build.encode()
    rewrite(manifest["engine"]["wheel"], wheel.read_bytes())
    manifest["engine"].update(manifest["files"][manifest["engine"]["wheel"]])
    manifest["build"] = build
    (site_dir / "manifest.json").write_text(json.dumps(manifest))
    return manifest


@pytest.fixture
def profile(browser_type, browser_type_launch_args, tmp_path):
    """open(problems) -> a page in a browser profile kept on disk; each open is a browser restart."""
    opened = []

    def open_(problems):
        for ctx in opened:
            ctx.close()
        ctx = browser_type.launch_persistent_context(str(tmp_path / "profile"), **browser_type_launch_args)
        opened.append(ctx)
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
        page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
        page.on("request", lambda r: not r.url.startswith(("data:", "blob:", "http://127.0.0.1:"))
                and problems.append(f"off-origin: {r.url}"))
        return page
    yield open_
    for ctx in opened:
        try:
            ctx.close()
        except Exception:
            pass


def _live_with_native_numbers(page, native):
    wait_state(page, "ready")
    settle(page)
    assert page.get_attribute("html", "data-engine-boot") == "snapshot"
    assert metrics_match(read_metrics(page), flat_metrics(native.compare({}))) >= 46


def test_an_update_the_network_interrupted_claims_nothing_and_the_old_copy_still_works(
        profile, site_dist, tmp_path, native):
    site_dir = tmp_path / "site"
    shutil.copytree(site_dist, site_dir)
    problems = []

    # 1. One visit online: this build is stored, and the page says so.
    site = Site(site_dir)
    page = profile(problems)
    page.goto(site.url)
    wait_state(page, "ready")
    page.wait_for_selector("html[data-offline]", state="attached")
    assert page.get_attribute("html", "data-offline") == "ready"
    port = site.port
    site.cut()

    # 2. A rebuild; an online visit gets it, and the network goes while the service worker is
    # still storing the new site (one of its files is held until then).
    _rebuild(site_dir, "build-2")
    site = Site(site_dir, port, hold="/img/screenshot.png")   # a file only the precache asks for
    page = profile(problems)
    page.goto(site.url)
    assert "<!-- build-2 -->" in page.content()
    wait_state(page, "ready")
    settle(page)
    assert page.evaluate("() => window.__cbxEngine.cached") > 0, "the new runtime was not stored"
    assert site.arrived.wait(LOAD_TIMEOUT_MS / 1000), "the service worker never asked for the held file"
    site.cut()
    page.wait_for_selector("html[data-offline]", state="attached")
    assert page.get_attribute("html", "data-offline") == "incomplete", "claims to work offline"
    assert "not stored" in page.get_attribute("html", "data-offline-note")

    # 3. The next visit has no network: the old copy opens, with its own runtime, and works.
    page = profile(problems)
    page.goto(site.url)
    _live_with_native_numbers(page, native)
    assert "<!-- build-2 -->" not in page.content()
    page.wait_for_selector("html[data-offline]", state="attached")
    assert page.get_attribute("html", "data-offline") == "ready"   # that copy is whole

    # 4. Online again: the update completes, the page says so, the old copy is gone.
    site = Site(site_dir, port)
    page = profile(problems)
    page.goto(site.url)
    assert "<!-- build-2 -->" in page.content()
    wait_state(page, "ready")
    page.wait_for_selector("html[data-offline]", state="attached")
    assert page.get_attribute("html", "data-offline") == "ready"
    assert [k for k in page.evaluate("() => caches.keys()") if k.startswith("cbx-site-")] == ["cbx-site-build-2"]
    site.cut()

    # 5. Offline once more: the new build opens and works.
    page = profile(problems)
    page.goto(site.url)
    _live_with_native_numbers(page, native)
    assert "<!-- build-2 -->" in page.content()
    assert not problems, problems


# --- 3. one shared engine, fair to its pages --------------------------------------------------

HEAVY = {"scenario": {"workload": {"requests": 40000}}}   # many seconds in the page's engine
LIGHT = {"scenario": {"workload": {"requests": 32}}}

START_HEAVY = """(params) => {
    window.heavy = { done: false, error: null };
    window.heavyStop = new AbortController();
    window.__cbxEngine.call('compare', params, { signal: window.heavyStop.signal })
      .then(() => { window.heavy.done = true; }, (e) => { window.heavy.error = e.detail?.type || String(e); });
}"""
JOBS = "() => window.__cbxEngine.jobs()"   # page.evaluate awaits the promise


def _watch(page, problems):
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))


# A tab that is killed says no goodbye: only its Web Lock, let go with it, tells the host.
NO_GOODBYE = """{ const add = window.addEventListener;
  window.addEventListener = function (type, ...rest) { if (type !== 'pagehide') return add.call(this, type, ...rest); }; }"""


@pytest.mark.parametrize("goodbye", [True, False], ids=["goodbye", "no-goodbye"])
def test_the_shared_engine_lets_a_light_request_pass_and_drops_a_closed_pages_work(
        strict_page, site_url, native, goodbye):
    light_page = strict_page
    heavy_page = strict_page.context.new_page()
    problems = []
    _watch(heavy_page, problems)
    if not goodbye:
        heavy_page.add_init_script(NO_GOODBYE)
    for page in (heavy_page, light_page):
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.goto(f"{site_url}?embed=metrics")
        settle(page)
        # and the self-check it starts once idle has finished: the page asks for nothing more
        page.wait_for_selector("#check-summary[data-total]", state="attached", timeout=240_000)
        assert page.get_attribute("html", "data-engine") == "shared"

    # A heavy request from one page; once the host has it (its answer to a question asked after
    # it on the same port says so), another page asks for a light one.
    heavy_page.evaluate(START_HEAVY, HEAVY)
    assert heavy_page.evaluate(JOBS)["queued"] == 1
    result = light_page.evaluate("async (p) => { const r = await window.__cbxEngine.call('compare', p);"
                                 " return { speedup: r.speedup, passes: r.continuous.metrics.passes }; }", LIGHT)
    # the light one is answered while the heavy one still runs
    assert heavy_page.evaluate("() => window.heavy") == {"done": False, "error": None}
    want = native("compare", LIGHT)
    assert result == {"speedup": want["speedup"], "passes": want["continuous"]["metrics"]["passes"]}
    jobs = light_page.evaluate(JOBS)
    assert jobs["running"] == 1 and jobs["pages"] == 2 and jobs["dropped"] == 0, jobs
    assert light_page.get_attribute("html", "data-engine-clients") == "2"

    # The heavy page is closed: its work is dropped, not finished for nobody (the host tells the
    # pages left how many share it).
    heavy_page.close()
    light_page.wait_for_selector('html[data-engine-clients="1"]', state="attached")
    jobs = light_page.evaluate(JOBS)
    assert jobs["dropped"] == 1 and jobs["running"] == 0 and jobs["pages"] == 1, jobs
    assert light_page.evaluate("async (p) => (await window.__cbxEngine.call('compare', p)).continuous.metrics.passes",
                               LIGHT) == want["continuous"]["metrics"]["passes"]
    assert not problems, problems
