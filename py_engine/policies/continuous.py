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
            remote = self.trace.remote_kv if self.trace is not None else None
            if remote is None:
                while free and waiting:
                    admit(waiting.popleft(), chunk)
                return
            while free and waiting:   # a decode replica: the KV that came over the link stays
                r = waiting.popleft()
                admit(r, chunk, prefill=sim.prompt[r] - remote[r], kv0=remote[r])

    # it acts only when a slot is free and a request waits: the core's fast loop calls it only
    # then (sim/fused.py _run_inline; an override of schedule() has no such mark)
    schedule.only_free_slots = True
