"""Continuous (iteration-level, Orca) batching: every free slot is refilled from the FCFS queue
before each pass; every prefilling resident takes one chunk per pass; a finished sequence frees its
slot at once and is replaced in the next pass."""

from .base import Policy, register


@register("continuous")
class Continuous(Policy):
    def schedule(self):
        sim, chunk = self.sim, self.chunk
        waiting = sim.waiting
        while sim.free and waiting:
            sim.admit(waiting.popleft(), chunk)
