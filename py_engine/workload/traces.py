"""Production traces as workloads: the Azure LLM inference traces 2023 and the Mooncake traces.

    azure-code-2023          a code-completion service: 8,819 requests in about an hour
    azure-conv-2023          a conversation service: 19,366 requests in about an hour
    mooncake-conv-2025       Kimi's conversations: 12,031 requests in about an hour, with hash ids
    mooncake-synthetic-2025  a synthetic Kimi load: 3,993 requests in 17 minutes (Poisson
                             arrivals), with hash ids

Azure: Microsoft Azure, github.com/Azure/AzurePublicDataset (data/), Creative Commons Attribution
4.0 International (py_engine/data/LICENSE-CC-BY-4.0.txt); the dataset asks users to cite Patel et
al., "Splitwise: Efficient generative LLM inference using phase splitting", ISCA 2024.
Mooncake: Moonshot AI, published with Qin et al., "Mooncake: Trading More Storage for Less
Computation — A KVCache-centric Architecture for Serving LLM Chatbot", USENIX FAST 2025, in
github.com/kvcache-ai/Mooncake (FAST25-release/traces, commit 3b5a594), Apache License 2.0
(py_engine/data/LICENSE-APACHE-2.0.txt). Their `hash_ids` name each prompt's content one id per
512-token block (workload/blocks.py): so a Mooncake run needs workload.hash_block = 512.
Anything that shows or ships a run of them carries `credit()`, which also says how the data was
changed.

A workload takes a window of one: requests start .. start + count - 1 (in arrival order), the
first arriving at t = 0, the others at their recorded offsets divided by `rate_scale` (2 = twice
the rate), then keeps each request with probability `keep` (random.Random(workload.seed), one
draw per request of the window, in order).
"""

import base64
import gzip
import json
import random
from itertools import accumulate
from typing import Callable, NamedTuple

from ..errors import ScenarioError
from ..model.cost import TICKS


def _azure():
    from ..data.azure_traces import TRACES   # start-up: 300 KB of data, read when used
    return TRACES


def _mooncake():
    from ..data.mooncake_traces import TRACES   # start-up: 240 KB of data, read when used
    return TRACES


AZURE = ("Microsoft Azure (github.com/Azure/AzurePublicDataset), CC BY 4.0 "
         "(creativecommons.org/licenses/by/4.0)")
MOONCAKE = ("Moonshot AI, from Qin et al., \"Mooncake: Trading More Storage for Less Computation "
            "\u2014 A KVCache-centric Architecture for Serving LLM Chatbot\", USENIX FAST 2025 "
            "(github.com/kvcache-ai/Mooncake, FAST25-release/traces, commit 3b5a594), Apache "
            "License 2.0 (apache.org/licenses/LICENSE-2.0)")


class Published(NamedTuple):
    label: str
    source: str           # who published it, where, under which license: the credit's core
    data: Callable        # -> the compact data module's TRACES (imported on first use)
    time: str             # its arrival column: steps since the trace's first request
    ticks_per_step: int   # ticks per step of that column (a tick is 1 ns when the unit is ms)
    hash_block: int       # tokens per hash id (0: the trace has none)


PUBLISHED = {
    "azure-code-2023": Published("Azure LLM inference trace 2023, code", AZURE, _azure,
                                 "arrive_100ns", TICKS // 10_000, 0),
    "azure-conv-2023": Published("Azure LLM inference trace 2023, conversation", AZURE, _azure,
                                 "arrive_100ns", TICKS // 10_000, 0),
    "mooncake-conv-2025": Published("Mooncake conversation trace (Kimi, FAST'25)", MOONCAKE,
                                    _mooncake, "arrive_ms", TICKS, 512),
    "mooncake-synthetic-2025": Published("Mooncake synthetic trace (Kimi, FAST'25)", MOONCAKE,
                                         _mooncake, "arrive_ms", TICKS, 512),
}
NAMES = tuple(PUBLISHED)
_cache = {}


def columns(name):
    """{time column, "prompt", "out"} of a whole trace, plus "hash_ids" (one list a request)
    when it has them (decoded once)."""
    got = _cache.get(name)
    if got is None:
        blob = "".join(PUBLISHED[name].data()[name])
        got = json.loads(gzip.decompress(base64.b64decode(blob)))
        deltas = got.pop("hash_id_deltas", None)   # tools/traces.py: each id minus the one before
        if deltas is not None:
            got["hash_ids"] = [list(accumulate(d)) for d in deltas]
        _cache[name] = got
    return got


def size(name):
    return len(columns(name)["prompt"])


def check(trace, hash_block):
    """A normalised workload.trace whose window must lie inside its trace, and whose hash ids (if
    it has them) must be read with their own block size."""
    n = size(trace["name"])
    if trace["start"] >= n:
        raise ScenarioError("workload.trace.start", trace["start"],
                            "an integer from 0 to %d (%s has %d requests)"
                            % (n - 1, trace["name"], n))
    if trace["start"] + trace["count"] > n:
        raise ScenarioError("workload.trace.count", trace["count"],
                            "an integer from 1 to %d (the window from request %d to the end of "
                            "%s)" % (n - trace["start"], trace["start"], trace["name"]))
    # an id names the content of one block of `own` tokens: no other block size follows from it
    own = PUBLISHED[trace["name"]].hash_block
    if own and hash_block != own:
        raise ScenarioError("workload.hash_block", hash_block,
                            "%d with %s (one hash id per %d-token block of a prompt)"
                            % (own, trace["name"], own))


def window(trace, seed):
    """-> (arrive ticks, prompt, out, hash_ids or None) lists of the window (see the module
    docstring)."""
    src, cols = PUBLISHED[trace["name"]], columns(trace["name"])
    times, hids = cols[src.time], cols.get("hash_ids")
    s, c = trace["start"], trace["count"]
    t0, ticks = times[s], src.ticks_per_step
    scale, keep = trace["rate_scale"], trace["keep"]
    rng = random.Random(seed) if keep < 1 else None
    arrive, prompt, out, ids = [], [], [], []
    for i in range(s, s + c):
        if rng is not None and rng.random() >= keep:
            continue
        # steps -> ticks, sped up by rate_scale
        arrive.append(round((times[i] - t0) * ticks / scale))
        prompt.append(cols["prompt"][i])
        out.append(cols["out"][i])
        if hids is not None:
            ids.append(list(hids[i]))    # a copy: the decoded trace is shared by every run
    if not arrive:
        raise ScenarioError("workload.trace.keep", keep, "a share that keeps at least one "
                            "request of the window")
    return arrive, prompt, out, ids if hids is not None else None


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
    src = PUBLISHED[t["name"]]
    return "%s, %s; changed: %s" % (src.label, src.source, "; ".join(changes))
