"""Power of two choices: two distinct replicas drawn at random (random.Random(seed): the first
uniformly, the second redrawn until it differs), the less loaded of the two by the router's own
in-flight count, the first on a tie (`if load1 <= load2 {w1} else {w2}`).
(sgl-project/sglang sgl-router/src/policies/power_of_two.rs; vllm-project/router
src/policies/power_of_two.rs.)"""

from .base import Router, register


@register("power_of_two")
class PowerOfTwo(Router):
    label = "power of two"
    score = "requests in flight of the two replicas drawn"
    best = "lowest"
    why = {"two_choices": "went to the less loaded of two replicas drawn at random",
           "only": "went to the only replica"}
    tie = "as the first of the two drawn (load1 <= load2)"

    def pick(self, g, t):
        if self.n == 1:
            return 0, "only", None
        a = self.rng.randrange(self.n)
        b = a
        while b == a:
            b = self.rng.randrange(self.n)
        reps = self.fleet.replicas
        la, lb = reps[a].outstanding(t), reps[b].outstanding(t)
        scores = [None] * self.n
        scores[a], scores[b] = la, lb
        return (a if la <= lb else b), "two_choices", scores
