"""The build's virtualenv (.venv/): created on first use, holding the pinned requirements."""

from __future__ import annotations

import sys
from pathlib import Path

from . import common
from .common import log, run


def venv_python() -> Path:
    return common.VENV / "bin" / "python"


def ensure_venv(requirements: list[str]) -> Path:
    """Create .venv if needed and install the pinned requirements (skipped when already there)."""
    py = venv_python()
    if not py.exists():
        log(f"creating virtualenv {common.VENV}")
        run([sys.executable, "-m", "venv", common.VENV])
    stamp = common.VENV / "cb-explorer-requirements.txt"
    have = set(stamp.read_text().split()) if stamp.exists() else set()
    missing = [r for r in requirements if r not in have]
    if missing:
        log(f"installing into {common.VENV.name}: {' '.join(missing)}")
        run([py, "-m", "pip", "install", "--disable-pip-version-check", *missing], quiet=True)
        stamp.write_text("\n".join(sorted(have | set(missing))) + "\n")
    return py
