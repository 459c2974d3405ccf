"""VTC (Sheng et al., OSDI'24): the service-difference bound of the vtc example."""

import random

from ... import api
from ...errors import ScenarioError
from ...policies import examples

VTC_RUNS = 6


def vtc_bound():
    code = next(e["code"] for e in examples.sources() if e["name"] == "vtc")
    held = 0
    for seed in range(VTC_RUNS):
        rng = random.Random(seed)
        wl = {"requests": 80, "seed": seed, "skew": rng.choice([0, 0.5, 0.9]),
              "arrival": {"kind": "poisson", "rate": rng.choice([5, 20, 80])},
              "prefix": {"kind": "system", "groups": rng.choice([2, 3, 5]),
                         "tokens": rng.choice([100, 600])}}
        try:
            api.simulate({"scheduler": "custom", "custom": {"name": "vtc", "code": code},
                          "workload": wl, "server": {"slots": rng.choice([2, 8])}})
            held += 1
        except ScenarioError:
            pass
    unfair = code.replace("key=lambda k: (c[k], k))", "key=lambda k: (-c[k], k))")
    try:
        api.simulate({"scheduler": "custom", "custom": {"name": "unfair", "code": unfair},
                      "workload": {"requests": 150, "prefix": {"kind": "system", "groups": 3},
                                   "arrival": {"kind": "poisson", "rate": 80}},
                      "server": {"slots": 2}})
        caught = False
    except ScenarioError:
        caught = True
    return {"ours": "held at every decision on %d of %d runs; largest-counter-first %s" % (
                held, VTC_RUNS, "breaks it" if caught else "does not break it"),
            "pass": held == VTC_RUNS and caught,
            "detail": "the vtc example (policies/examples/vtc.py) asserts, while two clients "
            "stay backlogged, that their counters' gap grows by at most one request's charge"}


CHECKS = [
    {"id": "vtc-bound", "title": "fairness bound holds",
     "paper": "VTC (Sheng et al., OSDI'24)", "fn": vtc_bound,
     "source": "arXiv 2401.00588, abstract (a 2× tight bound on the service difference between "
               "two backlogged clients)",
     "workload": "%d random multi-tenant runs of the vtc example" % VTC_RUNS,
     "claim": "the service difference between backlogged clients stays bounded",
     "published": "bounded (2× tight)",
     "tolerance": "held at every decision of every run, and a policy that breaks it is caught"},
]
