"""5. The work cap holds: random valid scenarios (every scheduler, cost model, arrival and prefix
kind, from 1 to 4,096 slots, prompts up to a million tokens, chunk 1, tight and unlimited KV
pools), each run under a cap of CAP units (work.py), timed in CPU seconds; then random fleets of
them (replicas behind every router, and prefill/decode splits), whose work is the routing's and
every replica's. Printed for each: the seconds per million units (median and worst), the slowest
run, and how the runs ended. The claim it measures: one unit is about a microsecond natively, so
WORK_CAP bounds a run to about 20 s.
"""

import random
import statistics
import time

from .. import api
from ..errors import ScenarioError
from ..fleet.routers import REGISTRY
from ..scenario.prepared import prepare
from ..sim.core import Sim
from ..sim.work import WORK_CAP, Probes

CAP = 2_000_000


def _scenario(rng):
    return {"scheduler": rng.choice(["static", "continuous", "vllm"]),
            "workload": {"requests": rng.choice([10, 100, 1000, 5000, 20000]),
                         "prompt_mean": rng.choice([1, 10, 200, 2000, 20000, 200000, 1000000]),
                         "output_mean": rng.choice([1, 10, 200, 2000, 20000]),
                         "skew": rng.choice([0, 0.5, 0.95]),
                         "arrival": rng.choice([{"kind": "burst"},
                                                {"kind": "poisson", "rate": rng.choice([1, 20, 1000])}]),
                         "prefix": rng.choice([{"kind": "none"},
                                               {"kind": "system", "groups": 4, "tokens": 500},
                                               {"kind": "conversation", "turns": 4, "think": 100}])},
            "server": {"slots": rng.choice([1, 8, 64, 256, 4096]),
                       "chunk": rng.choice([None, 1, 16, 512]),
                       "kv_tokens": rng.choice([None, 20000, 500000, 10000000]),
                       "cost": rng.choice(["article", "unit",
                                           {"kind": "roofline", "model": "llama-3.1-8b",
                                            "gpu": "h100-80gb", "tp": 1}])}}


def _fleet(rng):
    """A random fleet of a random server: N replicas behind any router, or a P/D split."""
    routers = list(REGISTRY)
    sc = _scenario(rng)
    if rng.random() < 0.7:
        sc["cluster"] = {"replicas": rng.choice([2, 4, 8]),
                         "router": {"kind": rng.choice(routers)},
                         "staleness_ms": rng.choice([0, 0, 50])}
    else:
        sc["cluster"] = {"prefill": {"replicas": rng.choice([1, 2])},
                         "decode": {"replicas": rng.choice([1, 2, 3])},
                         "router": {"kind": rng.choice(routers)}}
    return sc


def main(quick=False):
    n = 40 if quick else 200
    print("5) the work cap: random valid scenarios, each under a cap of %s units"
          % "{:,}".format(CAP))
    _sample("one server", _scenario, random.Random(13), n)
    _sample("fleets", _fleet, random.Random(14), n // 4)


def _sample(label, make, rng, n):
    """Runs n valid scenarios of make(rng) under the cap, and prints what they cost a unit."""
    seen = {}
    real_run, real_check = Sim.run, Probes.check

    # the work a run did, whether it finished or not: a server's (its Sim), a fleet's (what its
    # checks of the cap saw: the routing's and every replica's, a replica's Sim being a part)
    def run(self, policy, until=None):
        try:
            return real_run(self, policy, until)
        finally:
            seen["work"] = max(seen["work"], self.work)

    def check(self, work, done, total):
        seen["work"] = max(seen["work"], work)
        return real_check(self, work, done, total)
    Sim.run, Probes.check = run, check
    rows, ends = [], {}
    try:
        while len(rows) < n:
            try:
                sc = prepare(make(rng))
            except ScenarioError:
                continue
            seen["work"] = 0
            t = time.process_time()
            try:
                api.run_sim(sc, work_cap=CAP)
                end = "finished"
            except ScenarioError as e:
                end = "refused (%s)" % e.field
            dt = time.process_time() - t
            ends[end] = ends.get(end, 0) + 1
            rows.append((dt, seen["work"], sc))
    finally:
        Sim.run, Probes.check = real_run, real_check
    big = [dt / w * 1e6 for dt, w, _ in rows if w >= 100_000]   # small runs are all overhead
    slow = max(rows, key=lambda r: r[0])
    worst = max((r for r in rows if r[1] >= 100_000), key=lambda r: r[0] / r[1])
    print("   %s, %d scenarios: CPU seconds per million units (runs of >= 100,000 units): "
          "median %.2f, worst %.2f" % (label, n, statistics.median(big), max(big)))
    print("   slowest run %.2f s at %s units (%.2f x the cap's share of WORK_CAP's 20 s)"
          % (slow[0], "{:,}".format(slow[1]), slow[0] / (20.0 * CAP / WORK_CAP)))
    print("   ended: " + ", ".join("%s %d" % kv for kv in sorted(ends.items())))
    print("   the most seconds per unit: %s" % _short(worst[2]))
    print("   the slowest: %s" % _short(slow[2]))


def _short(sc):
    w, s = sc["workload"], sc["server"]
    cost = s["cost"] if isinstance(s["cost"], str) else s["cost"]["kind"]
    text = ("%s, %d requests, prompt %d, output %d, skew %s, %s, prefix %s; slots %d, chunk %s, "
            "kv_tokens %s, cost %s" % (sc["scheduler"], w["requests"], w["prompt_mean"],
                                       w["output_mean"], w["skew"], w["arrival"]["kind"],
                                       w["prefix"]["kind"], s["slots"], s["chunk"],
                                       s["kv_tokens"], cost))
    c = sc["cluster"]
    if c["prefill"]["replicas"]:
        return text + "; %d prefill : %d decode replicas, %s router" % (
            c["prefill"]["replicas"], c["decode"]["replicas"], c["router"]["kind"])
    if c["replicas"] > 1:
        return text + "; %d replicas, %s router" % (c["replicas"], c["router"]["kind"])
    return text
