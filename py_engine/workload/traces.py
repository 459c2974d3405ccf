"""Production traces as workloads: the Azure LLM inference traces 2023.

    azure-code-2023   a code-completion service: 8,819 requests in about an hour
    azure-conv-2023   a conversation service: 19,366 requests in about an hour

Microsoft Azure, github.com/Azure/AzurePublicDataset (data/), Creative Commons Attribution 4.0
International (py_engine/data/LICENSE-CC-BY-4.0.txt). The dataset asks users to cite: Patel et al.,
"Splitwise: Efficient generative LLM inference using phase splitting", ISCA 2024. Anything that
shows or ships a run of them carries `credit()`, which also says how the data was changed.

A workload takes a window of one: requests start .. start + count - 1 (in arrival order), the
first arriving at t = 0, the others at their recorded offsets divided by `rate_scale` (2 = twice
the rate), then keeps each request with probability `keep` (random.Random(workload.seed), one
draw per request of the window, in order).
"""

import base64
import gzip
import json
import random

from ..errors import ScenarioError

NAMES = ("azure-code-2023", "azure-conv-2023")
LABELS = {"azure-code-2023": "Azure LLM inference trace 2023, code",
          "azure-conv-2023": "Azure LLM inference trace 2023, conversation"}
_cache = {}


def columns(name):
    """{"arrive_100ns", "prompt", "out"} of a whole trace (decoded once)."""
    got = _cache.get(name)
    if got is None:
        from ..data.trace_data import TRACES   # start-up: 3,000 lines of data, read when used
        got = _cache[name] = json.loads(gzip.decompress(base64.b64decode("".join(TRACES[name]))))
    return got


def size(name):
    return len(columns(name)["prompt"])


def check(trace):
    """A normalised workload.trace whose window must lie inside its trace."""
    n = size(trace["name"])
    if trace["start"] >= n:
        raise ScenarioError("workload.trace.start", trace["start"],
                            "an integer from 0 to %d (%s has %d requests)"
                            % (n - 1, trace["name"], n))
    if trace["start"] + trace["count"] > n:
        raise ScenarioError("workload.trace.count", trace["count"],
                            "an integer from 1 to %d (the window from request %d to the end of "
                            "%s)" % (n - trace["start"], trace["start"], trace["name"]))


def window(trace, seed):
    """-> (arrive ticks, prompt, out) lists of the window (see the module docstring)."""
    cols = columns(trace["name"])
    s, c = trace["start"], trace["count"]
    t0 = cols["arrive_100ns"][s]
    scale, keep = trace["rate_scale"], trace["keep"]
    rng = random.Random(seed) if keep < 1 else None
    arrive, prompt, out = [], [], []
    for i in range(s, s + c):
        if rng is not None and rng.random() >= keep:
            continue
        # 100 ns steps -> ticks (1 ns when the unit is ms), sped up by rate_scale
        arrive.append(round((cols["arrive_100ns"][i] - t0) * 100 / scale))
        prompt.append(cols["prompt"][i])
        out.append(cols["out"][i])
    if not arrive:
        raise ScenarioError("workload.trace.keep", keep, "a share that keeps at least one "
                            "request of the window")
    return arrive, prompt, out


def credit(workload):
    """The attribution a run of a trace must carry, or None."""
    t = workload.get("trace") or {}
    if t.get("name", "none") == "none" or workload.get("items") is not None:
        return None
    changes = ["requests %d-%d" % (t["start"], t["start"] + t["count"] - 1)]
    if t["rate_scale"] != 1:
        changes.append("arrivals x%g as dense" % t["rate_scale"])
    if t["keep"] < 1:
        changes.append("%g of them kept at random (seed %d)" % (t["keep"], workload["seed"]))
    return ("%s, Microsoft Azure (github.com/Azure/AzurePublicDataset), CC BY 4.0 "
            "(creativecommons.org/licenses/by/4.0); changed: %s" % (
                LABELS[t["name"]], "; ".join(changes)))
