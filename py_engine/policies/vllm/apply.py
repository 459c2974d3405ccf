"""The planned step told to the core (mixed into scheduler.VLLM): victims evicted, every scheduled
request's tokens for the next run (a paused one unpaused, one left out paused), admissions
placed in slots, and the swap's transfer time added to the pass."""

from itertools import chain

NOT_SAMPLING = (0, False)


class Apply:

    def _apply(self, sched, preempted, admitted):
        sim, slot_of = self.sim, self.slot_of
        told = self.told
        for v in preempted:
            told.pop(v, None)
            slot = slot_of.pop(v, None)
            if slot is not None:
                sim.evict(slot)
            else:        # async: preempted while its last token was in flight
                sim.count_preemption(v)
        # the steady decoders go on as they are; requests that became steady in this step are
        # in sched (a paused one is unpaused). A request told the same tokens as last time is
        # skipped: its resident's chunk is those tokens, and schedule_tokens would do nothing
        # (a plan at once listed the special requests to tell: told other tokens, or lingering)
        step, joined = self.step, self.sd_joined
        for r in chain(self.special if self.tell is None else self.tell, joined):
            n = sched.get(r)
            if n is not None and told.get(r) == n:
                continue
            slot = slot_of.get(r)
            if slot is None or r in admitted:
                continue
            if sim.occupant(slot) != r:   # finished, its output not processed yet
                continue
            if n is None:
                sim.pause(slot)
                told.pop(r, None)
            else:
                sim.schedule_tokens(slot, n)
                told[r] = 1 if step.get(r, NOT_SAMPLING)[1] else n
        joined.clear()
        num_tokens = self.num_tokens
        for r, start in admitted.items():
            n = sched[r]
            # a request that samples in this pass decodes after it, one token a pass: told so,
            # its next plan need not tell its resident (schedule_tokens would do nothing)
            told[r] = 1 if step.get(r, NOT_SAMPLING)[1] else n
            slot_of[r] = sim.admit(r, n, prefill=num_tokens[r] - start, kv0=start)
        if self.swap_extra:
            sim.add_cost(self.swap_extra)
            self.swap_extra = 0
