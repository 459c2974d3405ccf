"""SGLang's (and vllm-router's) cache-aware router. Its load is its own in-flight count per
worker; loads are imbalanced when max - min > balance_abs_threshold AND max > min *
balance_rel_threshold, and then the least loaded worker takes the request (first index on a
tie). Otherwise the router's own prefix tree (every request's prompt inserted for the worker it
chose, at routing time) gives the longest match: if matched / prompt > cache_threshold the
request follows the match (the deepest matched node's first tenant), else it goes to the worker
whose tree is smallest (fewest tokens; first on a tie). Defaults from router_args.py: 0.3, 64,
1.5. (sgl-project/sglang sgl-router/src/policies/cache_aware.rs and src/tree.rs;
vllm-project/router src/policies/cache_aware.rs.)

Here the tree holds a prompt's shared-content blocks of workload.hash_block tokens
(fleet.blocks) and counts every token inserted (a prompt's unshared tokens are new nodes too);
SGLang's tree holds characters and evicts least-recently-used leaves above max_tree_size (2^26
characters per worker), which these traces do not reach: no eviction here.
"""

from .base import Router, lowest, register


@register("cache_aware")
class CacheAware(Router):
    label = "SGLang cache-aware"
    score = "requests in flight, by the router's own count"
    best = "lowest"
    why = {"cache_hit": "followed its prefix-tree match (over cache_threshold of the prompt)",
           "smallest_tree": "went to the smallest prefix tree (no match over cache_threshold)",
           "balance": "went to the least loaded replica (loads imbalanced)"}
    decides = ("balance",)     # a match or the smallest tree decides the others

    def __init__(self, scenario, fleet):
        super().__init__(scenario, fleet)
        c = self.conf
        self.threshold = c["cache_threshold"]
        self.abs, self.rel = c["balance_abs_threshold"], c["balance_rel_threshold"]
        self.holders = {}                  # block node -> bitmask of the workers holding it
        self.size = [0] * self.n           # tokens in each worker's tree

    def _match(self, g):
        """(blocks matched, the bitmask of the workers holding all of them)."""
        mask, m, holders = (1 << self.n) - 1, 0, self.holders
        for node in self.fleet.blocks[g]:
            got = mask & holders.get(node, 0)
            if not got:
                break
            mask, m = got, m + 1
        return m, mask

    def pick(self, g, t):
        loads = [rep.outstanding(t) for rep in self.fleet.replicas]
        hi, lo = max(loads), min(loads)
        if hi - lo > self.abs and hi > lo * self.rel:
            return lowest(loads), "balance", loads
        m, mask = self._match(g)
        prompt = self.fleet.trace[1][g]
        rate = m * self.fleet.trace.hash_block / prompt
        if m and rate > self.threshold:
            return (mask & -mask).bit_length() - 1, "cache_hit", loads
        return lowest(self.size), "smallest_tree", loads

    def chosen(self, g, t, k):     # indexed at the choice (P/D: before the request gets there)
        bit, holders = 1 << k, self.holders
        hb, prompt = self.fleet.trace.hash_block, self.fleet.trace[1][g]
        known = 0
        for node in self.fleet.blocks[g]:
            h = holders.get(node, 0)
            if h & bit:
                known += 1
            else:
                holders[node] = h | bit
        self.size[k] += prompt - known * hb
