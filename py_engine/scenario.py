"""Validation at the edge: one untrusted dict in, one normalised scenario out (or ScenarioError).

`normalize(raw)` returns a fresh dict with every default filled in; the core never re-checks.
`schema()` describes every field (type, default, min, max, choices, unit, description) so the page
can build its controls and its client-side messages from the same ranges.

Integer clock: simulated time is kept in integer *ticks*, 1 tick = 1e-6 of the cost unit (1 ns when
the unit is ms). `normalize` also returns the private key "_ticks" (the cost coefficients rounded to
ticks once; workload.generate rounds arrival times with the same to_ticks); `public(scenario)` strips it for output.

Caps (documented limits, each with a clear message): requests <= 1_000_000 (generated or explicit),
output_mean <= 100_000, prompt_mean <= 1_000_000, per-request prompt <= 10_000_000 and out <= 1_000_000,
slots <= 4096, chunk <= 65_536, arrival times <= 1e9 cost units. Results also cap what they carry
(see api.py: RESULT_CAPS) so a huge run cannot produce a huge JSON document.
"""

import math

TICKS = 1_000_000  # ticks per cost unit

MAX_REQUESTS = 1_000_000
SCHEDULERS = ("static", "continuous", "vllm")

ARTICLE_COST = {"fixed_ms": 22.0, "per_row_ms": 0.35, "per_prefill_token_ms": 0.06}
UNIT_COST = {"fixed_ms": 1.0, "per_row_ms": 0.0, "per_prefill_token_ms": 0.0}


class ScenarioError(ValueError):
    """Bad input: names the field (dotted path), the value and the allowed range."""

    def __init__(self, field, value, allowed, message=None):
        self.field = field
        self.value = value
        self.allowed = allowed
        if message is None:
            message = "%s = %s: must be %s" % (field, _show(value), allowed)
        self.message = message
        super().__init__(message)

    def to_dict(self):
        value = self.value
        if not isinstance(value, (int, float, str, bool, type(None))) or (
                isinstance(value, float) and not math.isfinite(value)):
            value = _show(value)
        return {"type": "ScenarioError", "field": self.field, "value": value,
                "allowed": self.allowed, "message": self.message}


