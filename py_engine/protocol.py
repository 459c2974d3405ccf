"""The worker protocol: one function, JSON-safe dict in, JSON-safe dict out, never raises.

request  {"method": "simulate"|"compare"|"sweep"|"stall"|"check"|"schema"|"presets"|"kv",
          "params": {...}}
response {"ok": true, "result": ...} or
         {"ok": false, "error": {"type": "ScenarioError"|"EngineError", "field", "value",
                                 "allowed", "message"}}
params: simulate {"scenario"}, compare {"scenario", "schedulers"?}, sweep {"scenario", "param",
"values", "schedulers"?}, stall {"scenario"} (figures.stall), check {"quick"?: bool}, schema {},
presets {}, kv {...} (py_engine.kv).
Floats that are not finite never leave: they become null.

`handle(request)` is the dict API; `handle_json(text)` is the same call with JSON text on both sides,
the Web Worker's entry point (one string crosses the JS/Python boundary each way).
"""

import json
import math

from . import api, figures
from .errors import ScenarioError
from .presets import presets
from .scenario import schema


def _check(params):
    from .verify import check
    quick = params.get("quick", True)
    if not isinstance(quick, bool):
        raise ScenarioError("params.quick", quick, "true or false")
    return check.run(quick=quick)


def _kv(params):
    from . import kv
    return kv.kv_from_params(params)


METHODS = {
    "simulate": lambda p: api.simulate(p.get("scenario")),
    "compare": lambda p: api.compare(p.get("scenario"),
                                     p.get("schedulers") or ("static", "continuous")),
    "sweep": lambda p: api.sweep(p.get("scenario"), p.get("param", "skew"),
                                 p.get("values", (0.0, 0.3, 0.6)),
                                 p.get("schedulers") or ("static", "continuous")),
    "check": _check,
    "stall": lambda p: figures.stall(p.get("scenario")),
    "schema": lambda p: schema(),
    "presets": lambda p: presets(),
    "kv": _kv,
}
PARAMS = {"simulate": {"scenario"}, "compare": {"scenario", "schedulers"},
          "sweep": {"scenario", "param", "values", "schedulers"}, "check": {"quick"}, "schema": set(),
          "stall": {"scenario"},
          "presets": set()}


def _clean(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if hasattr(x, "item"):  # numpy scalar
        return _clean(x.item())
    return str(x)


def _error(kind, field, value, allowed, message):
    return {"ok": False, "error": _clean({"type": kind, "field": field, "value": value,
                                          "allowed": allowed, "message": message})}


def _respond(request):
    """The response with the method's result as returned (maybe not JSON-safe yet); never raises."""
    try:
        if not isinstance(request, dict):
            return _error("ScenarioError", "request", None, "an object {method, params}",
                          "request: must be an object {method, params}")
        method = request.get("method")
        if method not in METHODS:
            return _error("ScenarioError", "method", method if isinstance(method, str) else None,
                          "one of " + ", ".join(METHODS),
                          "method = %r: must be one of %s" % (method, ", ".join(METHODS)))
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
        return {"ok": True, "result": METHODS[method](params)}
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
    response = _respond(request)
    if response["ok"]:
        response["result"] = _clean(response["result"])
    return response


def handle_json(text):
    """JSON text in, JSON text out (equal to json.dumps(handle(json.loads(text)))); never raises.

    Results are almost always plain JSON already, so they are encoded directly; only when that
    fails (a non-finite float, a numpy scalar) is the result walked by _clean. On a 10,000-request
    compare the walk alone costs about as much as the encoding.
    """
    try:
        request = json.loads(text)
    except (ValueError, TypeError, RecursionError) as e:
        return json.dumps(_error("ScenarioError", "request", None, "a JSON object {method, params}",
                                 "request: not valid JSON (%s)" % e))
    response = _respond(request)
    try:
        return json.dumps(response, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(_clean(response), allow_nan=False)
