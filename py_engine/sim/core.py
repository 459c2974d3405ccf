"""The event-driven core: an integer clock, resident slots, and runs of identical passes.

Between events (an admission, a last prefill chunk, a last token, a static group's end, an arrival
that could be admitted) every pass has the same rows, prefill tokens and cost, so the core executes
a whole *run* of k identical passes at once. Each resident has one absolute target pass (the last
pass of its current phase) in a heap (a one-pass last-chunk phase sits in a short list instead), so
finding k costs O(log slots) and the work of a simulation grows with events, not with passes x
slots.

Loop (`Sim.run`), time `now` in integer ticks, `passes` = passes completed so far:

    release arrivals (arrive <= now) into `waiting`          # FCFS queue, arrival order
    policy.schedule()                                       # admit / evict / set chunks / wait
    if nothing resident: jump `now` to the next arrival      # no pass happens
    k = min(heap target - passes, policy.horizon(),
            passes until the next arrival if policy.wants_arrivals())
    passes += k; now += k * cost                            # one run of identical passes
    retire/transition every resident whose target == passes

A pass that starts at time t admits requests with arrive <= t (the next run is cut at the first pass
whose start time is >= the next arrival, computed exactly in ticks).

Resident phases (PREFILL, FINAL, DECODE, HOLD, PAUSED) and their bookkeeping: phases.py.
What a run records (segments, the passes log, TBT gaps) is kept by `recorder.Recorder`.
"""

import heapq
import time
from array import array
from collections import deque

from ..errors import EngineError
from .phases import (DECODE, FINAL, HOLD, PAUSED, PREFILL, SLOT_BITS, SLOT_KEY,  # noqa: F401
                     SLOT_MASK, Phases, Resident)
from .recorder import Recorder
from .exact import SUB, floor_sum
from .work import EVENT_WORK, WorkCapExceeded

CHECK_WORK = 2560   # work units (work.py) between checks of the cap and the deadline: ~3 ms


def _first_pass_at(dt, K, a, b, k):
    """The first pass index j (1..k, or k + 1) of a run whose passes cost K + ceil((a + b i) /
    SUB) that starts at least dt after the run's start (dt > 0)."""
    def start(j):
        return j * K + floor_sum(j, SUB, b, a + SUB - 1)
    if start(k) < dt:
        return k + 1
    lo, hi = 0, k              # start(lo) < dt <= start(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if start(mid) < dt:
            lo = mid
        else:
            hi = mid
    return hi


