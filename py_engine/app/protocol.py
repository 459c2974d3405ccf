"""The worker protocol: JSON-safe request in, JSON-safe response out, never raises.

request  {"method": "simulate"|"compare"|"sweep"|"sizing"|"stall"|"check"|"schema"|"presets"
request  {"method": "simulate"|"compare"|"sweep"|"sizing"|"stall"|"check"|"schema"|"presets"
          |"story"|"kv"|"calibrate"|"serve_flags"|"parse_trace"|"examples"|"papers"|"plan_candidates"
          |"plan_point"|"plan_verdict", "params": {...}}
response {"ok": true, "result": ...} or
         {"ok": false, "error": {"type": "ScenarioError"|"EngineError", "field", "value",
                                 "allowed", "message"}}
params: simulate {"scenario"}, compare {"scenario", "schedulers"?}, sweep {"scenario", "param",
"values", "schedulers"?}, sizing {"scenario", "param", "points", "schedulers"?} (api.sizing: the
verdict of a sweep the page ran point by point), stall {"scenario"} (figures.stall), check
{"quick"?: bool}, serve_flags {"scenario"} (serve_flags.py: {"command": "vllm serve ..."}), schema {},
presets {}, story {} (presets.STORY), kv {..., "fit"?} (py_engine.model.kv; a preset model on a
preset GPU adds "roofline": its pass times under the fit, and serve_defaults, vllm serve's batch
defaults there as scenario fields: serve_flags.serve_defaults), calibrate {"csv"},
parse_trace {"name", "text", "max_items"?} (scenario/tracefile.py: a trace file's requests),
examples {} (policies/examples: the reference policies' sources, for the policy lab), papers
{"ids"?: [check id, ...]} (app/papers/: published numbers recomputed, one check a slice).
The planner (app/plan.py) in three steps, so the page runs its candidates one at a time (progress,
cancel): plan_candidates {"scenario", "gpus", "capacity"?} -> {"gpus", "candidates"} (with
capacity, refused at once where there is no load to search); plan_point {"scenario",
"gpus", "candidate", "capacity"?} (one of those) -> its row; plan_verdict {"scenario", "gpus", "rows",
"capacity"?} (every candidate's row, in candidate order) -> what `python -m py_engine plan --json`
prints (with capacity: true, `plan --capacity --json`: each candidate at its highest load meeting
the SLO).
Floats that are not finite never leave: they become null.

Three doors to the same answers:
- `handle(request)`: the dict API.
- `handle_json(text)`: JSON text on both sides.
- `Job(text, slice_s)`: the Web Worker's door. `job.step()` works for at most about slice_s
  seconds and returns None while the work goes on, then (json_text, buffers): the response with
  every table of a result as typed columns (analysis/results.py) whose bytes are in `buffers`, each table
  column replaced by {"$buf": i, "type": "f64" | "u8"}. Between steps the worker reads its
  messages, so a job can be cancelled (it is simply not stepped again).
  `job.progress()` (added later; a caller may ignore it): None until the work has said how far it
  is, then JSON text {"done", "total", "unit"}: how much is finished, read from the simulator's
  state after the last step (sim/progress.py). unit "requests": simulate and plan_point count the
  run's requests, compare (and a sweep of one value) lanes x requests, each lane after the other;
  "points": a sweep of several values; "checks": check, papers. done never goes back, and a
  finished run reports done == total before its answer. Methods without long work say nothing.
  The worker host sends it to the page as {kind: "progress", id, done, total, unit}
  (web/engine/host.js); a page that does not know that kind ignores it.
"""

import json
import math
from array import array

from .. import api
from ..analysis import calibrate, results
from ..model import kv, roofline
from ..verify import check
from ..errors import ScenarioError, show
from ..policies import examples
from ..scenario import tracefile
from ..scenario.presets import presets, story
from . import figures, papers, plan
from .serve_flags import serve_defaults, serve_flags
from .schema import schema



def _check(params, slice_s, fmt):
    quick = params.get("quick", True)
    if not isinstance(quick, bool):
        raise ScenarioError("params.quick", quick, "true or false")
    return (yield from check.run_steps(quick=quick))


def _now(fn):
    """A method with no long work: a steps generator that returns fn(params) at once."""
    def steps(params, slice_s, fmt):
        return fn(params)
        yield  # unreachable: makes this a generator
    return steps


