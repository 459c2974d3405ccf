"""vLLM's data-parallel load balancer: the engine with the lowest 4 * waiting + running, from
the request counts each engine publishes after its steps (the coordinator republishes them at
most every 100 ms: cluster.staleness_ms), ties to the first engine scanned (from engine 0, a
strict <). After a choice the client adds 1 to that engine's waiting count until the next
published counts replace it. (vllm-project/vllm vllm/v1/engine/core_client.py
DPLBAsyncMPClient.get_core_engine_for_request, commit 364631ab: `score = waiting * 4 +
running`; `current_counts[eng_index][0] += self.client_count`.)"""

from .base import Router, register


@register("vllm_dp")
class VllmDP(Router):
    label = "vLLM data parallel"
    score = "4 x waiting + running, as last published"
    best = "lowest"
    why = {"lowest_score": "went to the replica with the lowest 4 x waiting + running"}
    tie = "as the first engine scanned (the lowest index)"

    def __init__(self, scenario, fleet):
        super().__init__(scenario, fleet)
        self.seen = [None] * self.n        # time of the counts last read, per engine
        self.bump = [0] * self.n           # requests sent since those counts

    def pick(self, g, t):
        scores = []
        for i, rep in enumerate(self.fleet.replicas):
            when, waiting, running, _ = self.load(rep, t)
            if when != self.seen[i]:       # fresh counts replace the local bumps
                self.seen[i], self.bump[i] = when, 0
            # (a P/D request waits for this decode engine from the choice on: rep.coming)
            scores.append(4 * (waiting + self.bump[i] + rep.coming) + running)
        best = min(range(self.n), key=scores.__getitem__)
        return best, "lowest_score", scores

    def sent(self, g, t, k):
        self.bump[k] += 1
