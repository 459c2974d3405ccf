"""The core's loop fused (bound as core.Sim._run_inline): under a linear cost `Sim.run` executes
its stages (release arrivals, decide, run length, execute, end phases) in one loop body, the
commonest phase ends inlined and the recorder's lists filled in place. The same steps in the same
order as the plain methods in core.py, which stay what a roofline cost and a fleet's replica step
through; tests/engine/test_core_mechanics.py holds the two equal (Sim.inline_transitions off runs
the plain path). At ~2 runs per request this loop is the cost of a big run."""

import heapq
import time

from ..errors import PolicyError
from .phases import DECODE, FINAL, PREFILL, SLOT_BITS, SLOT_KEY, SLOT_MASK
from .work import CHECK_WORK, EVENT_WORK, WorkCapExceeded


def _run_inline(self, policy, until):
    """run() under a linear cost with its stages (release, decide, run length, execute, end
    phases) fused into one loop body, the two commonest phase ends inlined and the
    recorder's lists filled in place: the same steps in the same order as the plain loop,
    without a method call or an attribute walk per stage (at ~2 runs per request this loop
    is the cost of a big run)."""
    n, cap, clock = self.n, self.work_cap, time.perf_counter
    stop = float("inf") if cap is None else cap + 1
    check_at = min(self.work + CHECK_WORK, stop)
    arrive, waiting, res, heap = self.arrive, self.waiting, self.res, self._heap
    free = self.free
    # the per-request columns through memoryviews: an item store into an array('q') parses
    # its argument (PyArg_Parse), a memoryview's converts it directly (~1/4 cheaper)
    cols = tuple(map(memoryview, (self.emitted, self.last_tick, self.first_pass,
                                  self.first_tick, self.done_pass, self.done_tick)))
    emitted, last_tick, first_pass, first_tick, done_pass, done_tick = cols
    in_slot = self.in_slot
    c = self.cost
    fixed, per_row, per_token = c.fixed, c.per_row, c.per_token
    rec = self.rec
    segs, runs, gw = rec.segments, rec.runs, rec.gap_weights
    seg_cap = float("inf") if rec.seg_cap is None else rec.seg_cap
    log_left = float("inf") if rec.log_cap is None else rec.log_cap - len(runs)
    # totals no policy reads, kept in locals and stored back however the loop ends
    t_useful, t_prefill, t_pad, t_rows = self.t_useful, self.t_prefill, self.t_pad, self.t_rows
    kv_peak, n_runs = self.kv_peak, rec.n_runs
    schedule, horizon, wants = policy.schedule, policy.horizon, policy.wants_arrivals
    # a hook the policy keeps at the base's default (policies/base.py) is not called: the
    # default horizon is none, the default wants_arrivals a free slot
    if getattr(horizon, "default_hook", False):
        horizon = None
    if getattr(wants, "default_hook", False):
        wants = None
    only_free = getattr(schedule, "only_free_slots", False)
    kv_after = policy.kv_after
    heappop, heappush, transition = heapq.heappop, heapq.heappush, self._transition
    try:
        while self.n_done < n:
            self.work = work = self.work + EVENT_WORK
            if work >= check_at:
                check_at = min(work + CHECK_WORK, stop)
                if cap is not None and work > cap:
                    raise WorkCapExceeded(work, self.n_done, n)
                if until is not None and clock() > until:
                    return False
            # release arrivals
            now, na = self.now, self.next_arrival
            if na < n and arrive[na] <= now:
                while na < n and arrive[na] <= now:
                    waiting.append(na)
                    na += 1
                self.next_arrival = na
            # decide
            self._wait_until = None
            if not only_free or (free and waiting):
                schedule()
            if self._wait_until is not None or not self.n_resident:
                self._no_pass(policy)
                continue
            # the run's length
            passes = self.passes
            if self._finals:
                t = passes + 1
            else:       # the first live heap entry (stale ones dropped)
                while heap:
                    key = heap[0]
                    t = key >> SLOT_BITS
                    r = res[key & SLOT_MASK]
                    if r is not None and r.target == t:
                        break
                    heappop(heap)
                else:
                    raise PolicyError("schedule", "%s paused every resident: no pass can "
                                      "run" % policy.name)
            k = t - passes
            rows, ptoks = self.rows, self.ptoks
            cost = fixed + per_row * rows + per_token * ptoks
            if self._extra_cost:
                cost += self._extra_cost
                self._extra_cost = 0
                k = 1
            if horizon is not None:
                h = horizon()
                if h is not None and h < k:
                    if h < 1:
                        raise PolicyError("horizon", "%s returned %r: at least 1 pass"
                                          % (policy.name, h))
                    k = h
            if na < n and not waiting and (free if wants is None else wants()):
                ka = -(-(arrive[na] - now) // cost)
                if ka < k:
                    k = ka
            # execute the k passes
            self.passes = passes = passes + k
            self.now = end = now + k * cost
            self.last_start = end - cost
            useful = self.n_useful
            t_useful += k * useful
            if self.n_prefill:
                t_prefill += k * self.n_prefill
            if self.n_pad:
                t_pad += k * self.n_pad
            t_rows += k * rows
            n_gap = k * self.n_gap
            if self._pending_gaps:
                for r in self._pending_gaps:
                    rec.gaps(now + cost - last_tick[r.rid], 1)
                    if r.phase == DECODE:
                        n_gap -= 1
                self._pending_gaps.clear()
            if n_gap:
                gw[cost] = gw.get(cost, 0) + n_gap
            self.kv = kv = self.kv + k * (ptoks + useful)
            if kv_after is not None:
                kv = kv_after(k)
            if kv > kv_peak:
                kv_peak = kv
            n_runs += 1
            if log_left > 0:
                runs.append((k, now, rows, ptoks, cost, useful, kv, cost))
                log_left -= 1
            else:
                rec.log_truncated = True
            # end the phases that ended with it (as _end_phases)
            if self._finals:
                self.phase_ended_at = passes
                finals = self._finals
                self._finals = []     # (_transition's _unaggregate looks in it)
                for r in finals:
                    if r.ghost or r.hold_until > passes or r.out_left <= 1:
                        transition(r)
                        continue
                    rid = r.rid
                    self.ptoks -= r.pf_left
                    r.pf_done += r.pf_left
                    r.pf_left = 0
                    r.resumed = False
                    e = emitted[rid]
                    if e == 0:
                        first_pass[rid] = passes
                        first_tick[rid] = end
                    emitted[rid] = e + 1
                    last_tick[rid] = end
                    r.out_left -= 1
                    r.dec_at = passes
                    r.phase = DECODE
                    r.target = t = passes + r.out_left
                    heappush(heap, t * SLOT_KEY + r.slot)
                    self.n_gap += 1
            end_key = (passes + 1) * SLOT_KEY
            while heap and heap[0] < end_key:
                slot = heappop(heap) & SLOT_MASK
                r = res[slot]
                if r is None or r.target != passes:
                    continue
                self.phase_ended_at = passes
                phase = r.phase
                if phase == DECODE and r.hold_until <= passes and not r.ghost:
                    # its last token: done, slot freed at once (as _transition, _retire)
                    rid = r.rid
                    e = emitted[rid] + passes - r.dec_at
                    emitted[rid] = e
                    last_tick[rid] = end
                    self.n_useful -= 1
                    self.n_gap -= 1
                    if len(segs) < seg_cap:
                        segs.append((slot, rid, r.label, r.seg_start, passes))
                    else:
                        rec.seg_truncated = True
                    self.kv -= r.kv0 + r.pf_done + e - r.emit0
                    res[slot] = None     # (r is dropped: its out_left is left as it was)
                    heappush(free, slot)
                    in_slot[rid] = 0
                    self.n_in_slot -= 1
                    self.n_resident -= 1
                    self.rows -= 1
                    done_pass[rid] = passes
                    done_tick[rid] = end
                    self.n_done += 1
                elif phase == PREFILL and not r.ghost:     # -> its last chunk (as _transition)
                    chunk = r.chunk
                    done = (passes - r.pf_at) * chunk
                    r.pf_left = left = r.pf_left - done
                    r.pf_done += done
                    r.pf_at = passes
                    r.phase = FINAL
                    r.target = passes + 1
                    self._finals.append(r)
                    if r.seg_start <= passes:
                        if len(segs) < seg_cap:
                            segs.append((slot, r.rid, r.label, r.seg_start, passes))
                        else:
                            rec.seg_truncated = True
                    r.label = "useful"
                    r.seg_start = passes + 1
                    self.ptoks += left - chunk
                    self.n_prefill -= 1
                    self.n_useful += 1
                    if r.resumed:
                        self._pending_gaps.append(r)
                else:
                    transition(r)
        return True
    finally:
        for col in cols:    # the arrays may grow again (add_request)
            col.release()
        self.t_useful, self.t_prefill, self.t_pad = t_useful, t_prefill, t_pad
        self.t_rows = t_rows
        self.kv_peak, rec.n_runs = kv_peak, n_runs
