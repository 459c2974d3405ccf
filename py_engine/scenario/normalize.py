"""Validation at the edge: one untrusted dict in, one normalised scenario out (or ScenarioError).

`normalize(raw)` walks the field table (`fields.py`) and returns a fresh dict with every default
filled in: plain JSON, what a result echoes as its "scenario". `prepared.prepare` adds what the
engine derives from it (the cost in integer ticks, the deployment, the KV pool) as a typed
`Scenario`; the core never re-checks. `app/schema.py` ships the same table to the page.

Caps (documented limits, each with a clear message): requests <= 1,000,000 (generated or explicit),
output_mean <= 100,000, prompt_mean <= 1,000,000, per-request prompt <= 10,000,000 and out <=
1,000,000, slots <= 4096, chunk <= 65,536, arrival times <= 1e9 cost units. Results also cap what
they carry (api.RESULT_CAPS) so a huge run cannot produce a huge JSON document.
"""

import math

from . import fields as F
from ..data import deployments
from ..errors import ScenarioError
from ..policies import CUSTOM, scheduler_names
from ..workload import traces

_OBJECTS = F.objects()
_ALIASES = {}                       # object path -> {alias: field}
for _f in F.FIELDS:
    for _a in _f.aliases:
        _ALIASES.setdefault(_f.parent, {})[_a] = _f


def _num(x):
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        x = int(x)
    if isinstance(x, int) and abs(x) >= 10_000:
        return "{:,}".format(x)
    return repr(x)


def choices(field):
    if field.choices == "schedulers":     # the registered ones and the reader's own
        return list(scheduler_names()) + [CUSTOM]
    if field.choices in ("models", "gpus"):
        return list(deployments.MODELS if field.choices == "models" else deployments.GPUS)
    return field.choices


def allowed_text(field):
    """The allowed values of a field, in the words every message uses."""
    t = field.type
    if t == "choice":
        return "one of " + ", ".join(choices(field))
    if t == "bool":
        return "true or false"
    if t == "int":
        text = "an integer from %s to %s" % (_num(field.min), _num(field.max))
        if field.words:
            return text + " (or %s)" % ", or ".join((["null"] if field.nullable else []) +
                                                   field.words)
    elif t == "float":
        text = "a number from %s to %s" % (_num(field.min), _num(field.max))
    elif t == "overrides":
        return "an object of server fields (those that differ from server)"
    elif t == "text":
        return "text of at most %s characters" % _num(field.max)
    elif t == "items":
        return "a list of 1 to %s objects {%s}" % (_num(field.max), ", ".join(
            "%s%s >= %s" % (f.path, "" if j < F.REQUIRED_ITEM_FIELDS else "?", _num(f.min))
            for j, f in enumerate(F.ITEM_FIELDS)))
    elif t == "cost":
        names = [c for c in field.choices if c not in field.object_choices]
        forms = []
        for j, form in enumerate(field.object_choices):
            keys = [f.leaf for f in F.children(field.path) if f.form == form]
            forms.append("{%s}" % ", ".join((["kind: %s" % form] if j else []) + keys))
        return "%s, or an object %s" % (", ".join(names), " or ".join(forms))
    else:
        raise AssertionError(t)
    return text + " (or null)" if field.nullable else text


# ---------------------------------------------------------------- primitive checks

def check_int(path, value, lo, hi):
    """An integer in [lo, hi]; integral floats such as 80e9 are accepted."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or not value.is_integer())) or (
            not lo <= value <= hi):
        # the message is built only on failure: explicit traces call this for every item
        raise ScenarioError(path, value, "an integer from %s to %s" % (_num(lo), _num(hi)))
    return int(value)


def check_ids(path, value, lo, hi):
    """A list of integer ids lo..hi (an item's hash_ids)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise ScenarioError(path, value if not isinstance(value, (list, tuple)) else "[]",
                            "a non-empty list of integers from %s to %s" % (_num(lo), _num(hi)))
    if not all(type(v) is int and lo <= v <= hi for v in value):
        for j, v in enumerate(value):
            check_int("%s[%d]" % (path, j), v, lo, hi)
    return [int(v) for v in value]


def check_float(path, value, lo, hi):
    # ints are compared exactly before float(): 10**400 must be out of range, not an OverflowError
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not math.isfinite(value)) or not lo <= value <= hi:
        raise ScenarioError(path, value, "a number from %s to %s" % (_num(lo), _num(hi)))
    return float(value)


def _object_keys(path, value):
    keys = _OBJECTS[path]
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(path, value, "an object with keys " + ", ".join(keys))
    aliases = _ALIASES.get(path, {})
    for k in value:
        if k not in keys and k not in aliases:
            sub = "%s.%s" % (path, k) if path else str(k)
            raise ScenarioError(sub, value[k], "absent (unknown key; known: %s)" % ", ".join(keys),
                                "%s: unknown key (known keys: %s)" % (sub, ", ".join(keys)))
    return value


