"""vLLM-style scheduling (the v1 scheduler's shape): paged KV cache, token budget, preemption.

Per pass, with ``budget = server.max_num_batched_tokens`` and ``slots`` = max_num_seqs:

1. RUNNING first, in admission order: decoding requests take 1 token each, then prefilling
   requests take ``min(chunk, prompt tokens left, budget left)`` (Sarathi-Serve's stall-free
   batching: decodes are never starved by a long prompt; ``chunk`` plays vLLM's
   long_prefill_token_threshold).
2. KV: a request holds ``ceil(kv / block_size)`` blocks, ``kv`` = prompt tokens prefilled + tokens
   emitted (the newly sampled token's slot is reserved in the pass that samples it). The pool has
   ``kv_tokens // block_size`` blocks (kv_tokens null = unlimited). When a scheduled request needs a
   block and none is free, the NEWEST running request is preempted (if it was already scheduled in
   this pass it is taken out of it), until the request fits or is itself the victim.
3. WAITING next, FCFS, only if nobody was preempted in this pass (as vLLM v1): admit while a slot,
   budget and the blocks for the first chunk remain; the first request that does not fit stops
   admission (no skipping ahead).
With decodes first and admission only while budget remains, every running request gets at least
one token in every pass (a request admitted with budget left never loses its share: chunks only
shrink, finished prompts turn into 1-token decodes, victims leave). The policy still handles a
request the budget would leave out (it keeps its slot and KV, as an idle slot-step: sim.pause),
but with these rules that path is not taken (checked on thousands of random traces).

The pool is given in tokens (``server.kv_tokens``); to size it from a model and a GPU use
``py_engine.kv_capacity`` (CLI ``python -m py_engine kv``, protocol method ``kv``) and pass its
``tokens``. A request whose prompt + output cannot fit the whole pool is a ScenarioError on
``server.kv_tokens`` (it could never finish): the pre-flight ``check``.

Preemption modes (server.preemption):
- ``recompute``: the victim's blocks are freed; it goes back to the head of the waiting queue and,
  when re-admitted, prefills ``prompt + tokens emitted`` again (vLLM recomputes the generated tokens
  too); that prefill's last chunk emits the next token, so no token is ever emitted twice.
- ``swap``: the blocks holding the victim's KV move to host memory and back on re-admission. Each
  direction costs ``blocks × block_size × kv_bytes_per_token / pcie_gb_s`` (whole blocks move; host
  memory is unlimited), added to the pass
  that performs it; the request resumes exactly where it stopped. The transfer is computed in ns
  and added as ticks, so under the ``unit`` cost model one pass counts as 1 ms (as for rates).

With unlimited KV and ``max_num_batched_tokens >= slots × chunk`` no budget or block limit ever
binds and the schedule is exactly ``continuous``'s (tests prove it pass for pass).

Event-driven: between events every pass has the same batch, so the core runs them as one run.
``horizon()`` cuts a run at the first pass whose block demand would exceed the pool (there a
preemption must be decided), and a pass with a preemption runs alone (admission resumes the next
pass). Counters: per-request and total ``preemptions`` (the core), plus ``swap_out_blocks``,
``swap_in_blocks``, ``swap_ms`` and ``recomputed_tokens`` (KV tokens thrown away) in metrics.
"""

from ..core import DECODE, PAUSED, PREFILL
from ..errors import ScenarioError
from .base import Policy, register


def _kv_after(kv, k, left):
    """KV after a pass that gives `k` tokens to a request with `left` prompt tokens to go
    (0 = decoding: one token); a pass that finishes the prompt also reserves the sampled token."""
    return kv + 1 if left == 0 else kv + k + (k == left)


