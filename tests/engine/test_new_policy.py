"""A new scheduler is one new file: a copy of the package gets policies/shortest_prompt.py, and
nothing else changes; the scheduler is then valid in scenarios, listed in the schema, and runs
from the command line with the decisions it makes, checked against an independent loop."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

POLICY = '''"""Shortest prompt first: a free slot takes the arrived request with the shortest prompt."""

from .base import Policy, register


@register("shortest-prompt")
class ShortestPrompt(Policy):
    label = "Shortest prompt first"
    summary = "a free slot takes the waiting request with the shortest prompt"
    order = 50

    def schedule(self):
        sim = self.sim
        while sim.free and sim.waiting:
            rid = min(sim.waiting, key=lambda r: (sim.prompt[r], sim.arrive[r], r))
            sim.waiting.remove(rid)
            sim.admit(rid, self.chunk)
'''

ITEMS = [{"arrive": 0, "prompt": p, "out": o} for p, o in
         [(900, 5), (30, 40), (500, 3), (30, 2), (70, 9), (10, 1), (400, 20)]]


def expected_admit_order(items, slots):
    """An independent loop: one slot, burst arrivals, so each admission takes the shortest
    prompt left (ties by id)."""
    assert slots == 1
    return [i for i, _ in sorted(enumerate(items), key=lambda x: (x[1]["prompt"], x[0]))]


def test_a_new_policy_is_one_file(tmp_path):
    pkg = tmp_path / "py_engine"
    shutil.copytree(ROOT / "py_engine", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "policies" / "shortest_prompt.py").write_text(POLICY)     # the one new file

    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"scheduler": "shortest-prompt", "workload": {"items": ITEMS},
                                    "server": {"slots": 1, "chunk": 4096}}))
    run = subprocess.run([sys.executable, "-m", "py_engine", "run", "--scenario", str(scenario),
                          "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    reqs = json.loads(run.stdout)["requests"]
    order = [r["id"] for r in sorted(reqs, key=lambda r: r["admit"])]
    assert order == expected_admit_order(ITEMS, 1)
    assert all(r["done"] >= r["first_token"] >= r["admit"] for r in reqs)

    code = ("import json; from py_engine import schema; "
            "print(json.dumps([s['name'] for s in schema()['schedulers']]))")
    listed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert "shortest-prompt" in json.loads(listed.stdout)
    # what ran is the package as it is plus that one file: nothing else was edited or written
    files = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*")  # noqa: E731
                          if p.is_file() and "__pycache__" not in p.parts}
    assert files(pkg) == {**files(ROOT / "py_engine"),
                          Path("policies/shortest_prompt.py"): POLICY.encode()}
