"""Seeded trace generator (and explicit traces), bit-identical natively and in Pyodide.

A trace is three equal-length integer lists in arrival order: `arrive` (ticks), `prompt` and `out`
(tokens). Request i has id i.

Lengths. For n = workload.requests, s = workload.skew, rng = random.Random(seed) (Python's own
Mersenne Twister: no numpy on the page's start-up path), the draws happen in this order (each n
uniforms in [0, 1) from `rng.random()`): u_out, w_out, u_prompt, w_prompt, then (poisson only) n
exponentials e = rng.expovariate(1.0). For each length:

    a      = (1 - s)^2                                    # weight of the common part
    base   = a + a * s * (w - 0.5)                        # common part, mean a, +-s/2 spread
    tail   = (1 - a) * X(u)                               # heavy part, mean 1 - a
    X(u)   = 0                                  if u < 1 - P          (most requests)
           = min(1/sqrt(1 - v), CAP) / (2 - 1/CAP) / P   otherwise, v = (u - (1 - P)) / P
    length = max(1, rint(mean * (base + tail)))

with P = 0.15 and CAP = 3: a share P of the requests are "long" (a truncated Pareto(2) between
~1/P and ~1.8/P times the tail weight), the rest share the common part. E[base + tail] = 1 exactly,
so the mean length is kept (up to rounding and the floor at 1) for every skew; at skew 0 the factor
is exactly 1.0 and every request has exactly `mean` tokens. As s grows the common part shrinks
quadratically and the long requests carry the mean: at s = 0.6 about 15% of requests are 4-10x the
mean and the rest ~0.16x, the article's long-tail regime. Prompts use the same formula with their
own draws and `prompt_mean`.

Only draws that CPython produces bit-identically natively and in Pyodide (random, expovariate) and
only IEEE-exact operations (+ - * / sqrt, min, max, round-half-even, comparisons) are used, so the
integers cannot differ between the two. The code does them a column at a time (maps over the
operator functions, so a million requests take no Python-level loop per request), each the same
operation on the same operands in the same order as the per-request formula;
tests/engine/test_fast_paths.py pins it to per-request loops.

Shared prefixes (`workload.prefix`), after the draws above and using none of their own:
- system: request i's prompt is system prompt i mod groups (`tokens` tokens, the same for every
  request of that group) followed by its drawn prompt: prefix_id = i mod groups, prefix_len =
  tokens.
- conversation: requests are turns; request i is turn t = i mod turns of conversation
  c = i div turns, which arrives `think` after turn t - 1 (turn 0 as the arrival process says for
  request c * turns). A turn's prompt is the conversation so far (every earlier turn's drawn prompt
  and output) plus its own drawn prompt, all of it conversation c's stream: prefix_id = c,
  prefix_len = prompt (so its answer continues the stream and the next turn finds it cached).
  Requests are then numbered in arrival order (stable).

A production trace (workload.trace, traces.py) replaces the generator; explicit items win over both.

Arrivals (in ticks; 1 tick = 1e-6 of the cost unit):
- burst: everyone at 0.
- gap(every): request i at round(i * (every * 1e6)) ticks.
- poisson(rate req/s): the first request at 0, then gaps round(e_i * (1000 / rate * 1e6)) ticks
  (the unit is ms; under the `unit` cost one pass counts as 1 ms, so rate is per 1000 passes).
The last generated arrival must come by MAX_ARRIVE, the bound on explicit items too (scenario/fields.py).
"""

import math
import random
from array import array
from itertools import accumulate, compress, islice, repeat, starmap
from operator import add, mod, mul, sub

from ..model.cost import TICKS, to_ticks
from ..errors import ScenarioError
from . import traces

MAX_ARRIVE = 1e9            # cost units (ms, or passes under the unit cost)
P_LONG = 0.15
CAP = 3.0


def factor(skew, u, w):
    """The length factor of one request (mean 1 over u, w uniform; see the module docstring)."""
    a = (1.0 - skew) * (1.0 - skew)
    x = 0.0
    if u >= 1.0 - P_LONG:
        v = (u - (1.0 - P_LONG)) / P_LONG
        x = min(1.0 / math.sqrt(1.0 - v), CAP) / (2.0 - 1.0 / CAP) / P_LONG
    return (a + a * skew * (w - 0.5)) + (1.0 - a) * x


