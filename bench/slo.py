"""An SLO edit answered from the runs before (py_engine/analysis/slo_memo.py): CPU seconds
(process_time) of the page's calls through the worker's door (protocol.Job: typed columns) the
first time, then again with only the TTFT limit changed, natively.

    .venv/bin/python bench/slo.py              # the whole Mooncake trace (minutes)
    .venv/bin/python bench/slo.py --count 2000 # a quicker look

Calls, as the page makes them (web/engine/requests.js): the fleet figure's run (8 vllm replicas
behind round robin, py_engine/bench/fleet.py's scenario), then every router's on the same trace
(the router comparison), and the main comparison (static, continuous, vllm) of 10,000 Azure
conversation requests under the roofline (bench/page.py's Azure lane).
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from py_engine import api  # noqa: E402
from py_engine.app.protocol import Job  # noqa: E402
from py_engine.bench.fleet import scenario as fleet_scenario  # noqa: E402
from py_engine.scenario import fields  # noqa: E402

ROUTERS = fields.BY_PATH["cluster.router.kind"].choices
AZURE = {"workload": {"trace": {"name": "azure-conv-2023", "count": 10_000}},
         "server": {"slots": 256, "kv_tokens": "auto", "max_num_batched_tokens": 8192,
                    "cost": {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}}}


def answer(req):
    """(CPU seconds, the response) of one request worked as the page's worker works it."""
    t = time.process_time()
    job = Job(json.dumps(req))
    while (out := job.step()) is None:
        pass
    return time.process_time() - t, json.loads(out[0])


def with_slo(req, ttft_ms):
    sc = dict(req["params"]["scenario"], slo={"ttft_ms": ttft_ms})
    return {"method": req["method"], "params": dict(req["params"], scenario=sc)}


def row(name, reqs):
    """The calls under a 2 s TTFT limit, then under 300 ms: CPU seconds of each pass."""
    first = [answer(with_slo(r, 2000.0)) for r in reqs]
    again = [answer(with_slo(r, 300.0)) for r in reqs]
    ok = all(a[1]["ok"] for a in first + again)
    att = [(a[1]["result"].get("metrics") or a[1]["result"].get("vllm", {}).get("metrics", {}))
           .get("slo_attainment") for a in (first[0], again[0])] if ok else None
    print(f"{name:46s} first {sum(a[0] for a in first):8.3f} s   SLO only {sum(a[0] for a in again):7.3f} s"
          f"   ({len(reqs)} call{'s' if len(reqs) > 1 else ''}; slo_attainment {att}; "
          f"{'ok' if ok else 'REFUSED: ' + next(a[1]['error']['message'] for a in first + again if not a[1]['ok'])})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=12_031, help="Mooncake requests (12,031: all)")
    a = ap.parse_args(argv)
    fleet = {"method": "simulate", "params": {"scenario": fleet_scenario(
        a.count, 8, {"kind": "round_robin"})}}
    row(f"fleet run (8 replicas, {a.count:,} Mooncake requests)", [fleet])
    routers = [{"method": "simulate", "params": {"scenario": fleet_scenario(
        a.count, 8, {"kind": kind})}} for kind in ROUTERS]
    row(f"every router ({len(ROUTERS)} kinds)", routers)
    row("compare (10,000 Azure requests, 3 lanes)", [{"method": "compare", "params": {
        "scenario": AZURE, "schedulers": ["static", "continuous", "vllm"]}}])
    print(f"remembered: {len(api.RUNS.points)} documents, {api.RUNS.size:,} of "
          f"{api.RUNS.budget:,} values")
    return 0


if __name__ == "__main__":
    sys.exit(main())
