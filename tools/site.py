"""Assemble the static site: the page (web/), the Pyodide runtime and wheels, the engine wheel, the
build-time snapshot and manifest.json (sha256 and size of every shipped file), then check that the
site is self-contained. The output folder is replaced only by a complete, checked site."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import common
from .common import ROOT, WEB, BuildError, log, run, sha256_file
from .pins import (BUILD_REQUIREMENTS, CSP, PYODIDE_NPM_INTEGRITY, PYODIDE_PACKAGES,
                   PYODIDE_RUNTIME, PYODIDE_VERSION)
from .pyodide import extract_runtime, fetch_pyodide_tarball, fetch_pyodide_wheels
from . import editor
from .venv import ensure_venv


def build_engine_wheel(py: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # cwd=tmp: from ROOT, `python -m build` would import build.py instead of the build package.
        run([py, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp, ROOT],
            quiet=True, cwd=tmp)
        wheels = list(Path(tmp).glob("py_engine-*-py3-none-any.whl"))
        if len(wheels) != 1:
            raise BuildError(f"expected one py_engine wheel, got {[w.name for w in wheels]}")
        dest = out / wheels[0].name
        shutil.copy2(wheels[0], dest)
    return dest


def build(out: Path | None = None, pyodide_cdn: str | None = None) -> Path:
    """Build the site into `out` (default dist/); replaced only when every step and check passed."""
    out = out or common.DIST
    py = ensure_venv(BUILD_REQUIREMENTS)
    tarball = fetch_pyodide_tarball()
    # A private staging folder next to `out`. The final swap is not atomic: don't build the same
    # `out` from two processes at once (the browser tests build into their own temp folder).
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


# Runtime files shipped gzipped (the worker inflates and checks them): the 10 MB .wasm is 3.2 MB so.
# pyodide.mjs and pyodide.asm.js stay plain: Pyodide imports them as scripts, by URL.
GZIPPED = ("pyodide.asm.wasm",)
MEMORY_SNAPSHOT = "engine/memory.bin.gz"


def gzip_file(src: Path, dest: Path) -> None:
    """Deterministic gzip (no name, no time stamp): the same input gives the same bytes."""
    with open(src, "rb") as f, open(dest, "wb") as out:
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) as z:
            shutil.copyfileobj(f, z)


def make_memory_snapshot(runtime_dir: Path, wheel: Path, dest: Path) -> dict:
    """Node boots Pyodide, installs and warms the engine, saves its memory (tools/memsnap.mjs)."""
    raw = dest.with_suffix("")
    try:
        p = run(["node", ROOT / "tools" / "memsnap.mjs", runtime_dir, wheel, raw], quiet=True,
                stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    except BuildError as e:
        raise BuildError(f"the engine's memory snapshot could not be made: {e}") from None
    info = json.loads(p.stdout)
    entry = {"file": dest.as_posix().split("/", 1)[-1], "raw_sha256": sha256_file(raw),
             "raw_bytes": raw.stat().st_size, "modules": info["modules"]}
    gzip_file(raw, dest)
    raw.unlink()
    return entry


def _build_into(staging: Path, py: Path, tarball: Path, pyodide_cdn: str | None) -> None:
    shutil.copytree(WEB, staging, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    own_files = [p for p in staging.rglob("*") if p.is_file()]
    # after own_files: a minified third-party bundle is pinned by its sha256, not read for refs
    cm = editor.bundle(staging)
    log(f"policy editor: {cm.relative_to(staging)} (CodeMirror 6, verified)")
    wheel = build_engine_wheel(py, staging / "wheels")
    log(f"engine wheel: {wheel.name}")

    pyo = staging / "pyodide"
    with tempfile.TemporaryDirectory() as tmp:
        lock = extract_runtime(tarball, Path(tmp))
        memsnap = make_memory_snapshot(Path(tmp), wheel, staging / MEMORY_SNAPSHOT)
        memsnap["file"] = MEMORY_SNAPSHOT
        log(f"memory snapshot: {memsnap['raw_bytes'] / 1e6:.1f} MB of Python with py_engine "
            f"({memsnap['modules']} modules) imported and warmed")
        if pyodide_cdn:
            index_url = pyodide_cdn if pyodide_cdn.endswith("/") else pyodide_cdn + "/"
        else:
            index_url = "pyodide/"
            pyo.mkdir()
            for name in PYODIDE_RUNTIME:
                if name in GZIPPED:
                    gzip_file(Path(tmp) / name, pyo / f"{name}.gz")
                else:
                    shutil.copy2(Path(tmp) / name, pyo / name)
            fetch_pyodide_wheels(py, lock, pyo)
    log(f"pyodide {PYODIDE_VERSION}: " + ("served from " + index_url if pyodide_cdn
                                          else "runtime + " + ", ".join(PYODIDE_PACKAGES)))

    run([py, "-m", "tools.snapshot", staging / "snapshot"], cwd=ROOT, quiet=True)
    log("snapshot/ written (native py_engine answers to the page's start-up requests)")

    files = _hash_files(staging)
    # The build's id: one SharedWorker per build (web/engine/source.js names it after this).
    build_id = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
    (staging / "engine" / "build.js").write_text(
        f"// Written by tools/site.py: this build's id.\nexport const BUILD = '{build_id}';\n")
    first = staging / "snapshot" / FIRST_DRAW
    n_mods = write_preloads(staging, json.loads(first.read_text()), lazy={cm})
    first.unlink()   # a build-time note, now in index.html's preloads
    log(f"index.html: {n_mods} modules and the default view's snapshot answers preloaded "
        "(its main run's by engine/start.js, on the default view only)")
    files = _hash_files(staging)
    lock_pkgs = {p: lock["packages"][p] for p in PYODIDE_PACKAGES}
    runtime = {}
    for name, sha in PYODIDE_RUNTIME.items():
        runtime[name] = {"sha256": sha, "bytes": files.get(f"pyodide/{name}", {}).get("bytes")}
        if not pyodide_cdn and name in GZIPPED:
            gz = files[f"pyodide/{name}.gz"]
            runtime[name]["gzip"] = {"file": f"{name}.gz", **gz}
    memsnap.update(files[MEMORY_SNAPSHOT])
    wheel_rel = wheel.relative_to(staging).as_posix()
    manifest = {
        "name": "Continuous Batching Explorer",
        "build": build_id,
        "engine": {"package": "py_engine", "version": wheel.name.split("-")[1], "wheel": wheel_rel,
                   "sha256": files[wheel_rel]["sha256"], "bytes": files[wheel_rel]["bytes"],
                   "memory_snapshot": memsnap},
        "pyodide": {
            "version": PYODIDE_VERSION, "python": lock["info"]["python"], "indexURL": index_url,
            "npm_integrity": PYODIDE_NPM_INTEGRITY, "runtime": runtime,
            "packages": {p: {"file": v["file_name"], "version": v["version"], "sha256": v["sha256"],
                             "bytes": files.get(f"pyodide/{v['file_name']}", {}).get("bytes")}
                         for p, v in lock_pkgs.items()},
        },
        "snapshot": "snapshot/index.json",
        "csp": CSP,
        "files": files,
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    check_site(staging, own_files, cdn=bool(pyodide_cdn))


# tools/snapshot.py's lists of the snapshot files the default view's first picture needs:
# {"boot": every page's boot asks them, "main": the default view's main run}.
FIRST_DRAW = "first-draw.json"
PRELOAD_MARK = "<!-- preloads: written by tools/site.py -->"
# inside index.html's <template id="default-view-preloads">, which engine/start.js adds to the
# document only when the page opens on the default view
DEFAULT_VIEW_MARK = "<!-- the default view's preloads: written by tools/site.py -->"
_IMPORT = re.compile(r"""(?:\bfrom|\bimport\s*\(?)\s*["']([^"'`$]+\.m?js)["']""")
_MODULE_SCRIPT = re.compile(r"""<script\s+type=["']module["']\s+src=["']([^"']+)["']""", re.I)


def _strip_js_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)(^|[^:\"'`\\])//.*$", r"\1", text)


def module_graph(site: Path, entries: list[str], lazy: set[Path] = frozenset()) -> list[str]:
    """Every module the entries import, statically or by import('...'), in breadth-first order
    (site-relative paths). Not followed: a worker's script (new Worker(new URL(...)) is another
    graph, in another global) and the `lazy` files."""
    site, lazy = site.resolve(), {p.resolve() for p in lazy}
    seen, queue = [], [site / e for e in entries]
    while queue:
        f = queue.pop(0).resolve()
        rel = f.relative_to(site).as_posix()
        if rel in seen or f in lazy or not f.is_file():
            continue
        seen.append(rel)
        for ref in _IMPORT.findall(_strip_js_comments(f.read_text(encoding="utf-8"))):
            if not re.match(r"^[a-z]+:|^/", ref, re.I):
                queue.append(f.parent / ref)
    return seen


def write_preloads(site: Path, first_draw: dict[str, list[str]], lazy: set[Path]) -> int:
    """index.html asks, while it parses, for every module of its graph (modulepreload: fetched in
    parallel instead of one import level at a time) and for the snapshot answers every page's boot
    reads, so the build-time picture does not wait for the modules to evaluate. The default view's
    main run's answers go into its <template>, inert: engine/start.js adds them on the default view
    only (any query may run another scenario, and would download them for nothing)."""
    html_path = site / "index.html"
    html = html_path.read_text(encoding="utf-8")
    for mark in (PRELOAD_MARK, DEFAULT_VIEW_MARK):
        if mark not in html:
            raise BuildError(f"web/index.html has no {mark!r} (where the preloads go)")
    # lazy: the editor's 470 KB bundle loads when the lab opens, not at start-up
    modules = module_graph(site, _MODULE_SCRIPT.findall(html), lazy)

    def answers(files):
        # crossorigin: fetch() asks in cors mode; a preload serves only a request that matches it
        return [f'<link rel="preload" as="fetch" crossorigin href="snapshot/{f}">' for f in files]

    links = answers(["index.json", *first_draw["boot"]])
    links += [f'<link rel="modulepreload" href="{m}">' for m in modules]
    html = html.replace(PRELOAD_MARK, "\n".join(links))
    html = html.replace(DEFAULT_VIEW_MARK, "".join(answers(first_draw["main"])))
    html_path.write_text(html, encoding="utf-8")
    return len(modules)


def _hash_files(staging: Path) -> dict:
    return {p.relative_to(staging).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
            for p in sorted(staging.rglob("*")) if p.is_file()}


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
            stripped = _strip_js_comments(text)
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