def _kv(params):
    """The KV calculator; for a preset model on a preset GPU also what its passes cost under the
    roofline (the deployment panel)."""
    params = dict(params)
    fit = params.pop("fit", roofline.DEFAULT_FIT)      # which fit the pass times take
    r = kv.kv_from_params(params)
    if fit not in roofline.FIT_CHOICES:
        raise ScenarioError("server.cost.fit", fit, "one of " + ", ".join(roofline.FIT_CHOICES))
    if r.get("model") and r.get("gpu") and r.get("fits"):
        try:
            r["roofline"] = roofline.examples(r["model"], r["gpu"], r["gpus"], r["dtype"],
                                              r["kv_dtype"], fit=fit)
            # what "Run on this deployment" sets besides the cost: vllm serve's defaults there
            r["roofline"]["serve_defaults"] = serve_defaults(r["gpu"])
        except ScenarioError as e:          # e.g. fp8 on a GPU without it: no pass times
            r["roofline"] = {"error": e.message}
    return r


def _plan_candidates(params):
    gpus = params.get("gpus")
    return {"gpus": gpus, "candidates": plan.setup(params.get("scenario"), gpus,
                                                   _capacity(params))[1]}


def _plan_point(params, slice_s, fmt):
    base, cands = plan.setup(params.get("scenario"), params.get("gpus"))
    cand = params.get("candidate")
    if cand not in cands:
        raise ScenarioError("params.candidate", None, "one of the plan's candidates "
                            "(plan_candidates)")
    steps = plan.capacity_point_steps if _capacity(params) else plan.point_steps
    return (yield from steps(base, cand, slice_s=slice_s))


def _capacity(params):
    """The planner's `capacity` flag (optional): rank at each candidate's capacity."""
    v = params.get("capacity", False)
    if not isinstance(v, bool):
        raise ScenarioError("params.capacity", v, "true or false (rank at each candidate's "
                            "capacity, the highest load meeting the SLO)")
    return v


ROW_KEYS = ("kind", "gpus", "goodput_per_gpu", "meets_slo", "slo_attainment", "itl_p99",
            "failing")


def _plan_verdict(params):
    gpus = params.get("gpus")
    cands = plan.setup(params.get("scenario"), gpus)[1]
    rows = params.get("rows")
    if (not isinstance(rows, list) or len(rows) != len(cands)
            or any(not isinstance(r, dict) or any(k not in r for k in ROW_KEYS) for r in rows)):
        raise ScenarioError("params.rows", None, "the %d candidates' rows (plan_point), in "
                            "candidate order" % len(cands))
    return plan.document(gpus, rows, _capacity(params))


def _calibrate(params):
    return calibrate.fit(params.get("csv"))


# Methods that need a Pyodide package beyond the engine (the page's worker loads it first).
PACKAGES = {"calibrate": ["numpy"]}

# method -> steps(params, slice_s, fmt): a generator returning the method's result
METHODS = {
    "simulate": lambda p, s, fmt: api.simulate_steps(p.get("scenario"), s, fmt),
    "compare": lambda p, s, fmt: api.compare_steps(p.get("scenario"),
                                                   p.get("schedulers") or None,
                                                   s, fmt),
    "sweep": lambda p, s, fmt: api.sweep_steps(p.get("scenario"), p.get("param", "skew"),
                                               p.get("values", (0.0, 0.3, 0.6)),
                                               p.get("schedulers") or None, s),
    "check": _check,
    "stall": _now(lambda p: figures.stall(p.get("scenario"))),
    "serve_flags": _now(lambda p: serve_flags(p.get("scenario"))),
    "sizing": _now(lambda p: api.sizing(p.get("scenario"), p.get("param", "slots"),
                                        p.get("points"), p.get("schedulers") or None)),
    "schema": _now(lambda p: schema()),
    "presets": _now(lambda p: presets()),
    "story": _now(lambda p: story()),
    "kv": _now(_kv),
    "calibrate": _now(_calibrate),
    "parse_trace": _now(lambda p: tracefile.parse(p.get("name"), p.get("text"),
                                                  p.get("max_items"))),
    "examples": _now(lambda p: examples.sources()),
    "papers": lambda p, s, fmt: papers.run_steps(p.get("ids")),
    "plan_candidates": _now(_plan_candidates),
    "plan_point": _plan_point,
    "plan_verdict": _now(_plan_verdict),
}
PARAMS = {"simulate": {"scenario"}, "compare": {"scenario", "schedulers"},
          "sweep": {"scenario", "param", "values", "schedulers"}, "check": {"quick"},
          "stall": {"scenario"}, "serve_flags": {"scenario"}, "sizing": {"scenario", "param", "points", "schedulers"}, "schema": set(), "presets": set(), "story": set(), "calibrate": {"csv"},
          "parse_trace": {"name", "text", "max_items"}, "examples": set(),
          "papers": {"ids"},
          "plan_candidates": {"scenario", "gpus", "capacity"}, "plan_point": {"scenario", "gpus", "candidate", "capacity"},
          "plan_verdict": {"scenario", "gpus", "rows", "capacity"}}


