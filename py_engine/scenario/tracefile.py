"""A reader's own trace file -> workload.items: the one parser of the CLI (`--trace FILE`) and the
page (protocol `parse_trace`, the file's text sent to the engine; it never leaves the browser).

Formats: JSONL (one object a line; a name ending .jsonl / .json, or a first line that starts with
"{") or CSV with a header; the published traces' own formats too (Azure's CSV, Mooncake's JSONL:
traceformats.py). Lines end with LF, CRLF or a lone CR; a byte-order mark is not part of
the first column. CSV: headers are case-blind and trimmed, cells may be quoted, a cell that reads
as a number is one (an integer literal an int), an empty cell is absent, `hash_ids` is ids
separated by spaces; the header must name arrive, prompt and out and nothing unknown, and every
row has the header's number of cells. A number too big for a float stays its text. Bad lines are refused naming the file's line; the values
are checked by the scenario's validator (its messages name workload.items[i], which `lines` maps
back to the file's line). More than max_items requests stop the parse at the first one too many
(a million lines once took the page 97 s and 4 GB).
"""

import csv
import json
import math
import re

from ..errors import ScenarioError
from . import traceformats
from .fields import ITEM_FIELDS, REQUIRED_ITEM_FIELDS

KEYS = [f.path for f in ITEM_FIELDS]
REQUIRED = KEYS[:REQUIRED_ITEM_FIELDS]
LISTS = {f.path for f in ITEM_FIELDS if f.type == "ints"}
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?", re.I)
_INT = re.compile(r"[+-]?\d+")
_LINES = re.compile(r"\r\n|\r|\n")


def _cell(key, text):
    t = text.strip()
    if not t:
        return None
    if key in LISTS:
        parts = t.replace(";", " ").split()
        return [int(p) if _INT.fullmatch(p) else p for p in parts]
    if _INT.fullmatch(t):
        return int(t)
    if _NUMBER.fullmatch(t):
        return _float(t)
    return t


def _float(text):
    """A number's text -> a float; one too big for a float (1e400) stays text, so the validator
    names it as written (as infinity it would cross the page's JSON as null)."""
    x = float(text)
    return x if math.isfinite(x) else text


def _refuse(name, line, what, allowed):
    where = "%s line %d" % (name, line)
    raise ScenarioError("trace", where, allowed, "%s: %s" % (where, what))


def parse(name, text, max_items=None):
    """-> {"items", "format": "CSV" | "JSONL", "lines": the file's line of each item}, or a
    ScenarioError (field "trace") naming the line."""
    if not isinstance(name, str) or not name:
        raise ScenarioError("name", name, "the file's name")
    if not isinstance(text, str):
        raise ScenarioError("text", type(text).__name__, "the file's text")
    if max_items is not None and (type(max_items) is not int or max_items < 1):
        raise ScenarioError("max_items", max_items, "an integer >= 1, or null")
    lines = _LINES.split(text[1:] if text.startswith("\ufeff") else text)
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    jsonl = name.lower().endswith((".jsonl", ".json")) or first.startswith("{")
    items, where = [], []
    kind = None         # a published trace's own format (traceformats.py), or ours

    def refuser(line):
        return lambda what, allowed: _refuse(name, line, what, allowed)

    def add(item, line):
        if max_items is not None and len(items) >= max_items:
            _refuse(name, line, "more than {:,} requests, the page's limit (the engine takes more "
                    "natively: python -m py_engine run --trace {})".format(max_items, name),
                    "at most {:,} requests".format(max_items))
        items.append(item)
        where.append(line)

    if jsonl:
        for i, ln in enumerate(lines):
            if not ln.strip():
                continue
            try:
                obj = json.loads(ln, parse_float=_float, parse_constant=str)
            except (ValueError, RecursionError):
                obj = None
            if not isinstance(obj, dict):
                _refuse(name, i + 1, "not a JSON object", "one JSON object per line")
            if not items:
                kind = traceformats.jsonl_kind(obj)
            if kind == "mooncake":
                obj = traceformats.mooncake_item(obj, refuser(i + 1))
            add(obj, i + 1)
    else:
        rows = csv.reader(lines, skipinitialspace=True)   # `a, "b"`: b is quoted
        head = [h.strip().lower() for h in next(rows, [])]
        kind = traceformats.csv_kind(head)
        missing = [] if kind else [k for k in REQUIRED if k not in head]
        if missing:
            _refuse(name, 1, "the header needs %s (and may have %s)"
                    % (", ".join(missing), ", ".join(KEYS[REQUIRED_ITEM_FIELDS:])),
                    "a header naming " + ", ".join(REQUIRED))
        unknown = [h for h in head if h and h not in KEYS] if not kind else []
        if unknown:
            _refuse(name, 1, "unknown column %s (known: %s)" % (unknown[0], ", ".join(KEYS)),
                    "columns among " + ", ".join(KEYS))
        for i, row in enumerate(rows, start=2):
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(head):
                _refuse(name, i, "%d values, the header has %d (%s)"
                        % (len(row), len(head), ",".join(head)),
                        "%d comma-separated values" % len(head))
            obj = {}
            for k, c in zip(head, row):
                v = _cell(k, c)
                if v is not None:
                    obj[k] = v
            if kind == "azure":
                obj = traceformats.azure_item(obj, refuser(i))
            add(obj, i)
    if not items:
        raise ScenarioError("trace", name, "a file with requests", "%s: no requests in it" % name)
    if kind:
        traceformats.rebase(kind, items)
        return {"items": items, "format": traceformats.FORMATS[kind], "lines": where}
    return {"items": items, "format": "JSONL" if jsonl else "CSV", "lines": where}
