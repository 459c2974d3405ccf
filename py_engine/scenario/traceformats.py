"""The published production traces' own file formats, read as a reader's trace file
(tracefile.py): a serving engineer's export in the format of a trace we ship runs as it is.

    Azure CSV       header TIMESTAMP, ContextTokens, GeneratedTokens (the Azure LLM inference
                    traces 2023 and 2024, github.com/Azure/AzurePublicDataset): a timestamp
                    "2023-11-16 18:17:03.9799600" (or seconds as a number), prompt and output
                    tokens
    Mooncake JSONL  {"timestamp": ms, "input_length", "output_length", "hash_ids"?} a line (the
                    Mooncake FAST'25 traces, github.com/kvcache-ai/Mooncake): hash_ids name the
                    prompt's 512-token blocks (workload.hash_block 512, its default)

Arrivals become the cost unit's milliseconds since the file's first request (its earliest
timestamp); every other value goes to the scenario's validator as written, so a bad one is
refused naming the file's line (a GeneratedTokens of 0 too: every request makes a token).
"""

import datetime
import re

AZURE_COLUMNS = ("timestamp", "contexttokens", "generatedtokens")    # case-blind, as CSV headers
MOONCAKE_KEYS = ("timestamp", "input_length", "output_length")
MOONCAKE_OPTIONAL = ("hash_ids",)
FORMATS = {"azure": "Azure CSV (TIMESTAMP, ContextTokens, GeneratedTokens; arrivals in ms)",
           "mooncake": "Mooncake JSONL (timestamp in ms, input_length, output_length, hash_ids)"}
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,7}))?")
_EPOCH = datetime.datetime(1970, 1, 1)


def csv_kind(head):
    """A CSV header (lower-cased) -> "azure" when it names Azure's columns, else None."""
    return "azure" if all(c in head for c in AZURE_COLUMNS) else None


def jsonl_kind(first):
    """The first JSONL object -> "mooncake" when it has Mooncake's keys, else None."""
    return "mooncake" if all(k in first for k in MOONCAKE_KEYS) else None


def azure_item(row, refuse):
    """{lower-cased header: cell value} -> an item whose arrive is the timestamp in 100 ns steps
    since 1970 (`rebase` makes it ms since the first request)."""
    unknown = [k for k in row if k not in AZURE_COLUMNS]
    if unknown:
        refuse("unknown column %s in an Azure trace (its columns: TIMESTAMP, ContextTokens, "
               "GeneratedTokens)" % unknown[0], "Azure's columns")
    stamp = row.get("timestamp")
    return {"arrive": _steps(stamp, refuse), "prompt": row.get("contexttokens"),
            "out": row.get("generatedtokens")}


def mooncake_item(obj, refuse):
    """A Mooncake line's object -> an item (arrive: its timestamp, ms)."""
    missing = [k for k in MOONCAKE_KEYS if k not in obj]
    if missing:
        refuse("no %s (a Mooncake trace line has %s)" % (missing[0], ", ".join(MOONCAKE_KEYS)),
               "Mooncake's keys")
    unknown = [k for k in obj if k not in MOONCAKE_KEYS + MOONCAKE_OPTIONAL]
    if unknown:
        refuse("unknown key %s in a Mooncake trace line (its keys: %s)"
               % (unknown[0], ", ".join(MOONCAKE_KEYS + MOONCAKE_OPTIONAL)), "Mooncake's keys")
    item = {"arrive": obj["timestamp"], "prompt": obj["input_length"],
            "out": obj["output_length"]}
    if "hash_ids" in obj:
        item["hash_ids"] = obj["hash_ids"]
    return item


STEPS_PER_MS = {"azure": 10**4, "mooncake": 1}


def rebase(kind, items):
    """Arrivals in ms from the earliest one (the file's first request arrives at 0), exact: the
    difference is taken in the format's own steps; a timestamp that is not a number is left for
    the validator to name."""
    times = [it["arrive"] for it in items if _number(it["arrive"])]
    if not times:
        return
    t0, per_ms = min(times), STEPS_PER_MS[kind]
    for it in items:
        if _number(it["arrive"]):
            t = it["arrive"] - t0
            it["arrive"] = t if per_ms == 1 else t / per_ms


def _number(x):
    return type(x) in (int, float)


def _steps(stamp, refuse):
    """Azure's TIMESTAMP (or seconds as a number) -> 100 ns steps since 1970, an int."""
    if _number(stamp):
        return round(stamp * 10**7)
    m = _STAMP.fullmatch(stamp.strip()) if isinstance(stamp, str) else None
    if m is None:
        refuse("TIMESTAMP %r is not a time like 2023-11-16 18:17:03.9799600" % (stamp,),
               "a TIMESTAMP like 2023-11-16 18:17:03.9799600")
    try:
        day = datetime.datetime.strptime(m[1] + " " + m[2], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        refuse("TIMESTAMP %r is not a date" % stamp, "a TIMESTAMP like 2023-11-16 18:17:03")
    return int((day - _EPOCH).total_seconds()) * 10**7 + int((m[3] or "").ljust(7, "0"))
