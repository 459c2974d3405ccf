"""Debian's Chromium for the browser tests, measurements and screenshots (Playwright's own browser
download does not work on these machines): where it is, how to start it, how to install it."""

from __future__ import annotations

import os
from pathlib import Path

from .common import BuildError, log, run

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def ensure_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    if os.geteuid() != 0:
        raise BuildError(f"browser tests need Debian's Chromium at {CHROMIUM}; as root run:\n"
                         "  apt-get update && apt-get install -y chromium")
    log("installing Debian's chromium (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-q"], env=env, quiet=True)
    run(["apt-get", "install", "-y", "-q", "chromium"], env=env, quiet=True)
    if not Path(CHROMIUM).exists():
        raise BuildError(f"apt-get install chromium did not provide {CHROMIUM}")


def launch(playwright):
    """A headless Chromium browser from a playwright.sync_api instance."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