def _clean(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if x is None or isinstance(x, (bool, int, str, array)):
        return x
    if hasattr(x, "item"):  # numpy scalar
        return _clean(x.item())
    return str(x)


def _error(kind, field, value, allowed, message):
    return {"ok": False, "error": _clean({"type": kind, "field": field, "value": value,
                                          "allowed": allowed, "message": message})}


def _respond(request, slice_s=None, fmt=None):
    """Steps generator -> the response, with the method's result as returned (maybe not JSON-safe
    yet); never raises."""
    try:
        if not isinstance(request, dict):
            return _error("ScenarioError", "request", None, "an object {method, params}",
                          "request: must be an object {method, params}")
        method = request.get("method")
        if not isinstance(method, str) or method not in METHODS:
            return _error("ScenarioError", "method", method if isinstance(method, str) else None,
                          "one of " + ", ".join(METHODS),
                          "method = %s: must be one of %s" % (show(method), ", ".join(METHODS)))
        params = request.get("params") or {}
        if not isinstance(params, dict):
            return _error("ScenarioError", "params", None, "an object",
                          "params: must be an object")
        known = PARAMS.get(method)
        if known is not None:
            for k in params:
                if k not in known:
                    return _error("ScenarioError", "params." + str(k), None,
                                  "one of " + (", ".join(sorted(known)) or "(none)"),
                                  "params.%s: unknown parameter for %s" % (k, method))
        result = yield from METHODS[method](params, slice_s, fmt)
        return {"ok": True, "result": result}
    except ScenarioError as e:
        return {"ok": False, "error": _clean(e.to_dict())}
    except RecursionError:
        return _error("ScenarioError", "params", None, "a shallow JSON object",
                      "params: nested too deeply")
    except MemoryError:
        return _error("EngineError", None, None, None, "out of memory: use a smaller scenario")
    except Exception as e:  # never raise across the worker boundary
        return _error("EngineError", None, None, None, "%s: %s" % (type(e).__name__, e))


def handle(request):
    response = api.drain(_respond(request))
    if response["ok"]:
        response["result"] = _clean(response["result"])
    return response


def _parse(text):
    try:
        return json.loads(text), None
    except (ValueError, TypeError, RecursionError) as e:
        return None, _error("ScenarioError", "request", None, "a JSON object {method, params}",
                            "request: not valid JSON (%s)" % e)


def _dumps(response):
    """Results are almost always plain JSON already, so they are encoded directly; only when that
    fails (a non-finite float, a numpy scalar) is the response walked by _clean."""
    try:
        return json.dumps(response, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(_clean(response), allow_nan=False)


def handle_json(text):
    """JSON text in, JSON text out (equal to json.dumps(handle(json.loads(text)))); never raises."""
    request, error = _parse(text)
    return _dumps(error or api.drain(_respond(request)))


def _detach(x, buffers):
    """Replace every array column by {"$buf": i, "type"} and collect its bytes."""
    if isinstance(x, array):
        buffers.append(x.tobytes())
        return {"$buf": len(buffers) - 1, "type": "u8" if x.typecode == "B" else "f64"}
    if isinstance(x, dict):
        return {k: _detach(v, buffers) for k, v in x.items()}
    if isinstance(x, list):
        return [_detach(v, buffers) for v in x]
    return x


class Job:
    """One request worked in slices (see the module docstring). Never raises."""

    def __init__(self, text, slice_s=0.03):
        request, error = _parse(text)
        self._done = (_dumps(error), []) if error else None
        self._steps = None if error else _respond(request, slice_s, results.columns)
        self._progress = None

    def step(self):
        if self._done is not None:
            return self._done
        try:
            p = next(self._steps)
            if p is not None:
                self._progress = p
            return None
        except StopIteration as e:
            buffers = []
            response = _detach(e.value, buffers)
            self._done = (_dumps(response), buffers)
            return self._done

    def progress(self):
        """The last progress the work reported, as JSON text {"done", "total", "unit"}, or None."""
        return None if self._progress is None else json.dumps(self._progress.to_dict())
