"""llm-d's inference scheduler: a weighted sum of scorers, each in [0, 1], the highest total
wins, ties broken uniformly at random (the max-score picker shuffles, then sorts stably).
Scorers (llm-d/llm-d-inference-scheduler, commit 520af478, pkg/epp/scheduling/...):
    prefix  precise (precise-prefix-cache-scorer): the share of the prompt the endpoint's own
            prefix cache holds, from vLLM's KV events (matched / total blocks);
            approximate (prefix-cache-scorer): the same share from the router's own index of
            where it sent each block, least-recently-used per endpoint, 31,250 blocks of 16
            tokens (here that many tokens in blocks of workload.hash_block)
    queue   (queue-scorer) (max q - q) / (max q - min q) over the endpoints' waiting requests,
            1 for all when they are equal
    kv      (kv-cache-utilization-scorer) 1 - the endpoint's KV-cache usage
Weights: cluster.router.weights, by default prefix 2, queue 1, kv 1 (the repository's
deploy/config/epp-precise-prefix-cache-config.yaml). Endpoint metrics are scraped every 50 ms
(set cluster.staleness_ms to model it).
"""

from collections import OrderedDict

from .base import Router, register

LRU_TOKENS = 31_250 * 16       # the approximate index's capacity per endpoint


@register("llm_d")
class LlmD(Router):
    label = "llm-d scorers"
    score = "the weighted sum of prefix, queue and KV scores"
    best = "highest"
    why = {"prefix": "went to the best weighted score, where its prefix was cached",
           "load": "went to the best weighted score, where none of it was cached"}
    tie = "at random (llm-d's max-score picker shuffles, then sorts by score)"

    def __init__(self, scenario, fleet):
        super().__init__(scenario, fleet)
        w = self.conf["weights"]
        self.w_prefix, self.w_queue, self.w_kv = w["prefix"], w["queue"], w["kv"]
        self.precise = self.conf["prefix_scorer"] == "precise"
        self.index = [OrderedDict() for _ in range(self.n)]   # approximate: node -> None, LRU
        self.cap = max(1, LRU_TOKENS // fleet.trace.hash_block)

    def _prefix(self, g):
        prompt = self.fleet.trace[1][g]
        if self.precise:
            held = self.fleet.cached_all(g)
            return [0.0] * self.n if held is None else [min(1.0, h / prompt) for h in held]
        hb, out = self.fleet.trace.hash_block, []
        for idx in self.index:
            m = 0
            for node in self.fleet.blocks[g]:
                if node not in idx:
                    break
                m += 1
            out.append(min(1.0, m * hb / prompt))
        return out

    def pick(self, g, t):
        loads = [self.load(rep, t) for rep in self.fleet.replicas]
        queue = [w for _, w, _, _ in loads]
        hi, lo = max(queue), min(queue)
        q_score = [1.0 if hi == lo else (hi - q) / (hi - lo) for q in queue]
        pools = [rep.kv_pool for rep in self.fleet.replicas]
        kv_score = [1.0 - (kv / p if p else 0.0) for (_, _, _, kv), p in zip(loads, pools)]
        p_score = self._prefix(g)
        total = [self.w_prefix * p + self.w_queue * q + self.w_kv * k
                 for p, q, k in zip(p_score, q_score, kv_score)]
        best = max(total)
        tied = [i for i, v in enumerate(total) if v == best]
        k = tied[0] if len(tied) == 1 else self.rng.choice(tied)
        return k, ("prefix" if p_score[k] > 0 else "load"), total

    def chosen(self, g, t, k):     # indexed at the choice (P/D: before the request gets there)
        if self.precise:
            return
        idx = self.index[k]
        for node in self.fleet.blocks[g]:
            idx[node] = None
            idx.move_to_end(node)
        while len(idx) > self.cap:
            idx.popitem(last=False)