def lengths(mean, skew, us, ws):
    """max(1, round(mean * factor(skew, u, w))) for each (u, w), as a list of ints.

    The same IEEE operations as factor() in the same order, done a column at a time (map over
    the operator functions, so the loop runs in C): the common part for every request, then the
    heavy part only for the long ones (u >= 1 - P; for the others factor() adds
    (1 - a) * 0.0 = +0.0, which leaves a common part >= 0 as it is). tests/engine pins this to
    factor() draw by draw."""
    n = len(us)
    a = (1.0 - skew) * (1.0 - skew)
    a_skew = a * skew                   # factor(): a * skew * (w - 0.5) = (a * skew) * (w - 0.5)
    f = array("d", map(add, repeat(a, n), map(mul, repeat(a_skew, n),
                                                   map(sub, ws, repeat(0.5, n)))))
    t = 1.0 - P_LONG
    tail, spread, sqrt = 1.0 - a, 2.0 - 1.0 / CAP, math.sqrt
    for i in compress(range(n), map(t.__le__, us)):        # u >= 1 - P: the long requests
        v = (us[i] - t) / P_LONG
        f[i] = f[i] + tail * (min(1.0 / sqrt(1.0 - v), CAP) / spread / P_LONG)
    # mean * f is a float: float.__round__ is round() without its per-call method lookup;
    # float(mean) * f is mean * f (int * float converts the int to a double first)
    got = list(map(float.__round__, map(mul, repeat(float(mean), n), f)))
    if got and min(got) < 1:
        got = [1 if x < 1 else x for x in got]
    return got


def _uniforms(rnd, n):
    """n draws of rnd() in order, as doubles (no Python float kept per draw)."""
    return array("d", starmap(rnd, repeat((), n)))


class Trace(tuple):
    """(arrive, prompt, out) lists, plus per-request `prefix_id` (None = no shared prefix),
    `prefix_len`, `priority` and `hash_ids` lists (each None when no request has one), and
    `hash_block`: the tokens per hash id."""

    def __new__(cls, arrive, prompt, out, prefix_id=None, prefix_len=None, priority=None,
                hash_ids=None, hash_block=512):
        t = super().__new__(cls, (arrive, prompt, out))
        t.prefix_id, t.prefix_len, t.priority = prefix_id, prefix_len, priority
        t.hash_ids, t.hash_block = hash_ids, hash_block
        # its requests' nodes of the hash-id trie once computed (workload/blocks.py chains);
        # a fleet's replica (fleet/run.py): its share of the fleet's trie, and the whole trace
        t.chain = t.whole = None
        # a disaggregated fleet's decode replica: per request the prompt tokens whose KV came
        # over the link (fleet/disagg.py), or None
        t.remote_kv = None
        return t

    def subset(self, ids):
        """The requests `ids` (in arrival order) as a trace of their own, renumbered 0.. ."""
        def pick(col):
            return None if col is None else [col[i] for i in ids]
        return Trace(pick(self[0]), pick(self[1]), pick(self[2]), pick(self.prefix_id),
                     pick(self.prefix_len), pick(self.priority), pick(self.hash_ids),
                     self.hash_block)


def _from_items(items, hash_block):
    arrive = [to_ticks(it["arrive"]) for it in items]
    prompt = [it["prompt"] for it in items]
    out = [it["out"] for it in items]
    pid = plen = prio = None
    if any("prefix_id" in it for it in items):
        pid = [it.get("prefix_id") for it in items]
        plen = [it.get("prefix_len", 0) for it in items]
    if any(it.get("priority") for it in items):
        prio = [it.get("priority", 0) for it in items]
    hids = None
    if any("hash_ids" in it for it in items):
        hids = [it.get("hash_ids") for it in items]
    return Trace(arrive, prompt, out, pid, plen, prio, hids, hash_block)


