"""Browser test harness: the built site served with the strict CSP, a Chromium page that fails its
test on any console error, HTTP error, off-origin request or CSP violation, and the native engine.

Fixtures: site_dist, site_url, serve_dir, strict_page, page_problems, native.
Helper fixtures (each returns a function, so tests never import this conftest):
          wait_state(page, state), read_metrics(page), scenario_from_query(query),
          flat_metrics(compare_result), metrics_match(shown, expected), status_text(page).
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

import build  # noqa: E402  (stdlib only: the same server and CSP as `python3 build.py serve`)

# Debian's Chromium (Playwright's own browser download does not work here), with build.py's flags.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = build.CHROMIUM_ARGS
LOAD_TIMEOUT_MS = 90_000  # a cold load takes 5-20 s on a busy 2-core box; this bounds a broken run

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
    files = [ROOT / "build.py", ROOT / "pyproject.toml"]
    files += [p for p in (ROOT / "web").rglob("*") if p.is_file()]
    files += (ROOT / "py_engine").rglob("*.py")
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
        build.build(out)
    except build.BuildError as e:
        pytest.fail(f"building the site failed: {e}", pytrace=False)
    return out


@pytest.fixture(scope="session")
def serve_dir():
    """serve_dir(path) -> base URL of `path` served like `build.py serve` (strict CSP, 127.0.0.1)."""
    servers = []

    def start(directory: Path) -> str:
        server = build.make_server(Path(directory), 0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


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
def strict_page(page, page_problems, request):
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
        if _origin(req.url) != origin.get("origin"):
            problems.append(f"off-origin request: {req.method} {req.url}")

    def on_response(resp):
        if resp.status >= 400:
            problems.append(f"HTTP {resp.status}: {resp.url}")

    def on_failed(req):
        if req.failure and "ERR_ABORTED" not in req.failure:  # aborted = navigation/teardown
            problems.append(f"request failed ({req.failure}): {req.url}")

    page.on("request", on_request)
    page.on("response", on_response)
    page.on("requestfailed", on_failed)
    # Worker console messages are delivered here too (verified with Chromium 156).
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.add_init_script(_CSP_LISTENER)
    page.set_default_timeout(LOAD_TIMEOUT_MS)

    yield page

    allowed = [re.compile(p) for m in request.node.iter_markers("allow_problems") for p in m.args]
    unexpected = [p for p in problems if not any(a.search(p) for a in allowed)]
    if unexpected:
        pytest.fail("page problems:\n  " + "\n  ".join(unexpected), pytrace=False)


# --- helpers -----------------------------------------------------------------------------------

def _wait_state(page, state: str, timeout: float = LOAD_TIMEOUT_MS) -> str:
    """Wait until <html data-state> is `state` (snapshot|ready|failed). Reaching "failed" while
    waiting for something else raises AssertionError with the page's status text."""
    selector = f'html[data-state="{state}"]'
    if state != "failed":
        selector += ', html[data-state="failed"]'
    page.wait_for_selector(selector, state="attached", timeout=timeout)
    got = page.evaluate("() => document.documentElement.dataset.state")
    if got != state:
        raise AssertionError(f'data-state="{got}" while waiting for "{state}": {_status_text(page)}')
    return got


def _status_text(page) -> str:
    """The page's engine status line (it names what failed)."""
    return page.evaluate("() => (document.getElementById('engine-status-text') || {}).textContent || ''")


def _read_metrics(page) -> dict[str, float | None]:
    """{data-metric: float(data-value)} of every metric shown with a value; JSON null -> None.
    The same metric shown twice must carry the same value."""
    pairs = page.eval_on_selector_all(
        "[data-metric]", "els => els.map(e => [e.dataset.metric, e.getAttribute('data-value')])")
    out: dict[str, float | None] = {}
    for name, raw in pairs:
        if raw is None or raw.strip() == "":
            continue
        value = None if raw == "null" else float(raw)
        if name in out and out[name] != value:
            raise AssertionError(f"{name} is shown with two values: {out[name]} and {value}")
        out[name] = value
    return out


# --- the native engine -------------------------------------------------------------------------

def _url_fields() -> dict[str, tuple[str, str]]:
    """URL leaf name -> (dotted scenario path, type), from the engine's own schema."""
    from py_engine.scenario import schema

    fields = {}
    for path, spec in schema().items():
        if spec.get("type") not in ("int", "float", "choice", "cost", "int_or_null") \
                or path == "scheduler" or path.startswith("server.cost."):
            continue
        leaf = "arrival" if path == "workload.arrival.kind" else path.rsplit(".", 1)[-1]
        fields[leaf] = (path, spec["type"])
    return fields


def _scenario_from_query(query: dict | str) -> dict:
    """The scenario the page should run for URL parameters (the brief's flat leaf names), so a test
    can run the same scenario natively. View parameters (vllm, theme, ...) are ignored."""
    items = parse_qsl(query.lstrip("?")) if isinstance(query, str) else list(query.items())
    fields = _url_fields()
    scenario: dict = {}
    for key, raw in items:
        if key not in fields:
            continue
        path, typ = fields[key]
        if typ == "int_or_null":
            value = None if raw in ("", "null") else int(raw)
        else:
            value = int(raw) if typ == "int" else float(raw) if typ == "float" else str(raw)
        node = scenario
        *parents, leaf = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return scenario


class Native:
    """The engine run natively: native(method, params) -> result (asserts the call succeeded)."""

    def __init__(self):
        from py_engine.protocol import handle

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


def _flat_metrics(compare_result: dict) -> dict[str, float | None]:
    """A native compare result flattened to the page's data-metric names
    (<scheduler>.<metric path>, speedup.passes, speedup.time)."""
    out: dict[str, float | None] = {}

    def walk(prefix, value):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) or value is None:
            out[prefix] = None if value is None else float(value)

    for sched, res in compare_result.items():
        if sched == "speedup":
            walk("speedup", res)
        elif isinstance(res, dict) and "metrics" in res:
            walk(sched, res["metrics"])
    return out


def _metrics_match(shown: dict, expected: dict, rel: float = 1e-9) -> int:
    """Every metric the page shows equals the native one: integers exactly, floats to `rel`.
    Returns how many were compared (a test should also check that this is not zero)."""
    problems = []
    for name, value in shown.items():
        if name not in expected:
            problems.append(f"{name}: shown ({value}) but not in the native result")
            continue
        want = expected[name]
        if want is None or value is None:
            ok = want is None and value is None
        elif float(want).is_integer() and float(value).is_integer():
            ok = want == value
        else:
            ok = abs(value - want) <= rel * max(abs(want), abs(value))
        if not ok:
            problems.append(f"{name}: page {value!r} != native {want!r}")
    assert not problems, "page numbers differ from the native engine:\n  " + "\n  ".join(problems)
    return len(shown)


# --- helper fixtures ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def wait_state():
    return _wait_state


@pytest.fixture(scope="session")
def status_text():
    return _status_text


@pytest.fixture(scope="session")
def read_metrics():
    return _read_metrics


@pytest.fixture(scope="session")
def scenario_from_query():
    return _scenario_from_query


@pytest.fixture(scope="session")
def flat_metrics():
    return _flat_metrics


@pytest.fixture(scope="session")
def metrics_match():
    return _metrics_match
