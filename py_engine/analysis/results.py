"""A finished run as a document: the metrics, and the requests, segments and passes log, either as
rows of JSON (`result`: the API, the CLI) or as typed columns (`columns`: the page's worker, where
they cross into JavaScript as typed arrays with no JSON encoding or parsing). Both come from the
same derivations below; layouts: sim/records.py.

    columns: doc["requests"] = {"$table": n, "columns": {name: array, ...}}   (records.REQUEST order)
             a fleet's replicas[i]["passes_log"] likewise (records.PASSES_LOG)

Result caps (so a huge run cannot produce a huge document): `requests` lists at most
RESULT_CAPS["requests"] records, `segments` at most RESULT_CAPS["segments"] and `passes_log` at most
RESULT_CAPS["passes_log"] runs; metrics always cover the whole run. result["truncated"] says which
lists were cut ({"requests": bool, "segments": bool, "passes_log": bool}).
"""

import gc
from array import array
from contextlib import contextmanager
from itertools import repeat
from operator import sub, truediv

from ..model.cost import TICKS, cost_unit
from ..sim import records
from ..workload.traces import credit
from . import metrics

RESULT_CAPS = {"requests": 100_000, "segments": 250_000, "passes_log": 250_000}
PHASE_CODE = {p: i for i, p in enumerate(records.PHASES)}
TIME_COLUMNS = ("cost", "start", "cost_last")     # passes log columns in ticks -> the cost unit


@contextmanager
def _no_gc():
    """Building a document allocates many containers and no reference cycles; the cyclic
    collector would walk the whole heap (a big run's records) again and again for nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _ms(ticks):
    """Ticks -> the cost unit (t / TICKS each, the loop in C)."""
    return list(map(truediv, ticks, repeat(TICKS)))


def request_columns(sim, n):
    """The first n requests' records as columns (layout records.REQUEST), Python numbers. Only
    the first n (at most RESULT_CAPS["requests"]) are read: slices, then one pass a column."""
    arrive, out = sim.arrive[:n], sim.out[:n]
    ft, dt, lt = sim.first_tick[:n], sim.done_tick[:n], sim.last_tick[:n]
    cols = {
        "id": list(range(n)), "arrive": _ms(arrive), "prompt": list(sim.prompt[:n]),
        "out": list(out), "admit": _ms(sim.admit_tick[:n]), "first_token": _ms(ft),
        "last_token": _ms(lt), "done": _ms(dt),
        "admit_pass": list(sim.admit_pass[:n]), "first_token_pass": list(sim.first_pass[:n]),
        "done_pass": list(sim.done_pass[:n]),
        "ttft": _ms(map(sub, ft, arrive)),
        "tpot": [0.0 if o == 1 else (t - f) / (o - 1) / TICKS for f, t, o in zip(ft, lt, out)],
        "e2e": _ms(map(sub, dt, arrive)),
        "preemptions": list(sim.preemptions[:n]), "cached_tokens": list(sim.cached_tokens[:n]),
        "replica": list(sim.replica[:n]) if hasattr(sim, "replica") else [0] * n,
    }
    assert list(cols) == records.names(records.REQUEST)
    return cols


def passes_log_columns(rec):
    """The passes log as columns (layout records.PASSES_LOG), times in the cost unit."""
    log = rec.log
    return {k: _ms(log[k]) if k in TIME_COLUMNS else list(log[k])
            for k in records.names(records.PASSES_LOG)}


def run_metrics(run, itl=True, keep=None):
    """A finished run's metrics: the core's (metrics.compute; keep: its SLO columns) and its
    policy's own counters."""
    m = metrics.compute(run.sim, run.scenario, itl, keep)
    m.update(run.policy.extra_metrics())
    m["goodput_per_gpu"] = m["goodput_rps"] / m["gpus"]
    return m


def result_meta(run, n, keep=None):
    """Everything of a result but its three tables: scheduler, scenario, credit, metrics,
    truncated, unit, kv_blocks. keep: a list to add (path, columns) to for each place the
    document scores the SLO (analysis/slo_memo.py)."""
    sim, scenario, rec = run.sim, run.scenario, run.sim.rec
    cols = None if keep is None else {}
    m = run_metrics(run, keep=cols)
    if keep is not None:
        keep.append((("metrics",), cols))
    return {
        "scheduler": scenario["scheduler"],
        "scenario": dict(scenario.doc),
        "credit": credit(scenario["workload"]),    # a production trace's attribution, or None
        "metrics": m,
        "truncated": {"requests": sim.n > n, "segments": rec.seg_truncated,
                      "passes_log": rec.log_truncated},
        "unit": cost_unit(scenario),
        "kv_blocks": run.policy.block_view(),   # the paged pool over the run (vllm), or None
    } | (run.extra_doc(keep) if hasattr(run, "extra_doc") else {})  # a fleet's: fleet/result.py


def result(run, keep=None):
    """A finished Run -> the result document: scheduler, scenario, requests (rows), metrics,
    segments, passes_log, truncated, unit (keep: result_meta's)."""
    sim = run.sim
    n = min(sim.n, RESULT_CAPS["requests"])
    with _no_gc():      # the metrics too: a fleet's 50,000 ITL lines made a full collection
        doc = result_meta(run, n, keep)
        cols = request_columns(sim, n)
        names = list(cols)
        doc["requests"] = list(map(dict, map(zip, repeat(names), zip(*cols.values()))))
        del cols
        if hasattr(run, "request_extras"):      # a disaggregated fleet's (fleet/result.py)
            for k, col in run.request_extras(n).items():
                for row, v in zip(doc["requests"], col):
                    row[k] = v
        doc["segments"] = list(map(list, sim.rec.segments))
        doc["passes_log"] = passes_log_columns(sim.rec)
    return doc


def _table(n, columns):
    return {"$table": n, "columns": columns}


def columns(run, keep=None):
    """A finished Run -> the same document with typed columns (see the module docstring)."""
    sim = run.sim
    n = min(sim.n, RESULT_CAPS["requests"])
    with _no_gc():      # the metrics too: a fleet's 50,000 ITL lines made a full collection
        doc = result_meta(run, n, keep)
        cols = request_columns(sim, n)
        if hasattr(run, "request_extras"):      # a disaggregated fleet's, one column a part
            for k, col in run.request_extras(n).items():
                if col and isinstance(col[0], dict):
                    for part in col[0]:
                        cols["%s.%s" % (k, part)] = [v[part] for v in col]
                else:
                    cols[k] = col
        doc["requests"] = _table(n, {k: array("d", v) for k, v in cols.items()})
        del cols
        segs = sim.rec.segments
        slot, rid, phase, first, last = (list(c) for c in zip(*segs)) if segs else ([],) * 5
        doc["segments"] = _table(len(segs), {
            "slot": array("d", slot), "request": array("d", rid),
            "phase": array("B", map(PHASE_CODE.__getitem__, phase)),
            "first_pass": array("d", first), "last_pass": array("d", last)})
        doc["passes_log"] = _log_table(passes_log_columns(sim.rec))
        for rep in doc.get("replicas") or ():        # a fleet's (fleet/result.py)
            rep["passes_log"] = _log_table(rep["passes_log"])
    return doc


def _log_table(log):
    return _table(len(log["count"]), {k: array("d", v) for k, v in log.items()})
