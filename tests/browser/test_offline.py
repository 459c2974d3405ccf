"""Works with no network after one visit: a lecturer opens the explorer once, closes the browser,
and opens it again where there is no network (here: the site's server is gone). Then, back online,
a new build of the site replaces the offline copy."""

import hashlib
import json
import shutil
import socket
import threading
from urllib.parse import urlsplit

import pytest

from support.page import flat_metrics, metrics_match, read_metrics, settle, wait_state
from tools.server import make_server



class Site:
    """The built site on a port of its own that the test can take down and bring back."""

    def __init__(self, directory, port=0):
        self.server = make_server(directory, port, quiet=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def _watch(page, origin, problems):
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
    page.on("request", lambda r: not r.url.startswith(("data:", "blob:"))
            and not r.url.startswith(origin) and problems.append(f"off-origin: {r.url}"))


@pytest.fixture
def persistent(browser_type, browser_type_launch_args, tmp_path):
    """open() -> a page in a browser profile kept on disk (closed by close())."""
    profile = tmp_path / "profile"
    opened = []

    def open_(origin, problems):
        ctx = browser_type.launch_persistent_context(str(profile), **browser_type_launch_args)
        opened.append(ctx)
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        _watch(page, origin, problems)
        return ctx, page
    yield open_
    for ctx in opened:
        try:
            ctx.close()
        except Exception:
            pass


def _refused(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_opens_with_no_network_after_one_visit_and_updates_when_back(persistent, site_dist,
                                                                      tmp_path, native):
    site_dir = tmp_path / "site"
    shutil.copytree(site_dist, site_dir)
    site = Site(site_dir)
    problems = []

    # 1. One visit, online: the page says when its offline copy is complete.
    ctx, page = persistent(site.url, problems)
    page.goto(site.url + "?preset=equal")
    wait_state(page, "ready")
    page.wait_for_selector("html[data-offline=ready]", state="attached")
    assert page.is_visible("#engine-offline")
    ctx.close()

    # 2. No network: the server is gone; the browser is started again.
    site.stop()
    assert _refused(site.port)
    ctx, page = persistent(site.url, problems)
    presets = native("presets", {})
    for name in ("equal", "chat"):          # chat was never opened online
        page.goto(f"{site.url}?preset={name}")
        wait_state(page, "ready")
        settle(page, sweeps=False)
        assert page.get_attribute("html", "data-engine-boot") == "snapshot"
        expected = native.compare(presets[name]["scenario"], presets[name].get("schedulers"))
        assert metrics_match(read_metrics(page), flat_metrics(expected)) >= 46, name
    # and the engine simulates what no snapshot holds
    n = int(page.get_attribute("html", "data-drawn"))
    page.fill("#ctl-requests", "37")
    page.press("#ctl-requests", "Enter")
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=n)
    sc = dict(presets["chat"]["scenario"])
    sc["workload"] = dict(sc["workload"], requests=37)
    assert metrics_match(read_metrics(page), flat_metrics(
        native.compare(sc, presets["chat"].get("schedulers")))) >= 46
    ctx.close()

    # 3. Back online with a new build: the visit gets it, and the offline copy becomes it.
    manifest = json.loads((site_dir / "manifest.json").read_text())
    html = (site_dir / "index.html").read_bytes().replace(b"</body>", b"<!-- build 2 --></body>")
    (site_dir / "index.html").write_bytes(html)
    manifest["files"]["index.html"] = {"sha256": hashlib.sha256(html).hexdigest(), "bytes": len(html)}
    manifest["build"] = "build-2"
    (site_dir / "manifest.json").write_text(json.dumps(manifest))
    site = Site(site_dir, site.port)
    ctx, page = persistent(site.url, problems)
    page.goto(site.url)
    assert "<!-- build 2 -->" in page.content()
    # a synchronous predicate (an async one returns a Promise, which is truthy: it passed at once):
    # each poll asks Cache Storage and reads the answer of the poll before
    page.wait_for_function("() => { caches.keys().then((k) => { window.__cbxKeys = k; });"
                           " const k = window.__cbxKeys; return !!k && k.includes('cbx-site-build-2')"
                           " && !k.some((x) => x.startsWith('cbx-site-') && x !== 'cbx-site-build-2'); }",
                           polling=200)
    ctx.close()
    site.stop()
    assert not problems, problems
    assert urlsplit(site.url).hostname == "127.0.0.1"
