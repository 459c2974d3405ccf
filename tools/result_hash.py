"""Fingerprint of the engine's numbers: sha256 of the JSON of a fixed list of protocol calls.

    .venv/bin/python tools/result_hash.py          # prints one hash per call, then the total

A refactor that must not change any number keeps this hash. The calls go through
py_engine.app.protocol.handle (the contract every client uses), so the script does not depend on
where things live inside the package. Timing fields ("seconds") are dropped before hashing.
The schema is not hashed: it describes fields, it is not a result.
"""

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from py_engine.app.protocol import handle  # noqa: E402

ITEMS = [{"arrive": a, "prompt": p, "out": o} for a, p, o in
         [(0, 120, 30), (0, 40, 200), (5, 900, 12), (30, 16, 1), (31, 300, 64), (200, 2000, 9)]]

CALLS = [
    ("compare default", "compare", {"scenario": {}}),
    ("compare vllm", "compare", {"scenario": {}, "schedulers": ["static", "continuous", "vllm"]}),
    ("vllm kv 3000 recompute", "simulate",
     {"scenario": {"scheduler": "vllm", "server": {"kv_tokens": 3000}}}),
    ("vllm kv 3000 swap", "simulate",
     {"scenario": {"scheduler": "vllm", "server": {"kv_tokens": 3000, "preemption": "swap"}}}),
    ("vllm budget 256", "simulate",
     {"scenario": {"scheduler": "vllm", "server": {"max_num_batched_tokens": 256, "chunk": 128}}}),
    ("static items", "simulate", {"scenario": {"scheduler": "static", "workload": {"items": ITEMS},
                                               "server": {"slots": 4, "chunk": 256}}}),
    ("continuous items unit", "simulate",
     {"scenario": {"workload": {"items": ITEMS}, "server": {"slots": 3, "cost": "unit"}}}),
    ("poisson chat", "compare", {"scenario": {"workload": {"requests": 256, "arrival": {
        "kind": "poisson", "rate": 4.0}}, "server": {"slots": 16}}}),
    ("gap custom cost", "compare", {"scenario": {"workload": {"requests": 50, "seed": 9, "arrival": {
        "kind": "gap", "every": 35.0}}, "server": {"cost": {"fixed_ms": 10, "per_row_ms": 1.5,
                                                             "per_prefill_token_ms": 0.01}}}}),
    ("long docs", "compare", {"scenario": {"workload": {"prompt_mean": 4000, "output_mean": 64}}}),
    ("sweep skew", "sweep", {"scenario": {}, "param": "skew", "values": [0, 0.3, 0.6, 0.9]}),
    ("sweep slots vllm", "sweep", {"scenario": {"workload": {"requests": 120, "arrival": {
        "kind": "poisson", "rate": 8}}}, "param": "slots", "values": [2, 8, 32],
        "schedulers": ["vllm"]}),
    ("sweep rate", "sweep", {"scenario": {"workload": {"requests": 100}}, "param": "rate",
                             "values": [1, 5, 25]}),
    ("kv article", "kv", {}),
    ("kv 70b x4", "kv", {"model": "llama-3-70b", "gpu": "h100-80gb", "gpus": 4}),
]


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def main(argv=None):
    names = set(argv or [])
    total = hashlib.sha256()
    for label, method, params in CALLS:
        if names and method not in names:
            continue
        resp = handle({"method": method, "params": params})
        if not resp["ok"]:
            print("%-26s ERROR %s" % (label, resp["error"]["message"]))
            return 1
        text = json.dumps(_strip(resp["result"]), sort_keys=True, allow_nan=False)
        digest = hashlib.sha256(text.encode()).hexdigest()
        total.update(digest.encode())
        print("%-26s %s" % (label, digest[:16]))
    print("total %s" % total.hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
