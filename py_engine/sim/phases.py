"""Resident phases: the per-slot state machine the core runs and the aggregates it keeps.

A resident (one request in one slot) is in one phase at a time; each phase has an absolute target
pass (its last pass), kept in the core's heap (a one-pass FINAL phase sits in a short list instead):

    PREFILL  non-final prefill chunks: `chunk` tokens per pass         -> slot-step "prefill"
    FINAL    one pass: the last chunk (remainder tokens; 0 for a swapped-in resume) and one emitted
             token (the first token, or the next token of a resumed request)   -> "useful"
    DECODE   one token per pass                                      -> "useful"
    HOLD     finished but its slot is held (static group)             -> "padding"
    PAUSED   keeps its slot and KV but is not in the batch (vllm: over the token budget); not a
             row, no tokens, no segment: its slot-steps count as idle
A ghost resident (request id -1) is an empty row of a short static group: it pays cost like a
member but every slot-step of it is "padding".

Progress inside a phase is lazy: a resident records the pass its phase began (pf_at, dec_at) and
its work is computed when the phase ends or a policy looks. `Phases` is the part of `core.Sim` that
moves residents between phases and keeps the per-pass aggregates (rows, prefill tokens, useful,
prefill and padding rows, decoding rows whose gap is the pass cost) in step.
"""

import heapq

SLOT_BITS = 13                      # heap keys: target_pass << SLOT_BITS | slot (<= 8192 slots)
SLOT_KEY, SLOT_MASK = 1 << SLOT_BITS, (1 << SLOT_BITS) - 1
PREFILL, FINAL, DECODE, HOLD, PAUSED = 0, 1, 2, 3, 4
LABEL = ("prefill", "useful", "useful", "padding", None)      # a phase's slot-steps
PHASE_NAMES = ("prefill", "final", "decode", "hold", "paused")  # as policies read them


class Resident:
    __slots__ = ("rid", "slot", "phase", "pf_left", "pf_done", "chunk", "pf_at", "dec_at",
                 "out_left", "hold_until", "target", "label", "seg_start", "ghost",
                 "resumed", "kv0", "emit0")


class Phases:
    """Phase transitions of `core.Sim` (mixed in; every attribute used here is set by Sim)."""

    __slots__ = ()

    def _prefill_progress(self, r):
        done = (self.passes - r.pf_at) * r.chunk
        r.pf_left -= done
        r.pf_done += done
        r.pf_at = self.passes

    def _decode_progress(self, r):
        rid, k = r.rid, self.passes - r.dec_at
        if k:  # it emitted in every pass since dec_at, the last one ending now
            self.emitted[rid] += k
            r.out_left -= k
            r.dec_at = self.passes
            self.last_tick[rid] = self.now

    def _kv_of(self, r):
        kv = r.kv0 + r.pf_done + (0 if r.ghost else self.emitted[r.rid] - r.emit0)
        if r.phase == PREFILL:
            kv += (self.passes - r.pf_at) * r.chunk
        elif r.phase == DECODE:
            kv += self.passes - r.dec_at
        return kv

    def _enter_prefill(self, r):
        r.pf_at = self.passes
        n = -(-r.pf_left // r.chunk) if r.pf_left > 0 else 1
        if n >= 2:
            self._set_phase(r, PREFILL, self.passes + n - 1)
        else:
            self._set_phase(r, FINAL, self.passes + 1)

    def _set_phase(self, r, phase, target):
        r.phase = phase
        r.target = target
        if phase == FINAL:
            self._finals.append(r)  # a one-pass phase: no heap entry needed
        else:
            heapq.heappush(self._heap, target * SLOT_KEY + r.slot)
        label = "padding" if r.ghost else LABEL[phase]
        if label != r.label:
            if r.label is not None:
                self._close_segment(r)
            r.label = label
            r.seg_start = self.passes + 1
        if phase == PREFILL:
            self.ptoks += r.chunk
            if r.ghost:
                self.n_pad += 1
            else:
                self.n_prefill += 1
        elif phase == FINAL:
            self.ptoks += r.pf_left
            if r.ghost:
                self.n_pad += 1
            else:
                self.n_useful += 1
                if r.resumed:
                    self._pending_gaps.append(r)
        elif phase == DECODE:
            self.n_useful += 1
            self.n_gap += 1
        elif phase == HOLD:
            self.n_pad += 1

    def _unaggregate(self, r):
        phase = r.phase
        if phase == PREFILL:
            self.ptoks -= r.chunk
            if r.ghost:
                self.n_pad -= 1
            else:
                self.n_prefill -= 1
        elif phase == FINAL:
            self.ptoks -= r.pf_left
            if r.ghost:
                self.n_pad -= 1
            else:
                self.n_useful -= 1
                if r.resumed and r in self._pending_gaps:
                    self._pending_gaps.remove(r)
            if r in self._finals:
                self._finals.remove(r)
        elif phase == DECODE:
            self.n_useful -= 1
            self.n_gap -= 1
            if self._pending_gaps and r in self._pending_gaps:
                self._pending_gaps.remove(r)
        elif phase == HOLD:
            self.n_pad -= 1

    def _close_segment(self, r):
        if r.label is None or r.seg_start > self.passes:
            return
        self.rec.segment(r.slot, r.rid, r.label, r.seg_start, self.passes)

    def _transition(self, r):
        """r's phase ended with the pass just completed (self.passes == r.target)."""
        self._unaggregate(r)
        phase = r.phase
        passes = self.passes
        if phase == PREFILL:
            self._prefill_progress(r)
            self._set_phase(r, FINAL, passes + 1)
            return
        if phase == HOLD:
            self._retire(r)
            return
        rid = r.rid
        if phase == FINAL:
            r.pf_done += r.pf_left
            r.pf_left = 0
            r.resumed = False
            if not r.ghost:
                if self.emitted[rid] == 0:
                    self.first_pass[rid] = passes
                    self.first_tick[rid] = self.now
                self.emitted[rid] += 1
                self.last_tick[rid] = self.now
                r.out_left -= 1
            if r.out_left > 0:
                r.dec_at = passes
                self._set_phase(r, DECODE, passes + r.out_left)
                return
        else:  # DECODE: its last token was emitted in this pass
            self._decode_progress(r)
        r.phase = HOLD  # no lazy progress left to account
        if r.hold_until > passes:
            self._set_phase(r, HOLD, r.hold_until)
            return
        self._retire(r)

    def _free_slot(self, r):
        if r.rid >= 0:
            self.in_slot[r.rid] = 0
            self.n_in_slot -= 1
        self.res[r.slot] = None
        heapq.heappush(self.free, r.slot)
        self.n_resident -= 1
        self.rows -= 1

    def _retire(self, r):
        self._close_segment(r)
        self.kv -= self._kv_of(r)
        self._free_slot(r)
        if r.rid >= 0:
            self.done_pass[r.rid] = self.passes
            self.done_tick[r.rid] = self.now
            self.n_done += 1