def _show(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- field table
# (path, type, default, min, max, choices, unit, description). type: int | float | choice | ...

FIELDS = [
    ("scheduler", "choice", "continuous", None, None, list(SCHEDULERS), None,
     "Scheduling policy: static (request-level), continuous (Orca iteration-level), vllm."),
    ("workload.requests", "int", 64, 1, MAX_REQUESTS, None, "requests",
     "Number of generated requests (ignored when workload.items is given)."),
    ("workload.seed", "int", 0, 0, 2**32 - 1, None, None,
     "Seed of the trace generator; same seed, same trace, natively and in the browser."),
    ("workload.skew", "float", 0.6, 0.0, 0.95, None, None,
     "Length skew: 0 = every request exactly the mean; larger = same mean, heavier tail."),
    ("workload.output_mean", "int", 96, 1, 100_000, None, "tokens",
     "Mean output length (the generator keeps it as skew grows)."),
    ("workload.prompt_mean", "int", 200, 1, 1_000_000, None, "tokens",
     "Mean prompt length."),
    ("workload.arrival.kind", "choice", "burst", None, None, ["burst", "poisson", "gap"], None,
     "Arrivals: burst (all at 0), poisson (rate req/s), gap (one every `every`)."),
    ("workload.arrival.rate", "float", 20.0, 1e-6, 1e9, None, "req/s",
     "Poisson arrival rate (under the unit cost one pass counts as 1 ms)."),
    ("workload.arrival.every", "float", 50.0, 0.0, 1e6, None, "cost unit",
     "Gap between arrivals for kind=gap (ms, or passes under the unit cost)."),
    ("workload.items", "items", None, 1, MAX_REQUESTS, None, None,
     "Explicit trace [{arrive, prompt, out}, ...]; wins over the generator. "
     "Requests get ids 0..n-1 in arrival order (stable sort by arrive)."),
    ("server.slots", "int", 8, 1, 4096, None, "sequences",
     "Batch slots (= max_num_seqs)."),
    ("server.chunk", "int", 512, 1, 65_536, None, "tokens",
     "Chunked-prefill size: prompt tokens a prefilling sequence processes per pass."),
    ("server.cost", "cost", "article", None, None, ["article", "unit", "custom"], "ms",
     "Pass cost model: article (22.0 + 0.35*rows + 0.06*prefill_tokens ms), unit (1 per pass), "
     "or {fixed_ms, per_row_ms, per_prefill_token_ms}."),
    ("server.cost.fixed_ms", "float", 22.0, 1e-6, 10_000.0, None, "ms",
     "Custom cost: fixed part of every pass (must be > 0)."),
    ("server.cost.per_row_ms", "float", 0.35, 0.0, 100.0, None, "ms",
     "Custom cost: per resident row."),
    ("server.cost.per_prefill_token_ms", "float", 0.06, 0.0, 10.0, None, "ms",
     "Custom cost: per prefill token processed in the pass."),
    ("server.max_num_batched_tokens", "int", 2048, 1, 1_000_000, None, "tokens",
     "vllm: per-pass token budget (decodes count 1, prefill chunks their size)."),
    ("server.block_size", "int", 16, 1, 1024, None, "tokens",
     "vllm: KV-cache block size."),
    ("server.kv_tokens", "int_or_null", None, 1, 10**10, None, "tokens",
     "vllm: KV-cache capacity in tokens; null = unlimited."),
    ("server.preemption", "choice", "recompute", None, None, ["recompute", "swap"], None,
     "vllm: what happens to a preempted request's KV (drop and recompute, or swap to host)."),
    ("server.pcie_gb_s", "float", 25.0, 1e-3, 1e4, None, "GB/s",
     "vllm swap: host<->GPU bandwidth used to cost a swap transfer."),
    ("server.kv_bytes_per_token", "int", 131_072, 1, 10**9, None, "bytes",
     "vllm swap: KV bytes per token (Llama-3-8B bf16 = 131,072)."),
    ("slo.ttft_ms", "float", 2000.0, 0.0, 1e9, None, "ms",
     "TTFT objective (cost unit: passes under the unit cost)."),
    ("slo.tbt_ms", "float", 100.0, 0.0, 1e9, None, "ms",
     "Time-between-tokens objective, compared with each request's tpot."),
]

_BY_PATH = {f[0]: f for f in FIELDS}


def _allowed_text(spec):
    path, typ, default, lo, hi, choices = spec[:6]
    if typ == "choice":
        return "one of " + ", ".join(choices)
    if typ in ("int", "int_or_null"):
        text = "an integer from %s to %s" % (_num(lo), _num(hi))
        return text + " (or null)" if typ == "int_or_null" else text
    if typ == "float":
        return "a number from %s to %s" % (_num(lo), _num(hi))
    return ""


def _num(x):
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        x = int(x)
    if isinstance(x, int) and abs(x) >= 10_000:
        return "{:,}".format(x)
    return repr(x)


def schema():
    """Every scenario field: type, default, min, max, choices, unit, description, allowed text."""
    out = {}
    for spec in FIELDS:
        path, typ, default, lo, hi, choices, unit, desc = spec
        out[path] = {"type": typ, "default": default, "min": lo, "max": hi, "choices": choices,
                     "unit": unit, "description": desc, "allowed": _allowed_text(spec)}
    out["workload.items"]["allowed"] = ("a list of 1 to 1,000,000 objects "
                                        "{arrive >= 0, prompt >= 1, out >= 1}")
    out["server.cost"]["allowed"] = ("article, unit, or an object {fixed_ms, per_row_ms, "
                                     "per_prefill_token_ms}")
    return out


# ---------------------------------------------------------------- primitive checks

def _int(path, value, lo=None, hi=None):
    spec = _BY_PATH.get(path)
    if lo is None and spec:
        lo, hi = spec[3], spec[4]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or not value.is_integer())) or (
            not lo <= value <= hi):
        # the message is built only on failure: explicit traces call this for every item
        raise ScenarioError(path, value, "an integer from %s to %s" % (_num(lo), _num(hi)))
    return int(value)


