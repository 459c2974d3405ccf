"""After the Orca baselines of the vLLM paper (Kwon et al., SOSP 2023, section 6.1): continuous
batching that reserves a request's KV as one contiguous chunk at admission, sized by RESERVE:
"max" the model's longest sequence (MAX_LEN), "pow2" its prompt + output rounded up to a power of
two, "oracle" exactly prompt + output; admitted only while the reservations fit the KV pool, FCFS
(the head blocks the queue). Without a KV pool (server.kv_tokens null) it is continuous batching."""
from py_engine.policies import Policy

RESERVE = "max"
MAX_LEN = 2048      # OPT's max_position_embeddings (the paper's models)


def reservation(prompt, out):
    need = prompt + out
    if RESERVE == "max":
        return max(MAX_LEN, need)
    if RESERVE == "pow2":
        return 1 << (need - 1).bit_length()
    return need


class Orca(Policy):
    def schedule(self):
        sim = self.sim
        pool = self.scenario.kv_pool
        reserved = sum(reservation(sim.prompt[r], sim.out[r])
                       for r in map(sim.occupant, range(sim.slots)) if r is not None and r >= 0)
        while sim.free and sim.waiting:
            r = sim.waiting[0]
            need = reservation(sim.prompt[r], sim.out[r])
            if pool is not None and reserved + need > pool:
                return                        # the head waits for reserved memory to free
            sim.admit(sim.waiting.popleft(), self.chunk)
            reserved += need
