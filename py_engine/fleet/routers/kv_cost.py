"""NVIDIA Dynamo's KV router: each worker's cost is
    overlap_weight * prefill_blocks + decode_blocks
with prefill_blocks = (the prefill tokens it has in flight + the request's prompt tokens its
cache does not hold) / block_size, and decode_blocks = the blocks of its active requests + the
request's own; the lowest cost wins (router_temperature 0), ties at random. The overlap comes
from the workers' KV events (their prefix caches); the active prefill tokens and blocks are the
router's own bookkeeping: added when it routes, prefill tokens gone at the request's first
token, blocks gone when it ends. (ai-dynamo/dynamo lib/kv-router/src/scheduling/selector.rs,
KvRouterConfig defaults overlap_score_weight 1.0, router_temperature 0.0.)"""

from ...sim.exact import cdiv
from .base import Router, register

# active entries _expire walks per unit of the fleet's work (sim/work.py; ~0.3 us an entry
# natively): an overloaded worker's list grows with every request routed to it, and the walk at
# each pick, uncounted, ran a fleet ~28 us a unit (bench/work.py)
WALKED_PER_UNIT = 2


@register("kv_cost")
class KvCost(Router):
    label = "Dynamo KV cost"
    score = "overlap_weight x prefill blocks + decode blocks"
    best = "lowest"
    why = {"overlap": "went to the lowest cost, where some of its blocks were cached",
           "load": "went to the lowest cost, where none of its blocks were cached"}
    tie = "at random (Dynamo's selector draws among the workers of the lowest cost)"

    def __init__(self, scenario, fleet):
        super().__init__(scenario, fleet)
        self.weight = self.conf["overlap_weight"]
        self.bs = scenario["server"]["block_size"]
        self.active = [[] for _ in range(self.n)]    # per worker [local id, prefill tok, blocks]
        self.prefill = [0] * self.n
        self.blocks = [0] * self.n

    def _expire(self, k, t):
        """Drop what the router has seen happen by t: first tokens, ends."""
        sim = self.fleet.replicas[k].sim
        first, done = sim.first_tick, sim.done_tick
        self.fleet.work += len(self.active[k]) // WALKED_PER_UNIT
        keep = []
        for entry in self.active[k]:
            local, pf, blocks = entry
            if pf and 0 <= first[local] <= t:
                self.prefill[k] -= pf
                entry[1] = pf = 0
            if 0 <= done[local] <= t:
                self.blocks[k] -= blocks
                continue
            keep.append(entry)
        self.active[k] = keep

    def pick(self, g, t):
        prompt = self.fleet.trace[1][g]
        held = self.fleet.cached_all(g) or [0] * self.n
        own = cdiv(prompt, self.bs)
        costs = []
        for k in range(self.n):
            self._expire(k, t)
            prefill_blocks = (self.prefill[k] + prompt - held[k]) / self.bs
            costs.append(self.weight * prefill_blocks + self.blocks[k] + own)
        best = min(costs)
        tied = [i for i, c in enumerate(costs) if c == best]
        k = tied[0] if len(tied) == 1 else self.rng.choice(tied)
        return k, ("overlap" if held[k] else "load"), costs

    def sent(self, g, t, k):
        prompt = self.fleet.trace[1][g]
        held = self.fleet.cached_all(g)
        pf = prompt - (held[k] if held else 0)
        blocks = cdiv(prompt, self.bs)
        local = self.fleet.replicas[k].sim.n - 1    # sent: the replica's newest request
        self.active[k].append([local, pf, blocks])
        self.prefill[k] += pf
        self.blocks[k] += blocks