def _float(path, value, lo=None, hi=None):
    spec = _BY_PATH.get(path)
    if lo is None and spec:
        lo, hi = spec[3], spec[4]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            not math.isfinite(value) or not lo <= value <= hi):
        raise ScenarioError(path, value, "a number from %s to %s" % (_num(lo), _num(hi)))
    return float(value)


def _choice(path, value):
    choices = _BY_PATH[path][5]
    if not isinstance(value, str) or value not in choices:
        raise ScenarioError(path, value, "one of " + ", ".join(choices))
    return value


def _obj(path, value, keys):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(path, value, "an object with keys " + ", ".join(keys))
    for k in value:
        if k not in keys:
            sub = "%s.%s" % (path, k) if path else str(k)
            raise ScenarioError(sub, value[k], "absent (unknown key; known: %s)" % ", ".join(keys),
                                "%s: unknown key (known keys: %s)" % (sub, ", ".join(keys)))
    return value


def _get(obj, key, path):
    return obj[key] if key in obj and obj[key] is not None else _BY_PATH[path][2]


# ---------------------------------------------------------------- normalise

def to_ticks(x):
    """Cost-unit float -> integer ticks (rounded once; IEEE multiply is exact-rounded everywhere)."""
    return int(round(x * TICKS))


def normalize(raw):
    """Untrusted scenario dict -> normalised scenario (all defaults), or ScenarioError."""
    if raw is None:
        raw = {}
    raw = _obj("", raw, ["scheduler", "workload", "server", "slo"])
    out = {"scheduler": _choice("scheduler", _get(raw, "scheduler", "scheduler"))}

    w = _obj("workload", raw.get("workload"),
             ["requests", "seed", "skew", "output_mean", "prompt_mean", "arrival", "items"])
    wl = {}
    for key, conv in (("requests", _int), ("seed", _int), ("skew", _float),
                      ("output_mean", _int), ("prompt_mean", _int)):
        path = "workload." + key
        wl[key] = conv(path, _get(w, key, path))
    a = w.get("arrival")
    if isinstance(a, str):  # shorthand "burst"
        a = {"kind": a}
    a = _obj("workload.arrival", a, ["kind", "rate", "every"])
    kind = _choice("workload.arrival.kind", _get(a, "kind", "workload.arrival.kind"))
    arrival = {"kind": kind}
    if kind == "poisson":
        arrival["rate"] = _float("workload.arrival.rate", _get(a, "rate", "workload.arrival.rate"))
    elif kind == "gap":
        arrival["every"] = _float("workload.arrival.every",
                                  _get(a, "every", "workload.arrival.every"))
    wl["arrival"] = arrival
    wl["items"] = _items(w.get("items"))
    if wl["items"] is not None:
        wl["requests"] = len(wl["items"])
    out["workload"] = wl

    s = _obj("server", raw.get("server"),
             ["slots", "chunk", "cost", "max_num_batched_tokens", "block_size", "kv_tokens",
              "preemption", "pcie_gb_s", "kv_bytes_per_token"])
    sv = {"slots": _int("server.slots", _get(s, "slots", "server.slots")),
          "chunk": _int("server.chunk", _get(s, "chunk", "server.chunk")),
          "cost": _cost(s.get("cost", "article"))}
    sv["max_num_batched_tokens"] = _int("server.max_num_batched_tokens",
                                        _get(s, "max_num_batched_tokens",
                                             "server.max_num_batched_tokens"))
    sv["block_size"] = _int("server.block_size", _get(s, "block_size", "server.block_size"))
    kv = s.get("kv_tokens")
    sv["kv_tokens"] = None if kv is None else _int("server.kv_tokens", kv)
    sv["preemption"] = _choice("server.preemption", _get(s, "preemption", "server.preemption"))
    sv["pcie_gb_s"] = _float("server.pcie_gb_s", _get(s, "pcie_gb_s", "server.pcie_gb_s"))
    sv["kv_bytes_per_token"] = _int("server.kv_bytes_per_token",
                                    _get(s, "kv_bytes_per_token", "server.kv_bytes_per_token"))
    out["server"] = sv

    so = _obj("slo", raw.get("slo"), ["ttft_ms", "tbt_ms"])
    out["slo"] = {"ttft_ms": _float("slo.ttft_ms", _get(so, "ttft_ms", "slo.ttft_ms")),
                  "tbt_ms": _float("slo.tbt_ms", _get(so, "tbt_ms", "slo.tbt_ms"))}

    c = sv["cost"]
    coeffs = ARTICLE_COST if c == "article" else UNIT_COST if c == "unit" else c
    out["_ticks"] = {
        "fixed": to_ticks(coeffs["fixed_ms"]),
        "per_row": to_ticks(coeffs["per_row_ms"]),
        "per_prefill_token": to_ticks(coeffs["per_prefill_token_ms"]),
    }
    if out["_ticks"]["fixed"] < 1:
        raise ScenarioError("server.cost.fixed_ms", coeffs["fixed_ms"], "a number >= 0.000001")
    return out


