"""The command line as the tests run it: `python -m py_engine ...` in a child process, and the one
rule for a refusal (exit 2, one line on stderr that starts with "error: ", nothing on stdout)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args, env=None, timeout=600):
    env = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "py_engine", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


def one_line(p, *words):
    """The refusal's line, after checking it is one and names every word given."""
    assert p.returncode == 2, (p.returncode, p.stderr[-400:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr[-400:]
    for w in words:
        assert w in lines[0], lines[0]
    assert p.stdout == "", p.stdout[-400:]
    return lines[0]
