"""After Sarathi-Serve (Agrawal et al., OSDI 2024): stall-free batching under a token budget.
Every pass carries at most BUDGET tokens: each decoding row takes 1, and prefills share what is
left in chunks, so a long prompt never stalls the decodes beside it (their ITL stays one pass).
New requests join only while the budget has room for their first chunk."""
from py_engine.policies import Policy

BUDGET = 512        # tokens per pass (the paper's token budget)


class Sarathi(Policy):
    def schedule(self):
        sim = self.sim
        slots = [s for s in range(sim.slots) if sim.occupant(s) is not None]
        prefilling = [s for s in slots if sim.phase_of(s) in ("prefill", "final")]
        left = BUDGET - sum(1 for s in slots if sim.phase_of(s) == "decode")
        while sim.free and sim.waiting and left > len(prefilling):
            prefilling.append(sim.admit(sim.waiting.popleft(), 1))
        if not prefilling:
            return
        share = max(1, left // len(prefilling))
        for s in prefilling:
            need = sim.prompt[sim.occupant(s)] - sim.resident_kv(s)
            sim.schedule_tokens(s, max(1, min(share, need)))