def _cost(value):
    if isinstance(value, str):
        if value in ("article", "unit"):
            return value
        raise ScenarioError("server.cost", value, "article, unit, or an object {fixed_ms, "
                                                  "per_row_ms, per_prefill_token_ms}")
    c = _obj("server.cost", value, ["fixed_ms", "per_row_ms", "per_prefill_token_ms"])
    if not isinstance(value, dict):
        raise ScenarioError("server.cost", value, "article, unit, or an object")
    return {k: _float("server.cost." + k, _get(c, k, "server.cost." + k))
            for k in ("fixed_ms", "per_row_ms", "per_prefill_token_ms")}


def _items(items):
    if items is None:
        return None
    allowed = "a list of 1 to 1,000,000 objects {arrive >= 0, prompt >= 1, out >= 1}"
    if not isinstance(items, (list, tuple)):
        raise ScenarioError("workload.items", items, allowed)
    if not 1 <= len(items) <= MAX_REQUESTS:
        raise ScenarioError("workload.items", "<%d items>" % len(items), allowed)
    out = []
    for i, it in enumerate(items):
        path = "workload.items[%d]" % i
        if isinstance(it, (list, tuple)) and len(it) == 3:
            it = {"arrive": it[0], "prompt": it[1], "out": it[2]}
        it = _obj(path, it, ["arrive", "prompt", "out", "id"])
        for k in ("arrive", "prompt", "out"):
            if k not in it:
                raise ScenarioError(path + "." + k, None, "present",
                                    "%s.%s: missing (each item needs arrive, prompt, out)"
                                    % (path, k))
        out.append({"arrive": _float(path + ".arrive", it["arrive"], 0.0, 1e9),
                    "prompt": _int(path + ".prompt", it["prompt"], 1, 10_000_000),
                    "out": _int(path + ".out", it["out"], 1, 1_000_000)})
    out.sort(key=lambda r: r["arrive"])  # stable: ties keep their given order
    return out


def public(scenario):
    """The normalised scenario without private keys (for results)."""
    return {k: v for k, v in scenario.items() if not k.startswith("_")}


def cost_unit(scenario):
    return "pass" if scenario["server"]["cost"] == "unit" else "ms"
