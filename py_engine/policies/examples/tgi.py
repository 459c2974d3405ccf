"""After Hugging Face TGI's router (text-generation-inference router/src/infer/v3/queue.rs and
backend: `waiting_served_ratio`, default 1.2): while a batch is running, waiting requests join it
only once there are at least 1.2 waiting per running request (each join stalls the running
decodes for the newcomers' prefill); an empty batch takes whoever waits."""
from py_engine.policies import Policy

WAITING_SERVED_RATIO = 1.2


class TGI(Policy):
    def schedule(self):
        sim = self.sim
        running = sim.n_resident
        if running and len(sim.waiting) < WAITING_SERVED_RATIO * running:
            return
        while sim.free and sim.waiting:
            sim.admit(sim.waiting.popleft(), self.chunk)

    def wants_arrivals(self):
        return bool(self.sim.free)
