"""Browser test harness: the built site served with the strict CSP, a Chromium page that fails its
test on any console error, HTTP error, off-origin request or CSP violation, and the native engine.

Fixtures: site_dist, site_url, serve_dir, server_log, strict_page, page_problems, native. Helpers (waiting for
the page's state, reading its numbers, comparing them with native runs) are plain functions in
tests/support/page.py.
Marker:   @pytest.mark.allow_problems(r"regex", ...) for a test that expects some page problems
          (a tampered file's console error, say); every other problem still fails the test.

dist/ is used when it is newer than every source file; otherwise the site is built once per session
into a temporary folder (so a stale dist/ never makes a test pass or fail).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from support.page import LOAD_TIMEOUT_MS  # noqa: E402
from tools import site  # noqa: E402  (stdlib only)
from tools.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tools.common import BuildError  # noqa: E402
from tools.server import make_server  # noqa: E402  (the same server and CSP as `build.py serve`)

# The page's own violation listener; the worker reports its own (see web/worker.js).
_CSP_LISTENER = """
document.addEventListener('securitypolicyviolation', (e) => {
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`
                + ` (${e.sourceFile || ''}:${e.lineNumber || ''})`);
});
"""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "allow_problems(*patterns): regexes of page problems (console errors, HTTP "
        "errors) this test expects; any other problem still fails it")


# --- the site ----------------------------------------------------------------------------------

def _sources_newer_than(stamp: Path) -> list[str]:
    t = stamp.stat().st_mtime
    files = [ROOT / "build.py", ROOT / "pyproject.toml", ROOT / "README.md"]
    files += [p for p in (ROOT / "web").rglob("*") if p.is_file()]
    files += [*(ROOT / "py_engine").rglob("*.py"), *(ROOT / "tools").rglob("*.*")]
    newer = []
    for p in files:
        try:
            if p.stat().st_mtime > t:
                newer.append(str(p.relative_to(ROOT)))
        except FileNotFoundError:  # removed while we looked: the tree changed, rebuild
            newer.append(str(p.relative_to(ROOT)))
    return newer


@pytest.fixture(scope="session")
def site_dist(tmp_path_factory) -> Path:
    """The built site: $CB_EXPLORER_DIST, or dist/ when current, or a fresh build in a temp dir."""
    if os.environ.get("CB_EXPLORER_DIST"):
        return Path(os.environ["CB_EXPLORER_DIST"])
    dist = ROOT / "dist"
    manifest = dist / "manifest.json"
    if manifest.exists() and not _sources_newer_than(manifest):
        return dist
    out = tmp_path_factory.mktemp("site") / "dist"
    try:
        site.build(out)
    except BuildError as e:
        pytest.fail(f"building the site failed: {e}", pytrace=False)
    return out


SERVERS: dict[str, object] = {}   # origin -> server (its log of responses; see strict_page)


@pytest.fixture(scope="session")
def serve_dir():
    """serve_dir(path) -> base URL of `path` served like `build.py serve` (strict CSP, 127.0.0.1)."""
    servers = []

    def start(directory: Path) -> str:
        server = make_server(Path(directory), 0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        SERVERS[origin] = server
        return origin + "/"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.fixture(scope="session")
def server_log():
    """server_log(url) -> the (path, status) list of every response the server of `url` sent."""
    return lambda url: SERVERS[_origin(url)].served


@pytest.fixture(scope="session")
def site_url(site_dist, serve_dir) -> str:
    """Base URL (ending in /) of the built site, served with the strict Content-Security-Policy."""
    return serve_dir(site_dist)


# --- the browser -------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `python3 build.py test` (as root it installs "
                    "Debian's chromium) or `apt-get install -y chromium`", pytrace=False)
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS,
            "headless": True}


def _origin(url: str) -> str:
    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


@pytest.fixture
def page_problems() -> list[str]:
    """What went wrong in strict_page so far (the same list strict_page checks at teardown)."""
    return []


@pytest.fixture
def page_origins() -> set[str]:
    """Origins strict_page accepts besides the first page loaded (a test that embeds the site in
    another origin's page adds the site's)."""
    return set()


@pytest.fixture
def strict_page(page, page_problems, page_origins, request):
    """A Playwright page that fails the test at teardown on: a console error or uncaught exception
    (page or worker), an HTTP status >= 400, a failed request, a request to another origin than the
    first page loaded (Web Worker requests included) or a CSP violation."""
    problems = page_problems
    origin = {}

    def on_request(req):
        if req.url.startswith(("data:", "blob:")):
            return  # not network requests; CSP decides whether they are allowed
        if "origin" not in origin and req.is_navigation_request():
            origin["origin"] = _origin(req.url)
        if _origin(req.url) != origin.get("origin") and _origin(req.url) not in page_origins:
            problems.append(f"off-origin request: {req.method} {req.url}")

    def on_response(resp):
        if resp.status >= 400:
            problems.append(f"HTTP {resp.status}: {resp.url}")

    def on_failed(req):
        if req.failure and "ERR_ABORTED" not in req.failure:  # aborted = navigation/teardown
            problems.append(f"request failed ({req.failure}): {req.url}")

    page.on("request", on_request)
    page.on("response", on_response)
    # The server's own log also sees what no page listener does (a SharedWorker's requests).
    served_from = {origin: len(server.served) for origin, server in SERVERS.items()}
    page.on("requestfailed", on_failed)
    # Worker console messages are delivered here too (verified with Chromium 156).
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.add_init_script(_CSP_LISTENER)
    page.set_default_timeout(LOAD_TIMEOUT_MS)

    yield page

    for server_origin, start in served_from.items():
        for path, status, _ in SERVERS[server_origin].served[start:]:
            if status >= 400 and f"HTTP {status}: {server_origin}{path}" not in problems:
                problems.append(f"HTTP {status}: {server_origin}{path} (server log)")
    allowed = [re.compile(p) for m in request.node.iter_markers("allow_problems") for p in m.args]
    unexpected = [p for p in problems if not any(a.search(p) for a in allowed)]
    if unexpected:
        pytest.fail("page problems:\n  " + "\n  ".join(unexpected), pytrace=False)


# --- the native engine -------------------------------------------------------------------------

class Native:
    """The engine run natively: native(method, params) -> result (asserts the call succeeded)."""

    def __init__(self):
        from py_engine.app.protocol import handle

        self.handle = handle

    def __call__(self, method: str, params: dict | None = None):
        resp = self.handle({"method": method, "params": params or {}})
        assert resp.get("ok"), f"native {method} failed: {resp.get('error')}"
        # Round-trip through JSON like the page does (tuples -> lists, exact float repr).
        return json.loads(json.dumps(resp["result"], allow_nan=False))

    def compare(self, scenario: dict, schedulers=None):
        params = {"scenario": scenario}
        if schedulers:
            params["schedulers"] = list(schedulers)
        return self("compare", params)


@pytest.fixture(scope="session")
def native() -> Native:
    return Native()
