"""The published trace files written back from the shipped columns, in their own formats: the
Mooncake JSONL byte for byte (test_traces.py checks its sha256), the Azure CSV with the published
file's first timestamp and every later one at its exact 100 ns offset (byte for byte the
published file: test_traces.py)."""

import datetime
import json

from py_engine.workload import traces

# the first TIMESTAMP of each published Azure file (the shipped columns are offsets from it)
AZURE_FIRST = {"azure-code-2023": "2023-11-16 18:17:03.9799600",
               "azure-conv-2023": "2023-11-16 18:15:46.6805900"}


def mooncake_file(name):
    """The shipped columns in the published form, one JSON line a request (bytes)."""
    cols = traces.columns(name)
    return "".join(json.dumps({"timestamp": a, "input_length": p, "output_length": o,
                               "hash_ids": h}) + "\n"
                   for a, p, o, h in zip(cols["arrive_ms"], cols["prompt"], cols["out"],
                                         cols["hash_ids"])).encode()


def azure_file(name, count=None):
    """The shipped columns as the published CSV (text: CRLF line ends, none after the last),
    the first `count` requests (all: the published file itself)."""
    cols = traces.columns(name)
    day, frac = AZURE_FIRST[name].split(".")
    base = datetime.datetime.strptime(day, "%Y-%m-%d %H:%M:%S")
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    rows = zip(cols["arrive_100ns"], cols["prompt"], cols["out"])
    for i, (a, p, o) in enumerate(rows):
        if count is not None and i >= count:
            break
        secs, steps = divmod(int(frac) + a, 10**7)
        stamp = (base + datetime.timedelta(seconds=secs)).strftime("%Y-%m-%d %H:%M:%S")
        lines.append("%s.%07d,%d,%d" % (stamp, steps, p, o))
    return "\r\n".join(lines)
