"""The scenario a page URL stands for, derived from the engine's field table (fields.py), so a test
can run natively exactly what the page runs. View parameters (vllm, theme, ...) are ignored."""

import json
from urllib.parse import parse_qsl

from py_engine.scenario import fields


def _parse(field, raw):
    if field.nullable and raw in ("", "null", "none"):
        return None
    if raw in field.words:
        return raw
    if field.type == "int":
        return int(raw)
    if field.type == "float":
        return float(raw)
    if field.type == "bool":
        return raw in ("1", "true", "yes", "on")
    if field.type == "overrides":           # a pool's server overrides, as JSON
        return json.loads(raw)
    return str(raw)


def scenario_from_query(query) -> dict:
    """URL query (text or dict) -> the partial scenario it sets, by the fields' URL names."""
    items = parse_qsl(query.lstrip("?")) if isinstance(query, str) else list(query.items())
    scenario: dict = {}
    for key, raw in items:
        f = fields.BY_URL.get(key)
        if f is None or not f.control:
            continue
        node = scenario
        *parents, leaf = f.path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        value = _parse(f, raw)
        if f.type == "cost" and value in f.object_choices:
            value = {"kind": value}        # an object form: its fields come as their own names
        node[leaf] = value
    return scenario
