"""Round robin: the k-th request (arrival order, ties by id) goes to replica k mod N.
(vllm-router / SGLang router `round_robin` policy: sgl-project/sglang
sgl-router/src/policies/round_robin.rs, an atomic counter modulo the workers.)"""

from .base import Router, register


@register("round_robin")
class RoundRobin(Router):
    label = "round robin"
    why = {"turn": "went to the next replica in turn"}

    def pick(self, g, t):
        return g % self.n, "turn", None
