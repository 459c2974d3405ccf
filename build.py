#!/usr/bin/env python3
"""Build, serve, test and measure the Continuous Batching Explorer: the one entry point.

    python3 build.py [--pyodide-cdn URL]   -> dist/, a self-contained static site
    python3 build.py serve [--port N]      -> build, then serve dist/ on 127.0.0.1
    python3 build.py test [pytest args]    -> venv + Chromium + build + the whole suite (pytest and
                                              the page's JS unit tests under Node)
    python3 build.py measure [--runs N]    -> build, then time cold and warm loads in Chromium
    python3 build.py screenshot            -> build, then regenerate web/img/screenshot.png

Standard library only (it runs before any virtualenv exists); the work is done by the modules in
tools/ (pins, venv, Pyodide, site, snapshot, server, browser, measure, screenshot). Steps that need
the venv (the engine's numpy, Playwright) run there as `python -m tools.<module>`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from tools import common
from tools.browser import ensure_chromium
from tools.common import ROOT, BuildError, log
from tools.pins import BUILD_REQUIREMENTS, PYODIDE_VERSION, TEST_REQUIREMENTS
from tools.server import serve
from tools.site import build
from tools.venv import ensure_venv


def test(pytest_args: list[str]) -> int:
    py = ensure_venv(BUILD_REQUIREMENTS + TEST_REQUIREMENTS)
    ensure_chromium()
    build()
    if not pytest_args:   # the whole suite: the page's pure JS modules under Node first
        log("running node --test tests/js/")
        env = {**os.environ, "PYTHON": str(py)}   # the JS tests read the schema from the engine
        if subprocess.call(["node", "--test", "tests/js/"], cwd=ROOT, env=env) != 0:
            log("JS unit tests FAILED")
            return 1
    cmd = [str(py), "-m", "pytest", *(pytest_args or [])]
    log("running " + " ".join(cmd[1:]))
    rc = subprocess.call(cmd, cwd=ROOT)
    log("tests passed" if rc == 0 else f"tests FAILED (pytest exit code {rc})")
    return rc


def in_venv(module: str, *args: str) -> int:
    """Build, then run tools.<module> inside the venv (it needs Playwright and Chromium)."""
    py = ensure_venv(BUILD_REQUIREMENTS + TEST_REQUIREMENTS)
    ensure_chromium()
    build()
    return subprocess.call([str(py), "-m", f"tools.{module}", *args], cwd=ROOT)


class _Parser(argparse.ArgumentParser):
    def error(self, message):   # one line, exit 2 (argparse's own adds the usage)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def _port(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be an integer from 0 to 65535 (0 = any free port)")
    return n


def _fail(e: Exception) -> int:
    """One line for any failure of the build's own steps or of the file system under it."""
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        e = f"{where}{e.strerror or e}"
    print(f"build.py: error: {e}", file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    if argv[:1] == ["test"] and not {"-h", "--help"} & set(argv[1:2]):
        # Everything after `test` goes to pytest as is (argparse would reject a leading -x).
        try:
            common.check_cache()
            return test(argv[2:] if argv[1:2] == ["--"] else argv[1:])
        except (BuildError, OSError) as e:
            return _fail(e)
    ap = _Parser(prog="build.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)
    ap.add_argument("--pyodide-cdn", metavar="URL",
                    help="load Pyodide from this URL (e.g. https://cdn.jsdelivr.net/pyodide/v"
                         f"{PYODIDE_VERSION}/full/) instead of shipping it; the page's CSP must allow it")
    sp = sub.add_parser("serve", help="build, then serve dist/ on 127.0.0.1")
    sp.add_argument("--port", type=_port, default=8000, help="port (0 = any free port; default 8000)")
    sp.add_argument("--no-build", action="store_true", help="serve the existing dist/")
    mp = sub.add_parser("measure", help="build, then time cold loads in headless Chromium")
    mp.add_argument("--runs", type=int, default=10, help="cold loads, each after a bare boot")
    mp.add_argument("--bench-beside", action="store_true",
                    help="loop `python -m py_engine bench` in another process meanwhile")
    sub.add_parser("screenshot", help="build, then write web/img/screenshot.png (for the README)")
    sub.add_parser("test", help="venv + Chromium + build + the whole test suite")
    args = ap.parse_args(argv)
    try:
        common.check_cache()
        if args.command == "measure":
            return in_venv("measure", "--runs", str(args.runs),
                           *(["--bench-beside"] if args.bench_beside else []))
        if args.command == "screenshot":
            return in_venv("screenshot")
        if not (args.command == "serve" and args.no_build):
            build(pyodide_cdn=args.pyodide_cdn)
        if args.command == "serve":
            serve(common.DIST, args.port)
        return 0
    except (BuildError, OSError) as e:
        return _fail(e)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
