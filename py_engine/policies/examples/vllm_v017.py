"""After vLLM 0.1.7's scheduler (vllm/core/scheduler.py Scheduler._schedule), the vLLM DistServe
(OSDI'24) measured: a step runs prompts only or decodes only. While requests wait, a step prefills
all that fit, FCFS, whole prompts (blocks past a 1 % watermark, max_num_batched_tokens: one over it
runs alone, 0.1.7 dropped it; the slots) and decodes wait; else every running request, earliest
first, takes a block if it needs one and decodes, the latest preempted while none is free."""
from py_engine.policies import Policy

BLOCK, WATERMARK = 16, 0.01   # block_size; core/block_manager.py BlockSpaceManager(watermark=0.01)


def blocks(tokens):
    return -(-tokens // BLOCK)


class VLLM017(Policy):
    res, h = {}, None        # slot -> request id of every resident this policy admitted

    def schedule(self):
        sim, pool = self.sim, self.scenario.kv_pool
        total = pool // BLOCK if pool else 1 << 62
        budget = self.scenario["server"]["max_num_batched_tokens"]
        sim.count_work(len(self.res))
        self.res = res = {s: r for s, r in self.res.items() if sim.occupant(s) == r}
        free, batched = total - sum(blocks(sim.resident_kv(s) - 1) for s in res), 0
        while sim.free and sim.waiting:
            need = sim.prompt[r := sim.waiting[0]] + sim.emitted[r]  # recompute: + its output
            if free - blocks(need) < int(WATERMARK * total) or batched and batched + need > budget:
                break
            res[sim.admit(sim.waiting.popleft(), need, prefill=need)] = r
            free, batched = free - blocks(need), batched + need
        order = sorted((s for s in res if sim.phase_of(s) in ("decode", "paused")), key=res.get)
        self.h = 1 if batched else pool and BLOCK * ((free - 1) // max(1, len(order)))
        for s in order if batched else ():
            sim.pause(s)                              # a prompt step: the decodes wait
        while order and not batched:
            s = order.pop(0)
            while free < 1 and order:                 # can_append_slot: a free block for s
                free += blocks(sim.resident_kv(order[-1]) - 1)
                sim.waiting.appendleft(sim.evict(order.pop()))   # recomputed later, first
            if free < 1:
                sim.waiting.appendleft(sim.evict(s))
                continue
            free -= blocks(sim.resident_kv(s)) - blocks(sim.resident_kv(s) - 1)
            sim.unpause(s, 1)

    def horizon(self):
        return self.h if self.h is None else max(1, self.h)