# ---------------------------------------------------------------- normalise

def _value(field, value):
    """One field's value (None = the default), checked against its type and range."""
    if value is None:
        value = field.default
        if value is None and (field.nullable or field.type == "items"):
            return None
    t = field.type
    if field.words and value in field.words:
        return value
    if t in ("int", "float"):
        check = check_int if t == "int" else check_float
        if not field.nullable:
            return check(field.path, value, field.min, field.max)
        try:
            return check(field.path, value, field.min, field.max)
        except ScenarioError:   # the same check, with a message that also offers null
            raise ScenarioError(field.path, value, allowed_text(field)) from None
    if t == "choice":
        if not isinstance(value, str) or value not in choices(field):
            raise ScenarioError(field.path, value, allowed_text(field))
        return value
    if t == "bool":
        if not isinstance(value, bool):
            raise ScenarioError(field.path, value, allowed_text(field))
        return value
    if t == "items":
        return _items(field, value)
    if t == "text":
        if not isinstance(value, str) or len(value) > field.max:
            raise ScenarioError(field.path, value if not isinstance(value, str) else
                                "<%d characters>" % len(value), allowed_text(field))
        return value
    if t == "overrides":     # checked once the server they override is known (_pools)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ScenarioError(field.path, value, allowed_text(field))
        return value
    if t == "cost":
        if isinstance(value, str):
            if value in field.object_choices or value not in field.choices:
                raise ScenarioError(field.path, value, allowed_text(field))
            return value
        return _cost_object(field, value)
    raise AssertionError(t)


def _cost_object(field, value):
    """A cost model's object form: {"kind": form, its fields} (the first form may omit kind)."""
    if not isinstance(value, dict):
        raise ScenarioError(field.path, value, allowed_text(field))
    first = field.object_choices[0]
    kind = value.get("kind", first)
    if kind not in field.object_choices:
        raise ScenarioError(field.path + ".kind", kind,
                            "one of " + ", ".join(field.object_choices))
    own = [f for f in F.children(field.path) if f.form == kind]
    keys = [f.leaf for f in own]
    for k in value:
        if k != "kind" and k not in keys:
            sub = "%s.%s" % (field.path, k)
            raise ScenarioError(sub, value[k], "absent (unknown key of a %s cost; known: %s)"
                                % (kind, ", ".join(keys)),
                                "%s: unknown key of a %s cost (known keys: %s)"
                                % (sub, kind, ", ".join(keys)))
    out = {} if kind == first else {"kind": kind}
    for f in own:
        out[f.leaf] = _value(f, value.get(f.leaf))
    return out


def holds(conditions, root):
    """True if every `when` condition of a field holds in the (normalised) scenario `root`."""
    for path, values in conditions.items():
        node = root
        for p in path.split("."):
            node = node.get(p) if isinstance(node, dict) else None
        if node not in values:
            return False
    return True


def _object(path, raw, root, out=None):
    """Normalise the object at `path` into `out` (its fields in declaration order). `root` is the
    whole output, already holding `out`, so a field's `when` can look at fields normalised before."""
    raw = _object_keys(path, raw)
    if out is None:
        out = {}
    if root is None:
        root = out
    for key in _OBJECTS[path]:
        sub = "%s.%s" % (path, key) if path else key
        field = F.BY_PATH.get(sub)
        value = raw.get(key)
        for alias in (field.aliases if field is not None else ()):
            if alias in raw:
                if key in raw:
                    raise ScenarioError(
                        "%s.%s" % (path, alias), raw[alias], "absent when %s is given" % sub,
                        "%s.%s and %s: the same field under its old and new name; give %s"
                        % (path, alias, sub, sub))
                value = raw[alias]
        if field is None:   # a nested object
            shorthand = next((f for f in F.children(sub) if f.shorthand), None)
            if shorthand is not None and isinstance(value, str):
                value = {shorthand.leaf: value}
            out[key] = {}
            _object(sub, value, root, out[key])
        elif holds(field.when, root):
            out[key] = _value(field, value)
    return out


