"""Paths, the build error, logging, hashing and running commands (standard library only)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"
DIST = ROOT / "dist"
VENV = Path(os.environ.get("CB_EXPLORER_VENV", ROOT / ".venv"))
# Downloads are cached outside git (and outside the repository), verified by hash before use.
CACHE = Path(os.environ.get("CB_EXPLORER_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cb-explorer")


class BuildError(Exception):
    """A build step failed; the message says which and why."""


def cached_file(path: Path) -> Path:
    """A path in the download cache that, if present, must be a file."""
    if path.exists() and not path.is_file():
        raise BuildError(f"{path}: a cached download, but not a file; delete it and rebuild")
    return path


def check_cache() -> None:
    """The download cache must be a directory (or creatable as one)."""
    if CACHE.exists() and not CACHE.is_dir():
        raise BuildError(f"the download cache {CACHE} is not a directory "
                         "(set CB_EXPLORER_CACHE to a directory, or remove that file)")


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd: list, quiet: bool = False, **kw) -> subprocess.CompletedProcess:
    """Run a command; quiet=True hides its output unless it fails."""
    if quiet:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.STDOUT)
        kw.setdefault("text", True)
    try:
        return subprocess.run([str(c) for c in cmd], check=True, **kw)
    except FileNotFoundError as e:
        raise BuildError(f"command not found: {cmd[0]} ({e})") from None
    except subprocess.CalledProcessError as e:
        if quiet and e.stdout:
            sys.stderr.write(e.stdout if isinstance(e.stdout, str) else e.stdout.decode())
        if e.stderr and kw.get("stderr") is subprocess.PIPE:
            sys.stderr.write(e.stderr if isinstance(e.stderr, str) else e.stderr.decode())
        raise BuildError(f"command failed with exit code {e.returncode}: {' '.join(map(str, cmd))}") \
            from None
