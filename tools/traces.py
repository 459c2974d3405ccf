"""Make the compact production traces of py_engine/data/ from the published files, checked by sha256.

    python3 tools/traces.py [DIR]   (default: ../shared/traces, beside the project's root; the
                                     Mooncake files in DIR/mooncake)

azure_traces.py: Microsoft Azure, github.com/Azure/AzurePublicDataset (data/), "Azure LLM inference
trace 2023", Creative Commons Attribution 4.0 International (py_engine/data/LICENSE-CC-BY-4.0.txt):
one request a CSV line, its arrival time, prompt (context) tokens and generated tokens; no text.
Changed here only in form: arrival times become 100 ns steps since the file's first request
(exact: the files carry 7 decimals of a second), and the three columns are stored as
gzip-compressed JSON.

mooncake_traces.py: Moonshot AI's Kimi traces published with Qin et al., "Mooncake: Trading More
Storage for Less Computation — A KVCache-centric Architecture for Serving LLM Chatbot", USENIX
FAST 2025, github.com/kvcache-ai/Mooncake (FAST25-release/traces, commit 3b5a594), Apache License
2.0 (py_engine/data/LICENSE-APACHE-2.0.txt): one request a JSON line, {timestamp (ms since the
first request), input_length, output_length, hash_ids (one id per 512-token block of the
prompt)}. Changed here only in form: the four columns (arrive_ms, prompt, out, hash_id_deltas) as
gzip-compressed JSON, each request's hash_ids delta-encoded (its first id, then each id minus the
one before it: a prompt's new blocks take the next ids, so most deltas are 1 and compress to
almost nothing). py_engine/workload/traces.py undoes the deltas; tests/engine/test_traces.py
re-serialises the decoded columns and finds the published files' sha256.
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
DATA = ROOT / "py_engine" / "data"


def steps_100ns(stamp):
    """'2023-11-16 18:17:03.9799600' -> 100 ns steps since the epoch (exact)."""
    day, frac = stamp.split(".")
    t = datetime.datetime.strptime(day, "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**7 + int(frac.ljust(7, "0"))


def azure_columns(data):
    rows = list(csv.DictReader(data.decode().splitlines()))
    t = [steps_100ns(r["TIMESTAMP"]) for r in rows]
    return {"arrive_100ns": [x - t[0] for x in t],
            "prompt": [int(r["ContextTokens"]) for r in rows],
            "out": [int(r["GeneratedTokens"]) for r in rows]}


def deltas(ids):
    """[5, 6, 7, 2] -> [5, 1, 1, -5]: each id minus the one before it (the first as it is)."""
    return [b - a for a, b in zip([0] + ids, ids)]


def mooncake_columns(data):
    rows = [json.loads(line) for line in data.decode().splitlines()]
    return {"arrive_ms": [r["timestamp"] for r in rows],
            "prompt": [r["input_length"] for r in rows],
            "out": [r["output_length"] for r in rows],
            "hash_id_deltas": [deltas(r["hash_ids"]) for r in rows]}


# data module: (its docstring's source lines, its columns, {preset name: (file, published sha256)})
MODULES = {
    "azure_traces.py": (
        "The Azure LLM inference traces 2023, compact",
        "Microsoft Azure, github.com/Azure/AzurePublicDataset, CC BY 4.0\n"
        "(py_engine/data/LICENSE-CC-BY-4.0.txt)", azure_columns, {
            "azure-code-2023": ("AzureLLMInferenceTrace_code.csv",
                                "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6"),
            "azure-conv-2023": ("AzureLLMInferenceTrace_conv.csv",
                                "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8"),
        }),
    "mooncake_traces.py": (
        "The Mooncake traces (FAST'25), compact",
        "Moonshot AI (Qin et al., USENIX FAST 2025), github.com/kvcache-ai/Mooncake\n"
        "(FAST25-release/traces, commit 3b5a594), Apache License 2.0\n"
        "(py_engine/data/LICENSE-APACHE-2.0.txt)", mooncake_columns, {
            "mooncake-conv-2025": ("mooncake/conversation_trace.jsonl",
                                   "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df"),
            "mooncake-synthetic-2025": ("mooncake/synthetic_trace.jsonl",
                                        "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131"),
        }),
}


def module_text(title, source, blobs):
    body = "\n".join("%r: (\n%s\n)," % (name, "\n".join(
        "    %r" % line for line in textwrap.wrap(b, 92))) for name, b in blobs.items())
    return ('"""%s (read by py_engine/workload/traces.py).\n\n'
            "%s. Made by tools/traces.py from the published files\n"
            "(sha256 checked); changed only in form (see there). Do not edit.\n"
            '"""\n\nTRACES = {\n%s\n}\n' % (title, source, body))


def main(argv):
    src = Path(argv[0]) if argv else ROOT.parent / "shared" / "traces"
    for module, (title, source, columns, files) in MODULES.items():
        blobs = {}
        for name, (file, sha) in files.items():
            data = (src / file).read_bytes()
            if hashlib.sha256(data).hexdigest() != sha:
                print("%s: not the published file (sha256 differs)" % file, file=sys.stderr)
                return 1
            raw = json.dumps(columns(data), separators=(",", ":")).encode()
            blobs[name] = base64.b64encode(gzip.compress(raw, mtime=0)).decode()
        (DATA / module).write_text(module_text(title, source, blobs))
        print("wrote py_engine/data/%s (%d bytes): %s" % (
            module, (DATA / module).stat().st_size,
            ", ".join("%s %d bytes" % (n, len(b)) for n, b in blobs.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
