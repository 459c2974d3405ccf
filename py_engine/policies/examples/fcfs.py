"""First come, first served: continuous batching on the public hooks (the same run as the built-in
`continuous`: every free slot takes the oldest waiting request before each pass)."""
from py_engine.policies import Policy


class FCFS(Policy):
    def schedule(self):
        sim = self.sim
        while sim.free and sim.waiting:
            sim.admit(sim.waiting.popleft(), self.chunk)
