"""The verbs a policy acts by (it reaches them through its SimView, sim/view.py), each checked.

A decision that breaks a rule of the core is refused with a PolicyError naming the verb and the
rule ("admit: no free slot"), before it changes anything: a built-in policy never makes one, a
user's policy learns exactly what it did wrong. The checks cost a few comparisons per decision.
`Verbs` is the part of core.Sim that changes residents on a policy's behalf (mixed in; every
attribute used here is set by Sim).
"""

from __future__ import annotations

import heapq

from ..errors import PolicyError
from .phases import DECODE, FINAL, HOLD, PAUSED, PREFILL, Phases, Resident
from .work import WorkCapExceeded


def _refuse(verb, rule):
    raise PolicyError(verb, rule)


class Verbs(Phases):
    __slots__ = ()

    def _resident(self, verb, slot):
        """The resident in `slot`, or a PolicyError naming `verb`."""
        if type(slot) is not int or not 0 <= slot < self.slots:
            _refuse(verb, "slot %r is not a slot number from 0 to %d" % (slot, self.slots - 1))
        r = self.res[slot]
        if r is None:
            _refuse(verb, "slot %d is empty" % slot)
        return r

    def admit(self, rid: int, chunk: int, prefill: int | None = None, hold_until: int = 0,
              kv0: int = 0) -> int:
        """Place request `rid` (already taken from `waiting` by the caller) in the lowest free slot.

        chunk: prompt tokens per pass while prefilling.
        prefill: tokens to process before its next token (default: its prompt; static passes the
            group's padded prompt; a recompute resume passes prompt + emitted; a swap resume 0).
        hold_until: absolute pass until which the slot stays held after the last token (static).
        kv0: KV tokens it brings back (a swap resume: prompt + emitted); its KV is then
            kv0 + prefill tokens processed + tokens emitted since this admission.
        Returns the slot.
        """
        free = self.free
        if not free:
            _refuse("admit", "no free slot (%d of %d in use)" % (self.n_resident, self.slots))
        if type(chunk) is not int or chunk < 1:
            _refuse("admit", "chunk must be an integer >= 1, not %r" % (chunk,))
        self.batch_edits += 1
        r = Resident()
        if rid >= 0:
            if type(rid) is not int or rid >= self.next_arrival:
                _refuse("admit", "request %r has not arrived" % (rid,))
            in_slot = self.in_slot
            if in_slot[rid]:
                _refuse("admit", "request %d is already in a slot" % rid)
            if self.done_pass[rid] >= 0:
                _refuse("admit", "request %d is finished" % rid)
            in_slot[rid] = 1
            self.n_in_slot = m = self.n_in_slot + 1
            if m > self.peak_in_slot:
                self.peak_in_slot = m
            e = self.emitted[rid]
            r.rid, r.ghost, r.out_left, r.emit0 = rid, False, self.out[rid] - e, e
            r.resumed = resumed = e > 0
            r.pf_left = pf = self.prompt[rid] if prefill is None else prefill
            if self.admit_pass[rid] < 0:
                self.admit_pass[rid] = self.passes + 1
                self.admit_tick[rid] = self.now
        else:
            r.rid, r.ghost, r.out_left, r.resumed, r.emit0 = -1, True, 0, False, 0
            r.pf_left = pf = prefill
            resumed = True     # (not the fast path below)
        slot = heapq.heappop(free)
        r.slot, r.chunk, r.hold_until, r.kv0 = slot, chunk, hold_until, kv0
        r.pf_done, r.dec_at = 0, -1
        if kv0:
            self.kv += kv0
        self.res[slot] = r
        self.n_resident += 1
        self.rows += 1
        if 0 < pf <= chunk and not resumed:  # fast path: straight to the last chunk
            r.pf_at = passes = self.passes
            r.phase = FINAL
            r.target = passes + 1
            self._finals.append(r)
            r.label = "useful"
            r.seg_start = passes + 1
            self.ptoks += pf
            self.n_useful += 1
        else:
            r.label = None
            self._enter_prefill(r)
        return slot

    def admit_ghost(self, chunk: int, prefill: int, hold_until: int) -> int:
        """An empty row of a static group: costs like a member, counted as padding."""
        return self.admit(-1, chunk, prefill, hold_until)

    def set_chunk(self, slot: int, chunk: int) -> None:
        """Change a prefilling resident's tokens per pass (takes effect from the next pass)."""
        r = self._resident("set_chunk", slot)
        if type(chunk) is not int or chunk < 1:
            _refuse("set_chunk", "chunk must be an integer >= 1, not %r" % (chunk,))
        self.batch_edits += 1
        if r.phase == PREFILL:
            self._unaggregate(r)
            self._prefill_progress(r)
            r.chunk = chunk
            self._enter_prefill(r)
        elif r.phase == FINAL and chunk != r.chunk:
            self._unaggregate(r)
            r.chunk = chunk
            self._enter_prefill(r)

    def schedule_tokens(self, slot: int, n: int) -> None:
        """The resident processes n tokens in the next pass (vLLM's num_scheduled_tokens): a
        paused one comes back, a prefilling one takes n per pass, a decoding one goes on."""
        r = self._resident("schedule_tokens", slot)
        phase = r.phase
        if phase == PAUSED:
            self.unpause(slot, n)
        elif phase == PREFILL:
            if r.chunk != n:
                self.set_chunk(slot, n)
        elif phase == FINAL and r.pf_left != n:
            self.set_chunk(slot, n)

    def evict(self, slot: int) -> int:
        """Remove a resident (preemption): its KV is dropped, its emitted tokens stay emitted.

        Returns the request id; the caller decides where to requeue it (vLLM: waiting.appendleft).
        """
        r = self._resident("evict", slot)
        if r.ghost:
            _refuse("evict", "slot %d holds an empty row of a static group" % slot)
        self.batch_edits += 1
        if r.phase == PAUSED:
            self.rows += 1  # _free_slot removes its row again
        self._unaggregate(r)
        if r.phase == PREFILL:
            self._prefill_progress(r)
        elif r.phase == DECODE:
            self._decode_progress(r)
        r.phase = HOLD
        self._close_segment(r)
        self.kv -= self._kv_of(r)
        self._free_slot(r)
        self.preemptions[r.rid] += 1
        return r.rid

    def pause(self, slot: int) -> None:
        """Keep the resident's slot and KV but leave it out of the next passes (no row, no tokens)."""
        r = self._resident("pause", slot)
        if r.phase == PAUSED:
            return
        if r.phase == HOLD:
            _refuse("pause", "slot %d holds a finished request (its slot is held)" % slot)
        self.batch_edits += 1
        self._unaggregate(r)
        if r.phase == PREFILL:
            self._prefill_progress(r)
        elif r.phase == DECODE:
            self._decode_progress(r)
        self._close_segment(r)
        r.label = None
        r.target = -1  # its heap entry goes stale
        r.phase = PAUSED
        self.rows -= 1

    def unpause(self, slot: int, chunk: int) -> None:
        """Put a paused resident back in the batch from the next pass, prefilling `chunk` per pass."""
        r = self._resident("unpause", slot)
        if r.phase != PAUSED:
            return
        if type(chunk) is not int or chunk < 1:
            _refuse("unpause", "chunk must be an integer >= 1, not %r" % (chunk,))
        self.batch_edits += 1
        self.rows += 1
        r.chunk = chunk
        if r.pf_left == 0 and r.dec_at >= 0:  # it was decoding: continue, gap from its last token
            r.dec_at = self.passes
            self._set_phase(r, DECODE, self.passes + r.out_left)
            self._pending_gaps.append(r)
        else:
            self._enter_prefill(r)

    def wait_until(self, tick: int) -> None:
        """Run no pass now; jump the clock to `tick` (> now), e.g. a static group waiting to fill."""
        if type(tick) is not int or tick <= self.now:
            _refuse("wait_until", "the time must be an integer tick after now (%d), not %r"
                    % (self.now, tick))
        self._wait_until = tick

    def add_cost(self, ticks: int) -> None:
        """Add `ticks` to the cost of the next pass only (e.g. a swap transfer)."""
        if type(ticks) is not int or ticks < 0:
            _refuse("add_cost", "ticks must be an integer >= 0, not %r" % (ticks,))
        self._extra_cost += ticks

    def count_work(self, units: int) -> None:
        """Work the policy did in its own per-event walks (sim/work.py): the cap counts it."""
        self.work += units

    def count_work_ahead(self, units: int) -> None:
        """Work the policy is about to do in one go (a walk of its whole state): counted now, and
        past the cap itself it is not done (WorkCapExceeded here, not at the core's next look).
        Only the cap itself: that ends the run, where a probe's share of it may go on, and a run
        must go on only from between two events."""
        self.work += units
        if self.work_cap_final is not None and self.work > self.work_cap_final:
            raise WorkCapExceeded(self.work, self.n_done, self.n)

    def record_prefix_hit(self, rid: int, tokens: int) -> None:
        """Prompt tokens of `rid` a prefix cache served at its first admission."""
        self.cached_tokens[rid] = tokens

    def count_preemption(self, rid: int) -> None:
        """A preemption of a request that holds no slot (vLLM's async scheduling: preempted while
        its last token was in flight); evict() counts the others."""
        self.preemptions[rid] += 1

    def resident_kv(self, slot: int) -> int:
        """KV tokens held by the resident in `slot` now: prompt tokens processed + tokens emitted."""
        return self._kv_of(self._resident("resident_kv", slot))
