"""Static (request-level) batching: groups of `slots` requests in arrival order.

A group starts at max(now, latest arrival in the group) and runs as one padded tensor of `slots`
rows: every row processes the group's longest prompt in chunks (so all rows emit their first token
on the group's pass max(prefill_steps)), then decodes until the slowest member is done; a finished
member's row, and every empty row of a short last group, is padding until the group's last pass,
which is every member's done_pass. Cost: all `slots` rows every pass, rows x padded chunk tokens
per prefill pass.
"""

from ..model.cost import prefill_steps
from .base import Policy, register


@register("static")
class Static(Policy):
    label = "Static batching"
    summary = "request-level: a batch holds its slots until its slowest member ends"
    order = 0
    base = True

    def schedule(self):
        sim = self.sim
        if sim.n_resident:
            return  # the group runs until its last pass
        first = sim.waiting[0] if sim.waiting else sim.next_arrival
        if sim.open and sim.n - first < sim.slots:
            return  # a fleet's replica: the group waits for its router to send the rest
        size = min(sim.slots, sim.n - first)
        last = first + size - 1
        if sim.arrive[last] > sim.now:
            sim.wait_until(sim.arrive[last])  # the group waits to fill
            return
        chunk = self.chunk
        # a decode replica's requests bring their KV (all but what they compute here)
        remote = self.trace.remote_kv if self.trace is not None else None
        own = [0] * size if remote is None else remote[first:last + 1]
        longest = max(p - k for p, k in zip(sim.prompt[first:last + 1], own))
        end = sim.passes + prefill_steps(longest, chunk) + max(sim.out[first:last + 1]) - 1
        for _ in range(size):
            r = sim.waiting.popleft()
            sim.admit(r, chunk, prefill=longest, hold_until=end, kv0=own[r - first])
        for _ in range(sim.slots - size):
            sim.admit_ghost(chunk, longest, end)

    def wants_arrivals(self):
        return False
