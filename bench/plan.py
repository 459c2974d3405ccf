"""The planner (issue "Prefill/decode disaggregation"): `plan --gpus 8` on Llama-3.1-8B over
H100s (the README's workload: 300 Poisson requests at 6/s, 3,000-token prompts, 200-token
outputs, vllm, kv auto) with --workers 2 and serially: wall seconds against the goal, GOAL_S for
12 candidates on 8 GPUs (every candidate the budget allows is run, so the time is also given per
12 candidates), and the same answer both ways. Measured in one run, nothing asserted.

    python3 bench/plan.py [--quick]
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from py_engine.app import parallel  # noqa: E402
from py_engine.app.plan import plan, setup  # noqa: E402

GOAL_S = 10.0
GOAL_CANDIDATES = 12
GPUS = 8
WORKERS = 2


def scenario(requests):
    return {"scheduler": "vllm",
            "workload": {"requests": requests, "arrival": {"kind": "poisson", "rate": 6},
                         "prompt_mean": 3000, "output_mean": 200},
            "server": {"cost": {"kind": "roofline", "model": "llama-3.1-8b",
                                "gpu": "h100-80gb"},
                       "kv_tokens": "auto", "slots": 64, "max_num_batched_tokens": 8192},
            "slo": {"ttft_ms": 1000, "tpot_ms": 40}}


def _wall(sc, executor):
    t = time.perf_counter()
    r = plan(sc, GPUS, None, executor)
    return time.perf_counter() - t, r


def main(argv=()):
    quick = "--quick" in argv
    sc = scenario(100 if quick else 300)
    n = len(setup(sc, GPUS)[1])
    print("planner: %d GPUs, %d candidates, %d requests (vllm, roofline llama-3.1-8b on "
          "h100-80gb); goal %.0f s for %d candidates with --workers"
          % (GPUS, n, sc["workload"]["requests"], GOAL_S, GOAL_CANDIDATES))
    wall, r = _wall(sc, parallel.processes(WORKERS))
    print("   --workers %d: %.1f s wall (%.1f s per %d candidates = x%.2f the goal)" % (
        WORKERS, wall, wall * GOAL_CANDIDATES / n, GOAL_CANDIDATES,
        wall * GOAL_CANDIDATES / n / GOAL_S))
    serial_wall, again = _wall(sc, None)
    print("   serial:     %.1f s wall; the same plan: %s; recommended %s" % (
        serial_wall, again == r, r["reason"].split(":")[0]))
    return 0 if again == r else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
