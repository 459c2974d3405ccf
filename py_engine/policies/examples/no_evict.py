"""After TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler: a request is admitted only if
the KV of its whole sequence (prompt + every output token) fits beside what the running requests
will reach, so nobody is ever preempted; FCFS otherwise (the head blocks the queue). Without a KV
pool (server.kv_tokens null) it is continuous batching."""
from py_engine.policies import Policy


class NoEvict(Policy):
    def schedule(self):
        sim = self.sim
        pool = self.scenario.kv_pool
        reserved = sum(sim.prompt[r] + sim.out[r] for r in map(sim.occupant, range(sim.slots))
                       if r is not None and r >= 0)
        while sim.free and sim.waiting:
            r = sim.waiting[0]
            need = sim.prompt[r] + sim.out[r]
            if pool is not None and reserved + need > pool:
                return                        # the head waits: admitting it could evict
            sim.admit(sim.waiting.popleft(), self.chunk)
            reserved += need
