"""Fingerprint of the engine's numbers: sha256 of the JSON of a fixed list of protocol calls.

    .venv/bin/python tools/result_hash.py          # prints one hash per call, then the total
    .venv/bin/python tools/result_hash.py --dump OLD.json            # also write the results
    .venv/bin/python tools/result_hash.py --keys-of OLD.json         # hash only OLD's keys

A refactor that must not change any number keeps this hash. The calls go through the worker
protocol's handle (the contract every client uses), so the script runs on any commit, before or
after the package's layers (copy it into an old worktree). Timing fields ("seconds") are dropped
before hashing. The schema is not hashed: it describes fields, it is not a result.

A change that adds result keys (a new metric) changes the plain hash; `--keys-of` hashes each
result cut down to the keys an older run's dump has, so the old commit's plain total and the new
one's `--keys-of` total are equal exactly when every number the old engine gave is unchanged.
A change of words too (a message, the advice): add `--numbers` to both runs, which drops every
string value of a dict before hashing, so the totals compare the numbers alone.
"""

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    from py_engine.app.protocol import handle  # noqa: E402
except ImportError:     # a commit before the package's layers (11037d9 and earlier)
    from py_engine.protocol import handle  # noqa: E402

ITEMS = [{"arrive": a, "prompt": p, "out": o} for a, p, o in
         [(0, 120, 30), (0, 40, 200), (5, 900, 12), (30, 16, 1), (31, 300, 64), (200, 2000, 9)]]

MOONCAKE = {"scheduler": "vllm", "workload": {"trace": {"name": "mooncake-conv-2025", "count": 600}},
            "server": {"slots": 64, "kv_tokens": 400_000, "max_num_batched_tokens": 8192,
                       "cost": {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}}}

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
    # the paged KV pool with a prefix cache on a production trace's hash ids, under the roofline
    # (its inter-token gaps grow within a run), on one server and on fleets behind the routers
    ("vllm roofline mooncake", "simulate", {"scenario": MOONCAKE}),
    *(("fleet %s" % kind, "simulate", {"scenario": {**MOONCAKE, "cluster": {
        "replicas": 4, "router": {"kind": kind}}}})
      for kind in ("round_robin", "least_outstanding", "cache_aware", "llm_d", "kv_cost")),
    ("fleet p/d round robin", "simulate", {"scenario": {**MOONCAKE, "cluster": {
        "prefill": {"replicas": 1}, "decode": {"replicas": 3}}}}),
    ("kv article", "kv", {}),
    ("kv 70b x4", "kv", {"model": "llama-3-70b", "gpu": "h100-80gb", "gpus": 4}),
]


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _like(x, old):
    """x cut down to the keys (and list lengths) of old, recursively."""
    if isinstance(x, dict) and isinstance(old, dict):
        return {k: _like(x[k], old[k]) for k in old if k in x}
    if isinstance(x, list) and isinstance(old, list) and len(x) == len(old):
        return [_like(a, b) for a, b in zip(x, old)]
    return x


def _numbers(x):
    """x without its words: every string value of a dict dropped (messages, advice), recursively."""
    if isinstance(x, dict):
        return {k: _numbers(v) for k, v in x.items() if not isinstance(v, str)}
    if isinstance(x, list):
        return [_numbers(v) for v in x]
    return x


def _option(argv, name):
    if name not in argv:
        return None
    i = argv.index(name)
    value = argv[i + 1]
    del argv[i:i + 2]
    return value


def main(argv=None):
    argv = list(argv or [])
    dump, keys_of = _option(argv, "--dump"), _option(argv, "--keys-of")
    numbers = "--numbers" in argv
    if numbers:
        argv.remove("--numbers")
    old = json.loads(Path(keys_of).read_text()) if keys_of else None
    names = set(argv)
    total = hashlib.sha256()
    results = {}
    for label, method, params in CALLS:
        if names and method not in names:
            continue
        resp = handle({"method": method, "params": params})
        if not resp["ok"]:
            print("%-26s ERROR %s" % (label, resp["error"]["message"]))
            return 1
        result = results[label] = json.loads(json.dumps(_strip(resp["result"]), allow_nan=False))
        if old is not None:
            result = _like(result, old[label])
        if numbers:
            result = _numbers(result)
        text = json.dumps(result, sort_keys=True, allow_nan=False)
        digest = hashlib.sha256(text.encode()).hexdigest()
        total.update(digest.encode())
        print("%-26s %s" % (label, digest[:16]))
    print("total %s" % total.hexdigest())
    if dump:
        Path(dump).write_text(json.dumps(results, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
