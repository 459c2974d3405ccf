"""The `vllm` policy against decisions recorded from the real vLLM 0.33.0 scheduler, for
`verify.check` (natively and in the page).

vllm_recorded.py (made by `tools/vllm_oracle.py subset` from the full fixture the test suite
uses, tests/fixtures/vllm-0.33.0.json.gz, recorded by `tools/vllm_oracle.py record`) holds the
three hand cases and the shortest trace of every cell of the knob grid (prefix caching, async
scheduling, full-prompt admission, fcfs / priority, KV limited or not, shared prefixes or not).
A case passes when every pass schedules the same tokens per request, every admission finds the
same prefix-cache hit, and every request's first and last token come at the same time (to 1e-6
ms; vLLM's clock is float ms) with the same preemptions.
"""

import base64
import gzip
import json

from ..policies.vllm.scheduler import VLLM
from ..sim.core import Sim
from ..model.cost import TICKS, Cost
from ..scenario.prepared import prepare
from ..workload.generator import generate

KNOBS = ("enable_prefix_caching", "async_scheduling", "scheduler_reserve_full_isl")


def load():
    from .vllm_recorded import CASES   # start-up: the recorded cases, read when replayed
    return json.loads(gzip.decompress(base64.b64decode(CASES)))


def scenario(cfg, cost="article"):
    """A recorded case's config -> the scenario it is (the recording's cost is the article's)."""
    items = []
    for a, p, o, pid, plen, prio in cfg["items"]:
        it = {"arrive": a, "prompt": p, "out": o}
        if pid is not None:
            it.update(prefix_id=pid, prefix_len=plen)
        if prio:
            it["priority"] = prio
        items.append(it)
    server = {"slots": cfg["slots"], "chunk": cfg["chunk"], "max_num_batched_tokens": cfg["budget"],
              "block_size": cfg["block_size"], "kv_tokens": cfg["kv_tokens"],
              "policy": cfg["policy"], "cost": cost}
    server.update({k: cfg[k] for k in KNOBS})
    return {"scheduler": "vllm", "workload": {"items": items}, "server": server}


def replay(case):
    """(ok, detail) for one recorded case."""
    sc = prepare(scenario(case["config"]))
    trace = generate(sc["workload"])
    sim = Sim(trace, sc["server"]["slots"], Cost.from_scenario(sc))
    policy = VLLM(sim, sc, trace)
    policy.plan_log = []
    sim.run(policy)
    ours, cached, log = [], {}, policy.plan_log
    for j, e in enumerate(log):
        end = log[j + 1]["pass"] if j + 1 < len(log) else sim.passes + 1
        ours += [e["tokens"]] * (end - e["pass"])
        if e["admitted"]:
            cached[e["pass"]] = e["admitted"]
    theirs = [{int(k): v for k, v in t.items()} for n, t in case["runs"] for _ in range(n)]
    hits = {p: {int(k): v for k, v in c.items()} for p, c in case["cached"]}
    bad = []
    if ours != theirs:
        first = next((p for p, (a, b) in enumerate(zip(ours, theirs), 1) if a != b),
                     min(len(ours), len(theirs)) + 1)
        bad.append("pass %d differs (%d vs %d passes)" % (first, len(ours), len(theirs)))
    if cached != hits:
        bad.append("prefix hits differ")
    for i, (first, done, pre) in enumerate(case["requests"]):
        if (abs(sim.first_tick[i] / TICKS - first) > 1e-6 or
                abs(sim.done_tick[i] / TICKS - done) > 1e-6 or sim.preemptions[i] != pre):
            bad.append("request %d differs" % i)
            break
    cfg = case["config"]
    knobs = "/".join(k.split("_")[-1] if cfg[k] else "-" for k in KNOBS)
    detail = "%d requests, %s, %s KV, knobs %s: %d passes, %d preemptions%s" % (
        len(cfg["items"]), cfg["policy"], "unlimited" if cfg["kv_tokens"] is None else
        "%d-token" % cfg["kv_tokens"], knobs, sim.passes, sum(sim.preemptions),
        ("; " + "; ".join(bad)) if bad else "")
    return not bad, detail


def checks(quick=True):
    """[(name, fn)] for check.run: every recorded case (quick: the hand cases and every fourth)."""
    doc = load()
    out = []
    for j, case in enumerate(doc["cases"]):
        if quick and j >= 3 and j % 4:
            continue
        out.append(("vllm == real vLLM %s: recorded case %d" % (doc["vllm_version"],
                                                                 case["index"]),
                    lambda case=case: replay(case)))
    return out
