"""5. A fleet (issue "Fleets"): 8 replicas of vllm under the roofline (Llama-3.1-8B on one H100
each, kv_tokens auto) behind round robin and cache-aware routers, on the Mooncake conversation
trace (FAST'25; prompts of ~7k tokens, a third of their blocks shared): CPU seconds of the run
against the goal (GOAL_CPU_S for the whole trace), and the fleet against the single server on
the same requests (what the router and eight clocks cost beyond the replicas' own work)."""

import json
import os
import subprocess
import sys

GOAL_CPU_S = 5.0
TRACE = "mooncake-conv-2025"
FULL = 12_031


def scenario(count, replicas, router):
    return {"scheduler": "vllm",
            "workload": {"trace": {"name": TRACE, "count": count}},
            "server": {"slots": 256, "kv_tokens": "auto", "max_num_batched_tokens": 8192,
                       "cost": {"kind": "roofline", "model": "llama-3.1-8b",
                                "gpu": "h100-80gb"}},
            "cluster": {"replicas": replicas, "router": router}}


# one run in a fresh interpreter: CPU seconds of simulate() and the result's metrics
_CHILD = ("import json, sys, time\n"
          "from py_engine.api import simulate\n"
          "raw = json.load(sys.stdin)\n"
          "c = time.process_time()\n"
          "r = simulate(raw, work_cap=None)\n"
          "print(json.dumps([time.process_time() - c, r['metrics']]))\n")


def _cpu(raw):
    """(CPU seconds, metrics) of simulate(raw), each run in its own process: in one process a run
    after the single server's took ~10% more (measured: 8 replicas behind round robin 4.53 s
    first, 5.06 s after it), the heap the earlier run left behind, not the fleet's own work."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    out = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(raw), env=env,
                         capture_output=True, text=True, check=True).stdout
    cpu, metrics = json.loads(out)
    return cpu, metrics


def main(quick=False):
    count = 1_000 if quick else FULL
    print("5) fleet: %s requests of %s, vllm, roofline llama-3.1-8b on h100-80gb, kv auto, "
          "256 slots, 8,192 batched tokens; goal %.0f s CPU for the whole trace on 8 replicas "
          "(each run in its own process)" % ("{:,}".format(count), TRACE, GOAL_CPU_S))
    single, _ = _cpu(scenario(count, 1, "round_robin"))
    print("   one server: %.1f s CPU" % single)
    for router in ("round_robin", "cache_aware"):
        cpu, m = _cpu(scenario(count, 8, router))
        print("   8 replicas, %-12s %6.1f s CPU (x%.2f the single server; x%.1f the goal%s)  "
              "prefix hit rate %.3f, p95 TTFT %.0f ms, %.0f tok/s" % (
                  router, cpu, cpu / single, cpu / GOAL_CPU_S,
                  "" if count == FULL else ", for %d of %d requests" % (count, FULL),
                  m["prefix_hit_rate"], m["ttft"]["p95"], m["throughput_tok_s"]))
