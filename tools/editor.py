"""The policy lab's code editor: CodeMirror 6 from npm, bundled by esbuild into one ESM file.

The npm packages (tools/editor/package.json, exact versions) are installed with `npm ci` from
tools/editor/package-lock.json, which checks every tarball against the sha512 integrity recorded
there; the lock file itself is pinned by its sha256 (pins.py), so a changed dependency tree is a
deliberate edit of both. The install and the bundle are cached outside git in the download cache,
keyed by that hash and the entry's; the bundle is checked against its pinned sha256 too (esbuild's
output is deterministic for the same inputs). Nothing is fetched from a CDN at run time: the page
imports the bundle from its own origin, and only when the lab is opened.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from . import common
from .common import ROOT, BuildError, log, run, sha256_file
from .pins import EDITOR_BUNDLE_SHA256, EDITOR_LOCK_SHA256

SOURCE = ROOT / "tools" / "editor"
BUNDLE = "vendor/codemirror.js"     # in the built site
LICENSES = "vendor/codemirror.LICENSES.txt"


def _installed(key: str) -> Path:
    """node_modules for package-lock.json, installed once into the cache by `npm ci`."""
    home = common.CACHE / "npm" / f"editor-{key}"
    if (home / "node_modules" / ".package-lock.json").exists():
        return home
    if not shutil.which("npm"):
        raise BuildError("npm is needed once to fetch the policy editor (CodeMirror 6, npm ci in "
                         f"{SOURCE}); install Node.js/npm")
    log("installing the policy editor's npm packages (CodeMirror 6, esbuild) with npm ci")
    home.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"editor-{key}-", dir=home.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(SOURCE / name, tmp / name)
        # --ignore-scripts: no install script runs; esbuild's native binary comes as its
        # platform package (an optional dependency with its own integrity in the lock)
        run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], quiet=True, cwd=tmp)
        shutil.rmtree(home, ignore_errors=True)
        os.replace(tmp, home)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return home


def bundle(out: Path) -> Path:
    """Write the editor bundle to out/vendor/codemirror.js (verified); returns its path."""
    lock_sha = sha256_file(SOURCE / "package-lock.json")
    if lock_sha != EDITOR_LOCK_SHA256:
        raise BuildError(f"tools/editor/package-lock.json: sha256 {lock_sha} != pinned "
                         f"{EDITOR_LOCK_SHA256} (tools/pins.py); pin the new lock deliberately")
    entry_sha = sha256_file(SOURCE / "entry.js")
    key = hashlib.sha256((lock_sha + entry_sha).encode()).hexdigest()[:16]
    cached = common.cached_file(common.CACHE / "npm" / f"codemirror-{key}.js")
    home = _installed(lock_sha[:16])
    if not cached.exists() or sha256_file(cached) != EDITOR_BUNDLE_SHA256:
        esbuild = home / "node_modules" / "esbuild" / "bin" / "esbuild"
        shutil.copy2(SOURCE / "entry.js", home / "entry.js")    # beside its node_modules
        tmp = cached.with_suffix(".tmp.js")
        run(["node", esbuild, "entry.js", "--bundle", "--format=esm", "--minify",
             "--legal-comments=eof", f"--outfile={tmp}"], quiet=True, cwd=home)
        os.replace(tmp, cached)
    got = sha256_file(cached)
    if got != EDITOR_BUNDLE_SHA256:
        raise BuildError(f"{cached}: the editor bundle's sha256 {got} != pinned "
                         f"{EDITOR_BUNDLE_SHA256} (tools/pins.py)")
    dest = out / BUNDLE
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(cached, dest)
    (out / LICENSES).write_text(_licenses(home / "node_modules"), encoding="utf-8")
    return dest


def _licenses(modules: Path) -> str:
    """The license of every package in the bundle (all but esbuild, which only builds it)."""
    parts = []
    for pkg in sorted(modules.glob("*/package.json")) + sorted(modules.glob("@*/*/package.json")):
        name = pkg.parent.relative_to(modules).as_posix()
        if name.startswith(("esbuild", "@esbuild/")):
            continue
        lic = next((f for f in sorted(pkg.parent.iterdir()) if f.name.upper().startswith("LICEN")), None)
        text = lic.read_text(encoding="utf-8") if lic else "(no license file in the package)"
        parts.append(f"== {name} ==\n{text.strip()}\n")
    return "The policy editor (vendor/codemirror.js) bundles these npm packages:\n\n" + "\n".join(parts)
