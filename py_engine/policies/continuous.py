"""Continuous (iteration-level, Orca) batching: every free slot is refilled from the FCFS queue
before each pass; every prefilling resident takes one chunk per pass; a finished sequence frees its
slot at once and is replaced in the next pass."""

from .base import Policy, register


@register("continuous")
class Continuous(Policy):
    label = "Continuous batching"
    summary = "iteration-level: a finished slot is refilled on the next pass"
    order = 1
    base = True

    def schedule(self):
        sim = self.sim
        free, waiting = sim.free, sim.waiting
        if free and waiting:
            admit, chunk = sim.admit, self.chunk
            while free and waiting:
                admit(waiting.popleft(), chunk)