@register("vllm")
class VLLM(Policy):
    label = "vLLM-style"
    summary = "paged KV budget, token budget per pass, preemption"
    order = 2

    def __init__(self, sim, scenario):
        super().__init__(sim, scenario)
        sv = scenario["server"]
        self.block = sv["block_size"]
        self.budget = sv["max_num_batched_tokens"]
        self.swap = sv["preemption"] == "swap"
        kv_tokens = sv["kv_tokens"]
        self.blocks = None if kv_tokens is None else kv_tokens // self.block
        # ns per block each way: bytes / (GB/s) = ns; 1 tick = 1 ns when the cost unit is ms.
        self.swap_ticks = int(round(self.block * sv["kv_bytes_per_token"] / sv["pcie_gb_s"]))
        self.order = []        # running request ids in admission order (last = newest)
        self.slot_of = {}      # rid -> slot while running
        self.saved = {}        # swapped-out rid -> (kv tokens, prefill tokens left)
        self.preempted = False
        self.left = 0          # budget left after the last schedule()
        self.grow = {}         # rid -> (kv at the start of the run, KV tokens added per pass)
        self.swap_out_blocks = self.swap_in_blocks = self.recomputed = 0

    @classmethod
    def check(cls, scenario, trace):
        """A request whose whole KV (prompt + output) exceeds the pool could never finish."""
        sv = scenario["server"]
        kv_tokens, bs = sv["kv_tokens"], sv["block_size"]
        if kv_tokens is None:
            return
        _, prompt, out = trace
        worst = max(range(len(prompt)), key=lambda i: prompt[i] + out[i])
        need = -(-(prompt[worst] + out[worst]) // bs)
        if need > kv_tokens // bs:
            raise ScenarioError(
                "server.kv_tokens", kv_tokens,
                "at least %d (request %d needs prompt %d + output %d tokens = %d blocks of %d)"
                % (need * bs, worst, prompt[worst], out[worst], need, bs))

    # ------------------------------------------------------------ hooks
    def schedule(self):
        if self.blocks is None:
            return self._schedule_unlimited()
        sim, bs, total, chunk = self.sim, self.block, self.blocks, self.chunk
        res, passes, slot_of = sim.res, sim.passes, self.slot_of
        # Running requests now: kv tokens, prompt tokens left before the next token (0 = decoding).
        order, state, used = [], {}, 0
        decodes, prefills, paused = [], [], []
        for rid in self.order:
            slot = slot_of[rid]
            r = res[slot]
            if r is None or r.rid != rid:   # finished in the last run
                del slot_of[rid]
                continue
            phase = r.phase
            if phase == DECODE:
                left = 0
            elif phase == PREFILL:
                left = r.pf_left - (passes - r.pf_at) * r.chunk
            else:  # FINAL or PAUSED
                left = r.pf_left
                if phase == PAUSED:
                    paused.append(rid)
            kv = sim.resident_kv(slot)
            state[rid] = (kv, left)
            used -= kv // -bs
            order.append(rid)
            (prefills if left else decodes).append(rid)
        self.order = order
        budget = self.budget
        sched = {}             # rid -> (tokens this pass, blocks added)
        grow = {}              # rid -> (kv at the start of the run, KV tokens added per pass)
        left_out = []          # running requests the token budget leaves out of this pass
        preempted = []

        def preempt_newest():
            nonlocal used, budget
            v = order.pop()
            kv, left = state[v]
            if v in sched:
                k, added = sched.pop(v)
                budget += k
                used -= added
            grow.pop(v, None)
            held = -(-kv // bs)
            used -= held
            sim.evict(slot_of.pop(v))
            if self.swap:
                self.saved[v] = (kv, left)
                self.swap_out_blocks += held
                sim.add_cost(held * self.swap_ticks)
            else:
                self.recomputed += kv
            preempted.append(v)
            return v

        for rid in decodes + prefills:
            if rid not in slot_of:
                continue
            kv, left = state[rid]
            if budget <= 0:
                left_out.append(rid)
                grow[rid] = (kv, 0)
                continue
            k = min(chunk, left, budget) if left else 1
            after = _kv_after(kv, k, left)
            add = -(-after // bs) + (kv // -bs)
            while add > total - used:
                if preempt_newest() == rid:
                    break
            if rid not in slot_of:
                continue
            used += add
            sched[rid] = (k, add)
            grow[rid] = (kv, after - kv)
            budget -= k

        # Shape the batch: prefill chunk sizes, and who is in or out of this pass (decodes that
        # run as before need nothing).
        for rid in prefills + paused + left_out:
            if rid not in slot_of:
                continue
            slot = slot_of[rid]
            if rid not in sched:
                sim.pause(slot)
                continue
            r = res[slot]
            k = sched[rid][0]
            if r.phase == PAUSED:
                sim.unpause(slot, k)
            elif state[rid][1] and r.chunk != k:
                sim.set_chunk(slot, k)

        if not preempted:
            waiting, free = sim.waiting, sim.free
            while waiting and free and budget > 0:
                rid = waiting[0]
                kv, left = self.saved.get(rid, (0, None))
                if left is None:  # new, or recompute: (re)prefill prompt + tokens emitted
                    left = sim.prompt[rid] + sim.emitted[rid]
                k = min(chunk, left, budget) if left else 1
                want = -(-_kv_after(kv, k, left) // bs)
                if want > total - used:
                    break
                waiting.popleft()
                if rid in self.saved:
                    del self.saved[rid]
                    held = -(-kv // bs)
                    self.swap_in_blocks += held
                    sim.add_cost(held * self.swap_ticks)
                slot_of[rid] = sim.admit(rid, k if left else chunk, prefill=left, kv0=kv)
                order.append(rid)
                grow[rid] = (kv, _kv_after(0, k, left))
                used += want
                budget -= k
        # The victims go back to the head of the queue, the oldest of them first.
        for v in preempted:
            sim.waiting.appendleft(v)
        self.preempted = bool(preempted)
        self.left = budget
        self.grow = grow

    def _schedule_unlimited(self):
        """schedule() without a KV limit: no blocks to count and nobody to preempt, so only the
        token budget shapes the pass (same rules, a fraction of the work per event)."""
        sim, chunk, slot_of = self.sim, self.chunk, self.slot_of
        res, passes = sim.res, sim.passes
        order, decodes, prefills = [], [], []
        for rid in self.order:
            slot = slot_of[rid]
            r = res[slot]
            if r is None or r.rid != rid:   # finished in the last run
                del slot_of[rid]
                continue
            order.append(rid)
            phase = r.phase
            if phase == DECODE:
                decodes.append(r)
                continue
            left = r.pf_left - (passes - r.pf_at) * r.chunk if phase == PREFILL else r.pf_left
            (prefills if left else decodes).append((r, left) if left else r)
        self.order = order
        budget = self.budget
        for i, r in enumerate(decodes):   # decodes first, one token each
            if i < budget:
                if r.phase == PAUSED:
                    sim.unpause(r.slot, chunk)
            else:
                sim.pause(r.slot)
        budget = max(0, budget - len(decodes))
        for r, left in prefills:          # then prefill chunks, oldest first
            k = min(chunk, left, budget)
            if k == 0:
                sim.pause(r.slot)
            elif r.phase == PAUSED:
                sim.unpause(r.slot, k)
            elif r.chunk != k:
                sim.set_chunk(r.slot, k)
            budget -= k
        waiting, free = sim.waiting, sim.free
        while waiting and free and budget > 0:
            rid = waiting.popleft()
            left = sim.prompt[rid] + sim.emitted[rid]
            k = min(chunk, left, budget)
            slot_of[rid] = sim.admit(rid, k, prefill=left)
            order.append(rid)
            budget -= k
        self.preempted = False
        self.left = budget

    def horizon(self):
        """Passes the batch can run before some request needs a block that is not free."""
        if self.preempted:
            return 1  # admission was skipped in this pass; it resumes in the next one
        total = self.blocks
        if total is None:
            return None
        sim, bs, grow = self.sim, self.block, self.grow.values()
        res, slot_of, passes = sim.res, self.slot_of, sim.passes
        kmax = min((res[slot_of[rid]].target for rid in self.order
                    if res[slot_of[rid]].phase != PAUSED), default=passes + 1) - passes

        def demand(j):
            return sum(-(-(kv + j * g) // bs) for kv, g in grow)

        if kmax <= 1 or demand(kmax) <= total:
            return None
        lo, hi = 1, kmax       # demand(lo) <= total (schedule() made room) < demand(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if demand(mid) <= total:
                lo = mid
            else:
                hi = mid
        return lo

    def wants_arrivals(self):
        return bool(self.sim.free) and self.left > 0

    def extra_metrics(self):
        return {"swap_out_blocks": self.swap_out_blocks, "swap_in_blocks": self.swap_in_blocks,
                "swap_ms": (self.swap_out_blocks + self.swap_in_blocks) * self.swap_ticks / 1e6,
                "recomputed_tokens": self.recomputed}
