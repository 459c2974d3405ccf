"""The router interface: `pick(g, t)` chooses the replica of fleet request g arriving at t.

What a router may read (fleet/run.py), per replica `rep` of `self.fleet.replicas`:
    rep.outstanding(t)          its requests routed and not done: the router's own count (it
                                proxies every response, so it sees each one end)
    self.load(rep, t)           (time, waiting, running, kv tokens) of the replica's last
                                scheduler step at or before t - cluster.staleness_ms: the stats
                                a replica publishes, as old as the router's view of them
    self.fleet.cached_all(g)    per replica the prompt tokens of g its prefix cache holds (what
                                KV events report; None when no replica has a prefix cache)
    self.fleet.blocks[g]        g's prompt as shared-content block nodes of hash_block tokens
                                (workload/blocks.py stream_chains): what a router's own prefix
                                index stores
`pick` returns (replica, reason, scores or None): the reason is a word the result counts
(decisions by reason), the scores what the page shows on hover. A router says in words what it is
(`label`), what its scores are (`score`, and `best`: whether the lowest or the highest wins) and
what a request did for each of its reasons (`why`), and under which reasons its best score is
what decided (`decides`, None: all), and how a tie of best scores is broken (`tie`, after
"chosen"); schema() ships them (describe()), so the page names no router itself.
`chosen(g, t, k)` follows every decision (the router's own index of where it sent what),
`sent(g, t, k)` the request's arrival at that replica: the same moment but in a P/D
fleet, whose decode replica gets a request after its prefill and transfer. Ties go to the
lowest replica index unless the source breaks them at random (then with the router's seeded
random.Random).
"""

import random

REGISTRY = {}


def register(name):
    def deco(cls):
        cls.name = name
        REGISTRY[name] = cls
        return cls
    return deco


class Router:
    name = "?"
    label = "?"            # the router in words
    score = None           # what its scores per replica are, in words (None: it keeps none)
    best = None            # "lowest" or "highest": the score that wins
    why = {}               # reason -> what the request did, in words
    decides = None         # the reasons under which its best score wins (None: every reason)
    tie = "by the lowest replica index"     # how it breaks a tie of best scores, in words

    def __init__(self, scenario, fleet):
        self.fleet = fleet
        self.conf = scenario["cluster"]["router"]
        self.n = len(fleet.replicas)
        self.rng = random.Random(self.conf.get("seed", 0))

    def load(self, rep, t):
        return rep.load(t, self.fleet.staleness)

    def pick(self, g, t):
        raise NotImplementedError

    def chosen(self, g, t, k):
        return None

    def sent(self, g, t, k):
        return None


def describe():
    """[{name, label, score, best, why, decides, tie}] of every registered router (the page's
    words)."""
    return [{"name": n, "label": c.label, "score": c.score, "best": c.best, "why": dict(c.why),
             "decides": None if c.decides is None else list(c.decides), "tie": c.tie}
            for n, c in REGISTRY.items()]


def lowest(values):
    """The index of the smallest value, the lowest index on a tie."""
    return min(range(len(values)), key=values.__getitem__)
