"""Make py_engine/data/trace_data.py (the Azure LLM inference traces 2023, compact) from the published
CSV files, checked by sha256.

    python3 tools/traces.py [DIR]       (default: ../shared/traces, beside the project's root)

The traces: Microsoft Azure, github.com/Azure/AzurePublicDataset (data/), "Azure LLM inference
trace 2023", Creative Commons Attribution 4.0 International (py_engine/data/LICENSE-CC-BY-4.0.txt): one
request a line, its arrival time, prompt (context) tokens and generated tokens; no text. Changed
here only in form: arrival times become 100 ns steps since the file's first request (exact: the
files carry 7 decimals of a second), and the three columns are stored as gzip-compressed JSON.
"""

import base64
import csv
import datetime
import gzip
import hashlib
import json
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "py_engine" / "data" / "trace_data.py"
FILES = {   # preset name: (file, sha256 of the published file)
    "azure-code-2023": ("AzureLLMInferenceTrace_code.csv",
                        "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6"),
    "azure-conv-2023": ("AzureLLMInferenceTrace_conv.csv",
                        "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8"),
}


def steps_100ns(stamp):
    """'2023-11-16 18:17:03.9799600' -> 100 ns steps since the epoch (exact)."""
    day, frac = stamp.split(".")
    t = datetime.datetime.strptime(day, "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**7 + int(frac.ljust(7, "0"))


def columns(path):
    rows = list(csv.DictReader(path.read_text().splitlines()))
    t = [steps_100ns(r["TIMESTAMP"]) for r in rows]
    return {"arrive_100ns": [x - t[0] for x in t],
            "prompt": [int(r["ContextTokens"]) for r in rows],
            "out": [int(r["GeneratedTokens"]) for r in rows]}


def main(argv):
    src = Path(argv[0]) if argv else ROOT.parent / "shared" / "traces"
    blobs = {}
    for name, (file, sha) in FILES.items():
        data = (src / file).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha:
            print("%s: not the published file (sha256 differs)" % file, file=sys.stderr)
            return 1
        raw = json.dumps(columns(src / file), separators=(",", ":")).encode()
        blobs[name] = base64.b64encode(gzip.compress(raw, mtime=0)).decode()
    body = "\n".join("%r: (\n%s\n)," % (name, "\n".join(
        "    %r" % line for line in textwrap.wrap(b, 92))) for name, b in blobs.items())
    OUT.write_text(
        '"""The Azure LLM inference traces 2023, compact (read by py_engine/workload/traces.py).\n\n'
        "Microsoft Azure, github.com/Azure/AzurePublicDataset, CC BY 4.0\n"
        "(py_engine/data/LICENSE-CC-BY-4.0.txt). Made by tools/traces.py from the published files\n"
        "(sha256 checked); changed only in form (see there). Do not edit.\n"
        '"""\n\nTRACES = {\n%s\n}\n' % body)
    print("wrote %s: %s" % (OUT.relative_to(ROOT), ", ".join(blobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
