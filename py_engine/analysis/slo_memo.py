"""Sweep points asked again with only another SLO are scored, not simulated again.

The page sweeps point by point and asks every point again when any control changes; an SLO limit
changes no run, only which of its requests meet it. A point keeps what its runs' SLO metrics are
made of (metrics.compute(keep=...): four 8-byte columns a request), so a point whose scenario
differs from one run before only in `slo` is scored from them: the same numbers, to the byte
(tests/engine/test_slo_memo.py). Bounded: the least recently asked points go first.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict

from ..policies import CUSTOM
from .metrics import slo_columns_scored

BUDGET = 2_000_000      # kept values across the remembered points (8 bytes each: 16 MB)
COLUMNS = 4             # kept columns a request: TTFT, E2E, last - first, out - 1


def _copy(point):
    """A sweep point, its metrics' nested dicts too: what a caller changes (sweep_result drops
    "rank"; get() replaces the SLO's metrics) never reaches the remembered one."""
    return copy.deepcopy(point)


class PointMemo:
    def __init__(self, budget: int = BUDGET):
        self.points: OrderedDict[str, tuple[dict, dict]] = OrderedDict()
        self.budget, self.size = budget, 0

    @staticmethod
    def key(scenario, schedulers, work_cap) -> str | None:
        """What a point's runs depend on: the scenario but its SLO, the schedulers, the work cap.
        None: not remembered (the reader's own policy may not give the same run twice)."""
        if CUSTOM in schedulers or scenario["scheduler"] == CUSTOM:
            return None
        doc = {k: v for k, v in scenario.doc.items() if k != "slo"}
        text = json.dumps([doc, list(schedulers), work_cap], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()   # (a trace file's items: megabytes)

    def get(self, key: str | None, slo: dict) -> dict | None:
        """The remembered point scored under `slo`, or None."""
        hit = self.points.get(key) if key is not None else None
        if hit is None:
            return None
        self.points.move_to_end(key)
        point, kept = hit
        out = _copy(point)
        for name, cols in kept.items():
            out[name].update(slo_columns_scored(cols, slo))
        return out

    def put(self, key: str | None, point: dict, kept: dict) -> None:
        """Remember a point and, per scheduler, what compute(keep=...) kept of its run."""
        if key is None or any(c.get("whole") is False for c in kept.values()):
            return
        size = sum(COLUMNS * c["n"] for c in kept.values())
        if size > self.budget:
            return
        old = self.points.pop(key, None)
        if old is not None:
            self.size -= sum(COLUMNS * c["n"] for c in old[1].values())
        while self.points and self.size + size > self.budget:
            _, (_, gone) = self.points.popitem(last=False)
            self.size -= sum(COLUMNS * c["n"] for c in gone.values())
        self.points[key] = (_copy(point), kept)
        self.size += size
