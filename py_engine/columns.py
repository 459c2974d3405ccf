"""The result as typed columns, for the page's worker: the same numbers as api.result(), but the
request records, the segments and the passes log are columns (array('d'), phases as array('B')
codes into records.PHASES) instead of lists of JSON objects, so they cross into JavaScript as typed
arrays with no JSON encoding or parsing. Layouts: records.py.

    doc["requests"] = {"$table": n, "columns": {name: array, ...}}     (records.REQUEST order)
"""

from array import array

from . import records
from .api import RESULT_CAPS, result_meta
from .cost import TICKS

PHASE_CODE = {p: i for i, p in enumerate(records.PHASES)}


def _table(n, columns):
    return {"$table": n, "columns": columns}


def _requests(sim, n):
    arrive, prompt, out = sim.arrive[:n], sim.prompt[:n], sim.out[:n]
    at, ft, dt, lt = sim.admit_tick[:n], sim.first_tick[:n], sim.done_tick[:n], sim.last_tick[:n]
    ms = lambda ticks: array("d", [t / TICKS for t in ticks])  # noqa: E731
    cols = {
        "id": array("d", range(n)), "arrive": ms(arrive), "prompt": array("d", prompt),
        "out": array("d", out), "admit": ms(at), "first_token": ms(ft), "last_token": ms(lt),
        "done": ms(dt),
        "admit_pass": array("d", sim.admit_pass[:n]),
        "first_token_pass": array("d", sim.first_pass[:n]),
        "done_pass": array("d", sim.done_pass[:n]),
        "ttft": array("d", [(f - a) / TICKS for f, a in zip(ft, arrive)]),
        "tpot": array("d", [0.0 if o == 1 else (t - f) / (o - 1) / TICKS
                            for f, t, o in zip(ft, lt, out)]),
        "e2e": array("d", [(d - a) / TICKS for d, a in zip(dt, arrive)]),
        "preemptions": array("d", sim.preemptions[:n]),
        "cached_tokens": array("d", sim.cached_tokens[:n]),
    }
    assert list(cols) == records.names(records.REQUEST)
    return _table(n, cols)


def _segments(segs):
    slot, rid, phase, first, last = (list(c) for c in zip(*segs)) if segs else ([],) * 5
    return _table(len(segs), {"slot": array("d", slot), "request": array("d", rid),
                              "phase": array("B", [PHASE_CODE[p] for p in phase]),
                              "first_pass": array("d", first), "last_pass": array("d", last)})


def _passes_log(rec):
    log = rec.log
    cols = {k: array("d", v) for k, v in log.items()}
    for k in ("cost", "start", "cost_last"):
        cols[k] = array("d", [c / TICKS for c in log[k]])
    return _table(len(log["count"]), {k: cols[k] for k in records.names(records.PASSES_LOG)})


def result(run):
    """A finished Run -> the result document with typed columns (see the module docstring)."""
    sim = run.sim
    n = min(sim.n, RESULT_CAPS["requests"])
    doc = result_meta(run, n)
    doc["requests"] = _requests(sim, n)
    doc["segments"] = _segments(sim.rec.segments)
    doc["passes_log"] = _passes_log(sim.rec)
    return doc