def _items(field, items):
    allowed = allowed_text(field)
    if not isinstance(items, (list, tuple)):
        raise ScenarioError(field.path, items, allowed)
    if not field.min <= len(items) <= field.max:
        raise ScenarioError(field.path, "<%d items>" % len(items), allowed)
    required = F.ITEM_FIELDS[:F.REQUIRED_ITEM_FIELDS]
    optional = F.ITEM_FIELDS[F.REQUIRED_ITEM_FIELDS:]
    keys = [f.path for f in F.ITEM_FIELDS]
    req_keys = [f.path for f in required]
    (arrive, lo_a, hi_a), (prompt, lo_p, hi_p), (out_, lo_o, hi_o) = [
        (f.path, f.min, f.max) for f in required]
    out = []
    for i, it in enumerate(items):
        path = "%s[%d]" % (field.path, i)
        if isinstance(it, (list, tuple)) and len(it) == len(req_keys):
            it = dict(zip(req_keys, it))
        if not isinstance(it, dict):
            raise ScenarioError(path, it, "an object with keys " + ", ".join(keys + ["id"]))
        for k in it:
            if k not in keys and k != "id":
                raise ScenarioError("%s.%s" % (path, k), it[k], "absent",
                                    "%s.%s: unknown key (known keys: %s)"
                                    % (path, k, ", ".join(keys + ["id"])))
        for k in req_keys:
            if k not in it:
                raise ScenarioError(path + "." + k, None, "present",
                                    "%s.%s: missing (each item needs %s)"
                                    % (path, k, ", ".join(req_keys)))
        row = {arrive: check_float(path + "." + arrive, it[arrive], lo_a, hi_a),
               prompt: check_int(path + "." + prompt, it[prompt], lo_p, hi_p),
               out_: check_int(path + "." + out_, it[out_], lo_o, hi_o)}
        for f in optional:          # kept only when given (they are rare, traces are long)
            v = it.get(f.path)
            if v is not None:
                check = check_ids if f.type == "ints" else check_int
                row[f.path] = check(path + "." + f.path, v, f.min, f.max)
        if "hash_ids" in row and "prefix_id" in row:
            raise ScenarioError(path + ".prefix_id", row["prefix_id"], "absent when hash_ids is "
                                "given (a prompt's content is one or the other)")
        plen = row.get("prefix_len", 0)
        if plen and "prefix_id" not in row:
            raise ScenarioError(path + ".prefix_id", None, "an integer from 0 to %s when "
                                "prefix_len is given" % _num(2**31 - 1))
        if plen > row[prompt]:
            raise ScenarioError(path + ".prefix_len", plen,
                                "an integer from 0 to the item's prompt (%d)" % row[prompt])
        out.append(row)
    out.sort(key=lambda r: r[arrive])  # stable: ties keep their given order
    return out


def _check_hash_ids(items, hash_block):
    """Each item's hash_ids name every block of its prompt: ceil(prompt / hash_block) ids."""
    for i, row in enumerate(items):
        ids = row.get("hash_ids")
        if ids is not None and len(ids) != -(-row["prompt"] // hash_block):
            raise ScenarioError("workload.items[%d].hash_ids" % i, "<%d ids>" % len(ids),
                                "%d ids: one per %d-token block of the prompt (%d tokens; "
                                "workload.hash_block = %d)" % (-(-row["prompt"] // hash_block),
                                                                hash_block, row["prompt"],
                                                                hash_block))


def pool_server(doc, pool):
    """A disaggregated pool's whole server: `server` with the pool's overrides (a dict value
    such as cost merges one level deep: {"cost": {"tp": 4}} keeps the rest of the cost)."""
    merged = dict(doc["server"])
    for k, v in doc["cluster"][pool]["server"].items():
        base = merged.get(k)
        merged[k] = dict(base, **v) if isinstance(base, dict) and isinstance(v, dict) else v
    return merged


def _pools(out):
    """cluster.prefill/decode.server: each override checked as a field of the pool's server;
    kept as given, each value normalised (a cost in full)."""
    cl = out["cluster"]
    p, d = cl["prefill"]["replicas"], cl["decode"]["replicas"]
    if (p == 0) != (d == 0):
        field = "cluster.decode.replicas" if p else "cluster.prefill.replicas"
        raise ScenarioError(field, d if p else p, "at least 1 when cluster.%s.replicas is %d "
                            "(a disaggregated fleet has both pools)" % ("prefill" if p else
                                                                        "decode", p or d))
    if p and cl["replicas"] != 1:
        raise ScenarioError("cluster.replicas", cl["replicas"], "1 when the fleet is "
                            "disaggregated (cluster.prefill / decode.replicas count its replicas)")
    for pool in ("prefill", "decode"):
        ov = out["cluster"][pool]["server"]
        if not ov:
            continue
        prefix = "cluster.%s." % pool
        srv = {}
        try:
            _object("server", pool_server(out, pool), dict(out, server=srv), srv)
        except ScenarioError as e:
            raise ScenarioError(prefix + e.field, e.value, e.allowed,
                                None if e.message is None else e.message.replace(
                                    e.field, prefix + e.field, 1)) from None
        out["cluster"][pool]["server"] = {k: srv[k] for k in ov}


def normalize(raw):
    """Untrusted scenario dict -> normalised scenario (all defaults), or ScenarioError."""
    out = _object("", raw, None)
    _pools(out)
    router = out["cluster"]["router"]
    if not router["weights"]:        # only llm_d has weights
        del router["weights"]
    if not out["custom"]:            # only scheduler custom has its code
        del out["custom"]
    wl = out["workload"]
    if wl["items"] is not None:
        wl["requests"] = len(wl["items"])
        _check_hash_ids(wl["items"], wl["hash_block"])
    elif wl["trace"]["name"] != "none":
        traces.check(wl["trace"], wl["hash_block"])
        wl["requests"] = wl["trace"]["count"]
    return out
