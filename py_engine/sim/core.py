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

The loop's stages are methods (the plain path, also what a fleet's replica steps through); under a
linear cost `run` executes them fused into one loop body (`_run_inline`, fused.py), the same steps in the
same order, tested equal to the plain path (Sim.inline_transitions).

Resident phases (PREFILL, FINAL, DECODE, HOLD, PAUSED) and their bookkeeping: phases.py.
What a run records (segments, the passes log, TBT gaps) is kept by `recorder.Recorder`.
"""

import heapq
import time
from array import array
from collections import deque

from ..errors import EngineError, PolicyError
from .exact import SUB, floor_sum
from .phases import DECODE, FINAL, HOLD, PAUSED, PREFILL, SLOT_BITS, SLOT_KEY, SLOT_MASK  # noqa: F401
from .recorder import Recorder
from .verbs import Verbs
from .fused import _run_inline
from .work import CHECK_WORK, EVENT_WORK, WorkCapExceeded


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


class Sim(Verbs):
    """State of one simulation. A policy sees it through a SimView (view.py) and acts by the
    verbs (verbs.py); the loop (`run`) is four stages: release arrivals, let the policy decide,
    find the run's length, execute it and end the phases that end with it."""

    # the two commonest phase ends inlined in _end_phases (a last chunk followed by decoding, a
    # last token with no hold), and under a linear cost the loop's stages fused into one body
    # (_run_inline); False runs the stages as methods and every phase end through
    # Phases._transition, the plain path the inlined one is tested against
    # (tests/engine/test_core_mechanics.py)
    inline_transitions = True
    _run_inline = _run_inline           # fused.py

    # every attribute a slot: a Sim has ~50, past the ~30 a shared-key instance dict holds, and
    # a slot's load and store are the cheapest there are (the loop does ~40 a run)
    __slots__ = ("n", "arrive", "prompt", "out", "slots", "cost", "now", "work", "work_cap",
                 "work_cap_final",
                 "last_start", "passes", "waiting", "next_arrival", "free", "res", "n_resident",
                 "n_done", "_heap", "_finals", "_wait_until", "_extra_cost", "_pending_gaps",
                 "rows", "ptoks", "n_useful", "n_prefill", "n_pad", "n_gap", "kv", "kv_peak",
                 "t_useful", "t_prefill", "t_pad", "t_rows", "admit_tick", "admit_pass",
                 "first_tick", "first_pass", "done_tick", "done_pass", "last_tick", "emitted",
                 "preemptions", "cached_tokens", "in_slot", "n_in_slot", "peak_in_slot", "rec",
                 "open", "phase_ended_at", "batch_edits", "_line_memo")

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
        # the cap itself, past which the run ends whatever the estimate (work_cap may be a probe's
        # share of it, where a run whose estimate fits goes on: api.run_steps)
        self.work_cap_final = None
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
        self.in_slot = bytearray(n)     # 1 while the request holds a slot (admit's check)
        self.n_in_slot = self.peak_in_slot = 0   # requests in slots now, and at most
        self.rec = Recorder(seg_cap, log_cap)   # segments, passes log, TBT gaps
        # a fleet's replica (fleet/run.py): requests are added as the router sends them, and
        # while `open` more may come, so an idle replica waits rather than finishing
        self.open = False
        # the last pass at whose end a resident's phase ended (-1: none yet): a policy that
        # reads it knows whether the run just ended changed any resident
        self.phase_ended_at = -1
        self.batch_edits = 0            # verbs that changed a resident so far (verbs.py)
        self._line_memo = None          # the roofline's sums at a pass (_run_line)

    def add_request(self, arrive, prompt, out):
        """A fleet's router sends request n (arriving at `arrive` ticks, at or after the last
        one added): it becomes known, and is released at the first decision at or after
        `arrive`. The trace's lists are the core's own (the policy sees the same lists)."""
        self.arrive.append(arrive)
        self.prompt.append(prompt)
        self.out.append(out)
        for col in (self.admit_tick, self.admit_pass, self.first_tick, self.first_pass,
                    self.done_tick, self.done_pass, self.last_tick):
            col.append(-1)
        for col in (self.emitted, self.preemptions, self.cached_tokens):
            col.append(0)
        self.in_slot.append(0)
        self.n += 1

    def _run_line(self, deployment):
        """The batch as the roofline sees it (roofline.py): per row its new tokens n and the
        context already in its KV; a decoding row's context grows by 1 per pass, a prefilling
        row's by its chunk, a held (static padding) row's not at all. -> run_line(...).
        A batch no verb and no phase end changed since the last call is the same rows, each
        context grown by its tokens a pass: its sums move on without a walk (a policy may end
        a run where nothing changed: vllm's arrival it cannot see yet)."""
        passes, memo = self.passes, self._line_memo
        if (memo is not None and memo[1] == self.batch_edits
                and self.phase_ended_at <= memo[0]):
            _, edits, tokens, rows, ctx, att, d_ctx, d_att = memo
            ctx += (passes - memo[0]) * d_ctx
            att += (passes - memo[0]) * d_att
        else:
            tokens, rows, ctx, att, d_ctx, d_att = self._line_sums()
        self._line_memo = (passes, self.batch_edits, tokens, rows, ctx, att, d_ctx, d_att)
        return deployment.run_line(tokens, rows, ctx, att, d_ctx, d_att, self.ptoks)

    def _line_sums(self):
        """_run_line's sums over the residents, walked."""
        tokens = rows = ctx = att = d_ctx = d_att = 0
        kv_of = self._kv_of
        # a walk over the residents, per run (work.py); the empty slots are skipped in C
        self.work += self.n_resident
        for r in filter(None, self.res):
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
        return tokens, rows, ctx, att, d_ctx, d_att

    # ------------------------------------------------------------ the loop
    def run(self, policy, until=None):
        """Run the simulation to its end, or (until = a time.perf_counter() value) until that time
        has passed, checked every CHECK_WORK units of work. Returns True when it is finished; a
        run that stopped early resumes exactly where it stopped on the next call (all state is in
        self). More work than work_cap raises WorkCapExceeded, also between two events."""
        if self.inline_transitions and self.cost.deployment is None:
            return self._run_inline(policy, until)
        n, cap, clock = self.n, self.work_cap, time.perf_counter
        # checks every CHECK_WORK units, and at the cap itself when it comes sooner
        stop = float("inf") if cap is None else cap + 1
        check_at = min(self.work + CHECK_WORK, stop)
        while self.n_done < n:
            self.work += EVENT_WORK
            if self.work >= check_at:     # the policy adds its own walks to work too
                check_at = min(self.work + CHECK_WORK, stop)
                if cap is not None and self.work > cap:
                    raise WorkCapExceeded(self.work, self.n_done, n)
                if until is not None and clock() > until:
                    return False
            self._release_arrivals()
            if not self._decide(policy):
                continue                  # no pass now: the clock jumped
            self._execute(policy, *self._run_length(policy))
            self._end_phases()
        return True

    def _release_arrivals(self):
        """Every request that has arrived by now joins `waiting`, in arrival order."""
        na, n, arrive, now, waiting = self.next_arrival, self.n, self.arrive, self.now, self.waiting
        while na < n and arrive[na] <= now:
            waiting.append(na)
            na += 1
        self.next_arrival = na

    def _decide(self, policy):
        """The policy shapes the batch. False: no pass runs now (it waited, or nothing is
        resident and the next arrival is ahead); the clock has jumped."""
        self._wait_until = None
        policy.schedule()
        if self._wait_until is not None or self.n_resident == 0:
            self._no_pass(policy)
            return False
        return True

    def _no_pass(self, policy):
        """The policy waited, or nothing is resident: jump the clock (or stay, a fleet's idle
        replica), or refuse a policy that left requests waiting with nothing resident."""
        if self._wait_until is not None:
            self.now = self._wait_until
            return
        if not self.waiting and self.next_arrival < self.n:
            self.now = self.arrive[self.next_arrival]  # idle: jump to the next arrival
            return
        if self.open:     # a replica idles until its router sends more (static: a group)
            return
        raise PolicyError("schedule", "%d requests wait and nothing is resident: %s admitted "
                          "none" % (len(self.waiting), policy.name))

    def _run_length(self, policy):
        """-> (k, cost, K, a, b): the passes the batch runs unchanged and how they cost (a linear
        cost: every pass `cost`; a growing one, pass i: K + ceil((a + b i) / SUB))."""
        passes, res, heap = self.passes, self.res, self._heap
        if self._finals:
            t = passes + 1  # a last chunk ends after the next pass
        else:
            while True:
                if not heap:
                    raise PolicyError("schedule", "%s paused every resident: no pass can run"
                                      % policy.name)
                key = heap[0]
                t = key >> SLOT_BITS
                r = res[key & SLOT_MASK]
                if r is not None and r.target == t:
                    break
                heapq.heappop(heap)
        k = t - passes
        line = self.cost.deployment     # None: every pass of a run costs the same
        cost = K = a = b = None
        if line is None:
            c = self.cost
            cost = c.fixed + c.per_row * self.rows + c.per_token * self.ptoks
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
        h = policy.horizon()
        if h is not None and h < k:
            if h < 1:
                raise PolicyError("horizon", "%s returned %r: at least 1 pass" % (policy.name, h))
            k = h
        na = self.next_arrival
        if na < self.n and not self.waiting and policy.wants_arrivals():
            # the first pass starting at/after the arrival
            dt = self.arrive[na] - self.now
            ka = -(-dt // cost) if line is None else _first_pass_at(dt, K, a, b, k)
            if ka < k:
                k = ka
        return k, cost, K, a, b

    def _execute(self, policy, k, cost, K, a, b):
        """Run k passes at once: the clock, the slot-step totals, TBT gaps, KV and the log."""
        now = self.now
        self.passes += k
        rec = self.rec
        if K is None:
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
                rec.gaps(now + cost - self.last_tick[r.rid], 1)
                if r.phase == DECODE:
                    n_gap -= 1
                    first_gaps -= 1
            self._pending_gaps.clear()
        if n_gap:
            if K is None or not b:
                rec.gaps(cost, n_gap)
            else:       # every pass's cost is a gap of every decoding row
                span = self.now - now    # the run's passes, priced above
                if first_gaps:
                    rec.gap_line(K, a, b, k, first_gaps, span)
                if first_gaps != self.n_gap and k > 1:
                    rec.gap_line(K, a + b, b, k - 1, self.n_gap - first_gaps, span - cost)
        self.kv = kv = self.kv + k * (ptoks + useful)
        if policy.kv_after is not None:    # the policy keeps its own account (vllm: blocks)
            kv = policy.kv_after(k)
        if kv > self.kv_peak:
            self.kv_peak = kv
        rec.run(k, now, rows, ptoks, cost, useful, kv, last)

    def _end_phases(self):
        """Every phase that ended with the pass just run: last chunks first, then every heap
        entry still matching its resident's target."""
        passes, now, res, heap = self.passes, self.now, self.res, self._heap
        emitted, last_tick = self.emitted, self.last_tick
        inline = self.inline_transitions
        if self._finals:
            self.phase_ended_at = passes
            finals = self._finals
            self._finals = []
            for r in finals:
                if not inline or r.ghost or r.hold_until > passes or r.out_left <= 1:
                    self._transition(r)
                    continue
                # FINAL -> DECODE (as _transition does it)
                rid = r.rid
                self.ptoks -= r.pf_left
                r.pf_done += r.pf_left
                r.pf_left = 0
                r.resumed = False
                e = emitted[rid]
                if e == 0:
                    self.first_pass[rid] = passes
                    self.first_tick[rid] = now
                emitted[rid] = e + 1
                last_tick[rid] = now
                r.out_left -= 1
                r.dec_at = passes
                r.phase = DECODE
                r.target = t = passes + r.out_left
                heapq.heappush(heap, t * SLOT_KEY + r.slot)
                self.n_gap += 1  # still useful, same segment label
        end_key = (passes + 1) * SLOT_KEY
        while heap and heap[0] < end_key:
            slot = heapq.heappop(heap) & SLOT_MASK
            r = res[slot]
            if r is None or r.target != passes:
                continue
            self.phase_ended_at = passes
            if not inline or r.ghost or r.hold_until > passes or r.phase != DECODE:
                self._transition(r)
                continue
            # DECODE -> done, slot freed at once (as _transition and _retire do it)
            rid = r.rid
            k = passes - r.dec_at
            emitted[rid] += k
            last_tick[rid] = now
            r.out_left -= k
            self.n_useful -= 1
            self.n_gap -= 1
            self.rec.segment(slot, rid, r.label, r.seg_start, passes)
            self.kv -= r.kv0 + r.pf_done + emitted[rid] - r.emit0
            res[slot] = None
            heapq.heappush(self.free, slot)
            self.in_slot[rid] = 0
            self.n_in_slot -= 1
            self.n_resident -= 1
            self.rows -= 1
            self.done_pass[rid] = passes
            self.done_tick[rid] = now
            self.n_done += 1
