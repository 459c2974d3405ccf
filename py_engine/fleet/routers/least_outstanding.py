"""Least outstanding requests: the replica with the fewest of its requests not yet done, by the
router's own in-flight count; ties to the lowest index. (The least-loaded choice of
sgl-project/sglang sgl-router/src/policies/cache_aware.rs, `min_by_key(load)` over the router's
in-flight counts.)"""

from .base import Router, lowest, register


@register("least_outstanding")
class LeastOutstanding(Router):
    label = "least outstanding"
    score = "its requests not done, by the router's own count"
    best = "lowest"
    why = {"least_load": "went to the replica with the fewest requests in flight"}

    def pick(self, g, t):
        loads = [rep.outstanding(t) for rep in self.fleet.replicas]
        return lowest(loads), "least_load", loads
