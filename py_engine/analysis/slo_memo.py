"""Runs asked again with only another SLO are scored, not simulated again.

An SLO limit changes no run, only which of its requests meet it. The page asks everything again
when any control changes: the sweep points, the main comparison, the fleet's run and every
router's. So what a call answered is remembered with what its runs' SLO metrics are made of
(metrics.compute(keep=...): four 8-byte columns a request, at each place the document scores the
SLO), and a call whose scenario differs from one answered before only in `slo` is answered from
them: the same document, to the byte (tests/engine/test_slo_memo.py, test_slo_rescore.py).

What depends on the SLO in a remembered document, and nothing else is changed:
    places   (path, columns): the metrics scored there; each place gets those of
             metrics.slo_columns_scored it shows (a fleet's replicas: goodput_rps and
             slo_attainment), and goodput_per_gpu = goodput_rps / gpus where it has one
    echoes   paths of the scenario a document echoes (result["scenario"]): the new scenario
A place whose numbers the columns do not give back under the run's own SLO (a policy's counters
overriding one) makes the document not remembered: that call is always run.

A call whose runs were refused (a ScenarioError from the run: the work cap, a livelock) is
answered with the same refusal under another SLO (REFUSALS of them, the least recently asked go).

Bounded: `budget` values in all (a place's columns, 4 a request, and every value of the remembered
documents: a table's cells, a list's items); the least recently asked go first, and one bigger
than the whole budget is not kept. The reader's own policy is never remembered (it may read the
SLO, or not give the same run twice).
"""

from __future__ import annotations

import copy
import hashlib
import json
from array import array
from collections import OrderedDict

from ..policies import CUSTOM
from .metrics import slo_columns_scored

BUDGET = 2_000_000      # the sweep points': kept values (8 bytes each: 16 MB)
# the main comparison's and the fleet's documents with their columns (64 MB as the page's worker
# keeps them: typed columns). The Mooncake fleet's 8 router runs (12,031 requests, 8 replicas) and
# a comparison of 10,000 Azure requests take 7.4 M (bench/slo.py); a rows document (the API's)
# takes more bytes a value
RUN_BUDGET = 8_000_000
COLUMNS = 4             # kept columns a request: TTFT, E2E, last - first, out - 1
REFUSALS = 32           # refused calls remembered (a message each)
NESTED = frozenset((dict, list, tuple, array))


def copied(x):
    """(a copy of a document, the values it holds): dicts, lists and tuples copied all the way
    down, typed columns copied whole; what a caller changes never reaches the remembered one."""
    t = type(x)
    if t is array:
        return x[:], len(x)
    items = x.values() if t is dict else x
    n = len(items)
    if not any(map(NESTED.__contains__, map(type, items))):     # flat: one copy in C
        return (dict(x) if t is dict else t(x)), n
    if t is dict:
        out = dict(x)
        for k, v in out.items():
            if type(v) in NESTED:
                out[k], m = copied(v)
                n += m
        return out, n
    out = list(x)
    for i, v in enumerate(out):
        if type(v) in NESTED:
            out[i], m = copied(v)
            n += m
    return (out if t is list else t(out)), n


def _at(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def _stubbed(doc, path):
    """doc with the scenario it echoes at path cut to its scheduler (the dicts on the way copied,
    one level each): a trace file's items are not copied nor counted."""
    top = d = dict(doc)
    for p in path[:-1]:
        d[p] = dict(d[p])
        d = d[p]
    d[path[-1]] = {"scheduler": d[path[-1]]["scheduler"]}
    return top


def _score(target, cols, slo):
    """The SLO's metrics a place shows, scored from its columns under slo."""
    got = {k: v for k, v in slo_columns_scored(cols, slo).items() if k in target}
    if "goodput_per_gpu" in target:
        got["goodput_per_gpu"] = got["goodput_rps"] / target["gpus"]
    return got


class SloMemo:
    def __init__(self, budget: int = BUDGET):
        self.points: OrderedDict[str, tuple] = OrderedDict()    # key -> (doc, places, echoes, size)
        self.budget, self.size = budget, 0
        # key -> the ScenarioError its run ended in (the work cap, a livelock): no SLO changes it,
        # so the page's fleet link does not wait ~11 s for the same refusal at every SLO edit
        self.refusals: OrderedDict[str, Exception] = OrderedDict()

    def refused(self, key: str | None):
        """The refusal a call's runs ended in before (a copy, to raise), or None."""
        err = self.refusals.get(key) if key is not None else None
        if err is None:
            return None
        self.refusals.move_to_end(key)
        return copy.copy(err)

    def refuse(self, key: str | None, err: Exception) -> None:
        """Remember that the call's runs were refused with `err` (REFUSALS at most; none when
        the memo remembers nothing)."""
        if key is None or self.budget <= 0:
            return
        self.refusals[key] = copy.copy(err)
        self.refusals.move_to_end(key)
        while len(self.refusals) > REFUSALS:
            self.refusals.popitem(last=False)

    @staticmethod
    def key(scenario, schedulers, work_cap, kind="point", caps=None) -> str | None:
        """What a call's runs depend on: the scenario but its SLO, the schedulers, the work cap,
        what the call answers (kind) and the result caps. None: not remembered (the reader's own
        policy)."""
        if kind is None or CUSTOM in schedulers or scenario["scheduler"] == CUSTOM:
            return None
        doc = {k: v for k, v in scenario.doc.items() if k != "slo"}
        text = json.dumps([doc, list(schedulers), work_cap, kind, caps], sort_keys=True,
                          separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()   # (a trace file's items: megabytes)

    def get(self, key: str | None, scenario) -> dict | None:
        """The remembered document scored under the scenario's SLO (and echoing the scenario), or
        None."""
        hit = self.points.get(key) if key is not None else None
        if hit is None:
            return None
        self.points.move_to_end(key)
        doc, places, echoes, _ = hit
        out = copied(doc)[0]
        slo = scenario["slo"]
        for path, cols in places:
            target = _at(out, path)
            target.update(_score(target, cols, slo))
        for path in echoes:
            parent = _at(out, path[:-1])
            parent[path[-1]] = dict(scenario.doc, scheduler=parent[path[-1]]["scheduler"])
        return out

    def put(self, key: str | None, doc: dict, places, echoes=(), scenario=None) -> None:
        """Remember a document and, per place (path, cols), what compute(keep=...) kept of its
        run; echoes: where it echoes `scenario` (the one it was run for)."""
        if key is None or any(c.get("whole") is False for _, c in places):
            return
        for path, cols in places:       # what the columns give back is what the run gave
            target = _at(doc, path)
            if scenario is None or any(target[k] != v for k, v in
                                       _score(target, cols, scenario["slo"]).items()):
                return
        for path in echoes:
            if _at(doc, path) != dict(scenario.doc, scheduler=_at(doc, path)["scheduler"]):
                return
        size = sum(COLUMNS * c["n"] for _, c in places)
        if size > self.budget:
            return
        for path in echoes:         # not kept: get() echoes the scenario asked
            doc = _stubbed(doc, path)
        kept, cells = copied(doc)
        size += cells
        if size > self.budget:
            return
        self.drop(key)
        while self.points and self.size + size > self.budget:
            self.size -= self.points.popitem(last=False)[1][3]
        self.points[key] = (kept, list(places), list(echoes), size)
        self.size += size

    def drop(self, key):
        old = self.points.pop(key, None)
        if old is not None:
            self.size -= old[3]