class Sim(Phases):
    """State of one simulation. Policies read it and act on it through the methods below."""

    def __init__(self, trace, slots, cost, seg_cap=None, log_cap=None):
        arrive, prompt, out = trace
        n = len(arrive)
        if not 1 <= slots <= SLOT_MASK + 1:
            raise EngineError("slots must be 1..%d, not %r" % (SLOT_MASK + 1, slots))
        self.n = n
        self.arrive, self.prompt, self.out = arrive, prompt, out
        self.slots, self.cost = slots, cost
        self.now = 0
        # work done so far (work.py): EVENT_WORK per event of the loop below plus what the policy
        # adds for its own per-event walks; at more than work_cap the run stops
        self.work = 0
        self.work_cap = None
        self.last_start = 0             # start of the last pass run
        self.passes = 0
        self.waiting = deque()          # arrived, not resident, FCFS (policies may appendleft)
        self.next_arrival = 0           # index of the first request not yet released
        self.free = list(range(slots))  # heap of free slot numbers (lowest first)
        self.res = [None] * slots       # slot -> Resident or None
        self.n_resident = 0
        self.n_done = 0
        # phase ends: ints target * SLOT_KEY + slot (int compares are fast); an entry is stale
        # unless res[slot].target is still its target (then acting on it is right anyway)
        self._heap = []
        self._finals = []               # residents in FINAL: their phase ends after the next pass
        self._wait_until = None
        self._extra_cost = 0
        self._pending_gaps = []         # residents whose next token's gap is not the pass cost
                                        # (first token after a preemption or a pause)
        # per-pass aggregates of the current batch
        self.rows = self.ptoks = self.n_useful = self.n_prefill = self.n_pad = self.n_gap = 0
        self.kv = 0                     # tokens in KV over residents: prefilled + emitted
        self.kv_peak = 0
        # totals over the run (slot-steps)
        self.t_useful = self.t_prefill = self.t_pad = self.t_rows = 0
        # per request (ticks, 1-based passes); -1 = not yet
        z = [-1] * n
        self.admit_tick = array("q", z)
        self.admit_pass = array("q", z)
        self.first_tick = array("q", z)
        self.first_pass = array("q", z)
        self.done_tick = array("q", z)
        self.done_pass = array("q", z)
        self.last_tick = array("q", z)
        self.emitted = array("q", [0] * n)
        self.preemptions = array("q", [0] * n)
        self.cached_tokens = array("q", [0] * n)   # prompt tokens a prefix cache served
        self.rec = Recorder(seg_cap, log_cap)   # segments, passes log, TBT gaps

    # ------------------------------------------------------------ policy API
    def admit(self, rid, chunk, prefill=None, hold_until=0, kv0=0):
        """Place request `rid` (already taken from `waiting` by the caller) in the lowest free slot.

        chunk: prompt tokens per pass while prefilling.
        prefill: tokens to process before its next token (default: its prompt; static passes the
            group's padded prompt; a recompute resume passes prompt + emitted; a swap resume 0).
        hold_until: absolute pass until which the slot stays held after the last token (static).
        kv0: KV tokens it brings back (a swap resume: prompt + emitted); its KV is then
            kv0 + prefill tokens processed + tokens emitted since this admission.
        Returns the slot.
        """
        slot = heapq.heappop(self.free)
        r = Resident()
        r.slot, r.chunk, r.hold_until, r.kv0 = slot, chunk, hold_until, kv0
        r.pf_done, r.dec_at, r.label = 0, -1, None
        if rid < 0:
            r.rid, r.ghost, r.out_left, r.resumed, r.emit0 = -1, True, 0, False, 0
            r.pf_left = prefill
        else:
            e = self.emitted[rid]
            r.rid, r.ghost, r.out_left, r.resumed, r.emit0 = rid, False, self.out[rid] - e, e > 0, e
            r.pf_left = self.prompt[rid] if prefill is None else prefill
            if self.admit_pass[rid] < 0:
                self.admit_pass[rid] = self.passes + 1
                self.admit_tick[rid] = self.now
        self.kv += kv0
        self.res[slot] = r
        self.n_resident += 1
        self.rows += 1
        pf = r.pf_left
        if 0 < pf <= chunk and not r.resumed and rid >= 0:  # fast path: straight to the last chunk
            r.pf_at = passes = self.passes
            r.phase = FINAL
            r.target = passes + 1
            self._finals.append(r)
            r.label = "useful"
            r.seg_start = passes + 1
            self.ptoks += pf
            self.n_useful += 1
        else:
            self._enter_prefill(r)
        return slot

    def admit_ghost(self, chunk, prefill, hold_until):
        """An empty row of a static group: costs like a member, counted as padding."""
        return self.admit(-1, chunk, prefill, hold_until)

    def set_chunk(self, slot, chunk):
        """Change a prefilling resident's tokens per pass (takes effect from the next pass)."""
        r = self.res[slot]
        if r.phase == PREFILL:
            self._unaggregate(r)
            self._prefill_progress(r)
            r.chunk = chunk
            self._enter_prefill(r)
        elif r.phase == FINAL and chunk != r.chunk:
            self._unaggregate(r)
            r.chunk = chunk
            self._enter_prefill(r)

    def evict(self, slot):
        """Remove a resident (preemption): its KV is dropped, its emitted tokens stay emitted.

        Returns the request id; the caller decides where to requeue it (vLLM: waiting.appendleft).
        """
        r = self.res[slot]
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
        if r.rid >= 0:
            self.preemptions[r.rid] += 1
        return r.rid

    def pause(self, slot):
        """Keep the resident's slot and KV but leave it out of the next passes (no row, no tokens)."""
        r = self.res[slot]
        if r.phase == PAUSED:
            return
        self._unaggregate(r)
        if r.phase == PREFILL:
            self._prefill_progress(r)
        elif r.phase == DECODE:
            self._decode_progress(r)
        elif r.phase == HOLD:
            raise EngineError("cannot pause a held (finished) resident")
        self._close_segment(r)
        r.label = None
        r.target = -1  # its heap entry goes stale
        r.phase = PAUSED
        self.rows -= 1

    def unpause(self, slot, chunk):
        """Put a paused resident back in the batch from the next pass, prefilling `chunk` per pass."""
        r = self.res[slot]
        if r.phase != PAUSED:
            return
        self.rows += 1
        r.chunk = chunk
        if r.pf_left == 0 and r.dec_at >= 0:  # it was decoding: continue, gap from its last token
            r.dec_at = self.passes
            self._set_phase(r, DECODE, self.passes + r.out_left)
            self._pending_gaps.append(r)
        else:
            self._enter_prefill(r)

    def wait_until(self, tick):
        """Run no pass now; jump the clock to `tick` (> now), e.g. a static group waiting to fill."""
        self._wait_until = tick

    def add_cost(self, ticks):
        """Add `ticks` to the cost of the next pass only (e.g. a swap transfer)."""
        self._extra_cost += ticks

    def resident_kv(self, slot):
        """KV tokens held by the resident in `slot` now: prompt tokens processed + tokens emitted."""
        return self._kv_of(self.res[slot])

    def _run_line(self, deployment):
        """The batch as the roofline sees it (roofline.py): per row its new tokens n and the
        context already in its KV; a decoding row's context grows by 1 per pass, a prefilling
        row's by its chunk, a held (static padding) row's not at all. -> run_line(...)."""
        tokens = rows = ctx = att = d_ctx = d_att = 0
        kv_of = self._kv_of
        self.work += len(self.res)       # a walk over every slot, per run (work.py)
        for r in self.res:
            if r is None:
                continue
            phase = r.phase
            if phase == PAUSED:
                continue
            rows += 1
            kv = kv_of(r)
            if phase == PREFILL:
                n = r.chunk
            elif phase == FINAL:
                n = r.pf_left or 1
            elif phase == DECODE:
                n, kv = 1, kv - 1      # it feeds its last token, whose KV is not cached yet
            else:                      # HOLD: a padding row, its context does not grow
                tokens += 1
                ctx += kv
                att += kv + 1
                continue
            tokens += n
            ctx += kv
            att += n * kv + n * (n + 1) // 2
            d_ctx += n
            d_att += n * n
        return deployment.run_line(tokens, rows, ctx, att, d_ctx, d_att, self.ptoks)

    # ------------------------------------------------------------ the loop
    def run(self, policy, until=None):
        """Run the simulation to its end, or (until = a time.perf_counter() value) until that time
        has passed, checked every CHECK_WORK units of work. Returns True when it is finished; a
        run that stopped early resumes exactly where it stopped on the next call (all state is in
        self). More work than work_cap raises WorkCapExceeded, also between two events."""
        n, arrive, res, heap = self.n, self.arrive, self.res, self._heap
        cost_m = self.cost
        fixed, per_row, per_token = cost_m.fixed, cost_m.per_row, cost_m.per_token
        line = cost_m.deployment     # None: every pass of a run costs the same
        rec = self.rec
        add_gaps, add_run, add_segment = rec.gaps, rec.run, rec.segment
        heappop, heappush = heapq.heappop, heapq.heappush
        waiting, free = self.waiting, self.free
        emitted, last_tick = self.emitted, self.last_tick
        first_pass, first_tick = self.first_pass, self.first_tick
        done_pass, done_tick = self.done_pass, self.done_tick
        schedule, horizon, wants_arrivals = policy.schedule, policy.horizon, policy.wants_arrivals
        kv_after = policy.kv_after      # None: KV = the residents' tokens
        clock, cap = time.perf_counter, self.work_cap
        check_at = self.work + CHECK_WORK
        while self.n_done < n:
            self.work += EVENT_WORK
            if self.work >= check_at:     # the policy adds its own walks to work too
                check_at = self.work + CHECK_WORK
                if cap is not None and self.work > cap:
                    raise WorkCapExceeded(self.work, self.n_done, n)
                if until is not None and clock() > until:
                    return False
            na = self.next_arrival
            now = self.now
            while na < n and arrive[na] <= now:
                waiting.append(na)
                na += 1
            self.next_arrival = na
            self._wait_until = None
            schedule()
            if self._wait_until is not None:
                if self._wait_until <= now:
                    raise EngineError("policy %s waited for a time not in the future" % policy.name)
                self.now = self._wait_until
                continue
            if self.n_resident == 0:
                if not waiting and na < n:
                    self.now = arrive[na]  # idle: jump to the next arrival, no pass
                    continue
                raise EngineError("policy %s stalled with %d waiting and nothing resident"
                                  % (policy.name, len(waiting)))
            passes = self.passes
            if self._finals:
                t = passes + 1  # a last chunk ends after the next pass
            else:
                while True:
                    if not heap:
                        raise EngineError("policy %s paused every resident: no pass can run"
                                          % policy.name)
                    key = heap[0]
                    t = key >> SLOT_BITS
                    r = res[key & SLOT_MASK]
                    if r is not None and r.target == t:
                        break
                    heappop(heap)
            k = t - passes
            if line is None:
                cost = fixed + per_row * self.rows + per_token * self.ptoks
            else:   # pass i of the run costs K + ceil((a + b i) / SUB) (cost.py, roofline.py)
                K, a, b, cross = self._run_line(line)
                if cross is not None and cross < k:
                    k = cross      # the roofline's other bound takes over there: a new run
            if self._extra_cost:
                if line is None:
                    cost += self._extra_cost
                else:
                    a += self._extra_cost * SUB
                self._extra_cost = 0
                k = 1
            h = horizon()
            if h is not None and h < k:
                if h < 1:
                    raise EngineError("policy %s returned horizon %r < 1" % (policy.name, h))
                k = h
            if na < n and not waiting and wants_arrivals():
                # the first pass starting at/after the arrival
                if line is None:
                    ka = -(-(arrive[na] - now) // cost)
                else:
                    ka = _first_pass_at(arrive[na] - now, K, a, b, k)
                if ka < k:
                    k = ka
            # ---- execute k passes (identical, or growing by a known line)
            passes += k
            self.passes = passes
            if line is None:
                last = cost
                self.now = now + k * cost
            else:
                cost = K + -(-a // SUB)
                last = K + -(-(a + b * (k - 1)) // SUB)
                self.now = now + k * K + floor_sum(k, SUB, b, a + SUB - 1)
            self.last_start = self.now - last
            useful, rows, ptoks = self.n_useful, self.rows, self.ptoks
            self.t_useful += k * useful
            if self.n_prefill:
                self.t_prefill += k * self.n_prefill
            if self.n_pad:
                self.t_pad += k * self.n_pad
            self.t_rows += k * rows
            n_gap = k * self.n_gap
            first_gaps = self.n_gap   # decoding rows whose gap in the run's first pass is its cost
            if self._pending_gaps:  # first token after a preemption / pause: gap from the last one
                for r in self._pending_gaps:
                    add_gaps(now + cost - self.last_tick[r.rid], 1)
                    if r.phase == DECODE:
                        n_gap -= 1
                        first_gaps -= 1
                self._pending_gaps.clear()
            if n_gap:
                if line is None or not b:
                    add_gaps(cost, n_gap)
                else:       # every pass's cost is a gap of every decoding row
                    if first_gaps:
                        rec.gap_line(K, a, b, k, first_gaps)
                    if first_gaps != self.n_gap and k > 1:
                        rec.gap_line(K, a + b, b, k - 1, self.n_gap - first_gaps)
            self.kv = kv = self.kv + k * (ptoks + useful)
            if kv_after is not None:
                kv = kv_after(k)
            if kv > self.kv_peak:
                self.kv_peak = kv
            add_run(k, now, rows, ptoks, cost, useful, kv, last)
            # ---- phase ends: last chunks first (then every heap entry still matching its
            # resident's target is live). The two commonest transitions are inlined (same effect as
            # _transition, which handles every case): a last chunk followed by decoding, and a
            # last token with no hold.
            now = self.now
            if self._finals:
                finals = self._finals
                self._finals = []
                for r in finals:
                    if r.ghost or r.hold_until > passes or r.out_left <= 1:
                        self._transition(r)
                        continue
                    rid = r.rid
                    self.ptoks -= r.pf_left
                    r.pf_done += r.pf_left
                    r.pf_left = 0
                    r.resumed = False
                    e = emitted[rid]
                    if e == 0:
                        first_pass[rid] = passes
                        first_tick[rid] = now
                    emitted[rid] = e + 1
                    last_tick[rid] = now
                    r.out_left -= 1
                    r.dec_at = passes
                    r.phase = DECODE
                    r.target = t = passes + r.out_left
                    heappush(heap, t * SLOT_KEY + r.slot)
                    self.n_gap += 1  # still useful, same segment label
            end_key = (passes + 1) * SLOT_KEY
            while heap and heap[0] < end_key:
                slot = heappop(heap) & SLOT_MASK
                r = res[slot]
                if r is None or r.target != passes:
                    continue
                if r.ghost or r.hold_until > passes or r.phase != DECODE:
                    self._transition(r)
                    continue
                # DECODE -> done, slot freed at once
                rid = r.rid
                k = passes - r.dec_at
                emitted[rid] += k
                last_tick[rid] = now
                r.out_left -= k
                self.n_useful -= 1
                self.n_gap -= 1
                add_segment(slot, rid, r.label, r.seg_start, passes)
                self.kv -= r.kv0 + r.pf_done + emitted[rid] - r.emit0
                res[slot] = None
                heappush(free, slot)
                self.n_resident -= 1
                self.rows -= 1
                done_pass[rid] = passes
                done_tick[rid] = now
                self.n_done += 1
        return True
