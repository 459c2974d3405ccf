"""Shortest job first: each free slot takes the arrived waiting request with the shortest prompt
(ties: the earliest arrival, then the lowest id); otherwise as continuous batching. It cuts TTFT
for short prompts; a long one can wait behind a stream of short ones (starvation)."""
from py_engine.policies import Policy


class SJF(Policy):
    def schedule(self):
        sim = self.sim
        while sim.free and sim.waiting:
            best = min(sim.waiting, key=lambda r: (sim.prompt[r], sim.arrive[r], r))
            sim.waiting.remove(best)
            sim.admit(best, self.chunk)
