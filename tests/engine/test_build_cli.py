"""build.py's own bad input and broken caches: one line, a non-zero exit, never a traceback
(finding 11 of the reliability issue)."""

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tools import common
from tools.pins import PYODIDE_PACKAGES, PYODIDE_VERSION

ROOT = Path(__file__).resolve().parents[2]


def _build(*args, cache=None):
    env = dict(os.environ)
    if cache is not None:
        env["CB_EXPLORER_CACHE"] = str(cache)
    return subprocess.run([sys.executable, str(ROOT / "build.py"), *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def _one_line(p, code, *words):
    assert p.returncode == code, (p.returncode, p.stderr[-600:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in p.stderr, p.stderr[-600:]
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("port", ["99999", "-5", "http"])
def test_serve_with_a_bad_port(port):
    _one_line(_build("serve", "--no-build", "--port", port), 2, "--port", "0 to 65535")


def test_a_cache_that_is_a_file(tmp_path):
    f = tmp_path / "cache"
    f.write_text("")
    _one_line(_build(cache=f), 1, str(f), "not a directory")
    _one_line(_build("test", "-k", "nothing", cache=f), 1, "not a directory")


def test_a_cached_tarball_replaced_by_a_directory(tmp_path):
    (tmp_path / "npm" / f"pyodide-{PYODIDE_VERSION}.tgz").mkdir(parents=True)
    _one_line(_build(cache=tmp_path), 1, f"pyodide-{PYODIDE_VERSION}.tgz", "not a file")


def test_a_cached_wheel_replaced_by_a_directory(tmp_path):
    tarball = common.CACHE / "npm" / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tarball.is_file():
        pytest.skip("needs the cached Pyodide tarball (python3 build.py fetches it)")
    (tmp_path / "npm").mkdir()
    (tmp_path / "npm" / tarball.name).symlink_to(tarball)
    with tarfile.open(tarball, "r:gz") as tar:
        lock = json.load(tar.extractfile("package/pyodide-lock.json"))
    for name in PYODIDE_PACKAGES:
        (tmp_path / f"pyodide-{PYODIDE_VERSION}-wheels" / lock["packages"][name]["file_name"]).mkdir(
            parents=True)
    p = _build(cache=tmp_path)
    _one_line(p, 1, ".whl", "not a file")
