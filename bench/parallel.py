"""A 16-point sweep in series vs in two local processes (`sweep --workers 2`, app/parallel.py):
wall and CPU seconds and their ratios, measured in one run (nothing is asserted), and whether the
two answers are the same JSON, byte for byte.

    python3 bench/parallel.py [--quick] [--workers N]

CPU seconds: in series, this process's; in parallel, this process's plus each worker's whole
life up to its last point (time.process_time() in the worker: its start after the fork, the job
it is sent, its points). The forkserver's own start (one import of the engine) is in the wall
time only.
"""

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from py_engine import api  # noqa: E402
from py_engine.app import parallel  # noqa: E402

SCHEDULERS = ["static", "continuous", "vllm"]
SLOTS = [4 * (i + 1) for i in range(16)]          # 16 points: slots 4, 8, ..., 64


def scenario(quick):
    return {"workload": {"requests": 400 if quick else 1500, "skew": 0.6, "prompt_mean": 200,
                         "output_mean": 96, "arrival": {"kind": "poisson", "rate": 40.0}}}


def timed_point(job, value):
    """api.sweep_point, and the CPU seconds of this worker process so far (with its pid)."""
    pt = api.sweep_point(job, value)
    return os.getpid(), time.process_time(), pt


def main(argv):
    quick = "--quick" in argv
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 2
    sc = scenario(quick)
    w0, c0 = time.perf_counter(), time.process_time()
    serial = api.sweep(sc, "slots", SLOTS, SCHEDULERS, work_cap=None)
    w1, c1 = time.perf_counter(), time.process_time()
    plan = api.sweep_plan(sc, "slots", SLOTS, SCHEDULERS)
    out = parallel.processes(workers)(timed_point, (plan, None), plan.values)
    doc = api.sweep_result(plan, [pt for _, _, pt in out])
    w2, c2 = time.perf_counter(), time.process_time()
    worker_cpu = {}
    for pid, cpu, _ in out:
        if pid != os.getpid():      # --workers 1 runs here: its CPU is in c2 - c1 already
            worker_cpu[pid] = max(cpu, worker_cpu.get(pid, 0.0))
    same = json.dumps(doc, indent=1) == json.dumps(serial, indent=1)
    ws, cs = w1 - w0, c1 - c0
    wp, cp = w2 - w1, (c2 - c1) + sum(worker_cpu.values())
    print("16-point sweep (slots %d..%d; %s; %d requests, poisson 40 req/s; no work cap), "
          "%d cores here" % (SLOTS[0], SLOTS[-1], ", ".join(SCHEDULERS),
                             sc["workload"]["requests"], os.cpu_count() or 1))
    print("   in series: wall %.2f s, CPU %.2f s" % (ws, cs))
    print("   --workers %d (%d processes): wall %.2f s, CPU %.2f s  ->  speed-up x%.2f (serial "
          "wall / parallel wall), CPU x%.2f of serial  (same JSON: %s)"
          % (workers, len(worker_cpu), wp, cp, ws / wp, cp / cs, "yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