def _shared(prefix, arrive, prompt, out):
    """Apply workload.prefix to the drawn trace (see the module docstring)."""
    n = len(arrive)
    if prefix["kind"] == "system":
        g, tokens = prefix["groups"], prefix["tokens"]
        return Trace(arrive, list(map(add, prompt, repeat(tokens, n))), out,
                     list(map(mod, range(n), repeat(g, n))), [tokens] * n)
    turns, think = prefix["turns"], to_ticks(prefix["think"])
    # request i = turn t of conversation c (i = c * turns + t): it arrives t * think after the
    # conversation's first turn, its prompt is the conversation so far plus its own
    t_think = [t * think for t in range(turns)]
    when, full = [0] * n, [0] * n
    for c in range(0, n, turns):
        context, start = 0, arrive[c]
        for i in range(c, min(c + turns, n)):
            when[i] = start + t_think[i - c]
            full[i] = p = context + prompt[i]
            context = p + out[i]
    # numbered in arrival order; sorted() is stable, so turns arriving together keep their order
    order = sorted(range(n), key=when.__getitem__)
    plen = list(map(full.__getitem__, order))
    return Trace(list(map(when.__getitem__, order)), plen, list(map(out.__getitem__, order)),
                 [i // turns for i in order], plen.copy())


def _too_late(arrival, n):
    """Generated arrivals are bounded as explicit items are (MAX_ARRIVE): name the knob to turn."""
    if arrival["kind"] == "gap":
        raise ScenarioError("workload.arrival.every", arrival["every"],
                            "at most %g for %d requests (the last must arrive by %s ms)"
                            % (MAX_ARRIVE / max(n - 1, 1), n, "{:,.0f}".format(MAX_ARRIVE)))
    lowest = n / MAX_ARRIVE * 1000.0 * 1.5       # req/s; x1.5 leaves room for the random gaps
    raise ScenarioError("workload.arrival.rate", arrival["rate"],
                        "at least about %.3g req/s for %d requests: the last arrival must come "
                        "by %s ms (use a higher rate or fewer requests)"
                        % (lowest, n, "{:,.0f}".format(MAX_ARRIVE)))


def generate(workload):
    """Normalised workload dict -> Trace (arrive_ticks, prompt, out as Python int lists)."""
    if workload.get("items") is not None:
        return _from_items(workload["items"], workload["hash_block"])
    trace = workload.get("trace") or {"name": "none"}
    if trace["name"] != "none":
        arrive, prompt, out, hash_ids = traces.window(trace, workload["seed"])
        return Trace(arrive, prompt, out, hash_ids=hash_ids, hash_block=workload["hash_block"])
    n, skew = workload["requests"], workload["skew"]
    rng = random.Random(workload["seed"])
    rnd = rng.random
    u_out = _uniforms(rnd, n)      # the draws in the docstring's order, n at a time
    w_out = _uniforms(rnd, n)
    out = lengths(workload["output_mean"], skew, u_out, w_out)
    del u_out, w_out
    u_prompt = _uniforms(rnd, n)
    w_prompt = _uniforms(rnd, n)
    prompt = lengths(workload["prompt_mean"], skew, u_prompt, w_prompt)
    del u_prompt, w_prompt
    arrival = workload["arrival"]
    if arrival["kind"] == "burst":
        arrive = [0] * n
    elif arrival["kind"] == "gap":
        step = arrival["every"] * TICKS        # request i at round(i * step)
        rnd_f = float.__round__ if type(step) is float else round   # (i * step is a float)
        arrive = list(map(rnd_f, map(mul, range(n), repeat(step, n))))
    else:                          # the exponentials come after the four uniform draws
        scale = 1000.0 / arrival["rate"] * TICKS
        # gap i = round(e_i * scale); the first request at 0 (its draw made and not used)
        gaps = map(float.__round__, map(mul, map(rng.expovariate, repeat(1.0, n)),
                                        repeat(scale, n)))
        first = next(gaps, None)
        arrive = [] if first is None else list(accumulate(gaps, initial=0))
    if arrive and arrive[-1] > MAX_ARRIVE * TICKS:
        _too_late(arrival, n)
    prefix = workload.get("prefix", {"kind": "none"})
    if prefix["kind"] != "none":
        return _shared(prefix, arrive, prompt, out)
    return Trace(arrive, prompt, out)
