"""Random: each request to a replica drawn uniformly (random.Random(cluster.router.seed), one
draw per request). (SGLang router `random` policy: sgl-project/sglang
sgl-router/src/policies/random.rs; llm-d's random picker.)"""

from .base import Router, register


@register("random")
class Random(Router):
    label = "random"
    why = {"draw": "went to a replica drawn at random"}

    def pick(self, g, t):
        return self.rng.randrange(self.n), "draw", None
