"""The policy interface as code: what a policy may read of the simulation, and the verbs by which
it acts. A policy's `self.sim` is a `SimView`; it cannot assign to it (an AttributeError), and the
core checks every verb (a free slot, a waiting request, a resident in the slot, a time in the
future) and refuses a bad decision with a PolicyError naming the rule.

Read (ticks are integers: 1 tick = 1e-6 of the cost unit):

    now, passes, last_start   the clock; passes completed so far; the last run's last pass start
    phase_ended_at            the last pass at whose end some resident's phase ended (-1: none):
                              == passes when the run just ended changed a resident
    n, slots, n_resident      requests in the trace; slots (max_num_seqs); residents now
    arrive, prompt, out       per request id: arrival tick, prompt and output tokens
    emitted                   per request id: tokens emitted so far (exact for non-decoding ones)
    waiting                   arrived, not resident, FCFS (a deque: popleft() a request to admit
                              it; appendleft() an evicted one to requeue it first)
    free                      free slot numbers (a heap, lowest first; admit takes the lowest)
    next_arrival              the id of the first request not yet arrived (n: none known)
    open                      True while more requests may still come (a fleet's replica: its
                              router sends them as they arrive; n counts those sent so far)
    kv                        KV tokens over the residents (prefilled + emitted)
    cost                      the cost model in ticks (model/cost.py Cost)
    occupant(slot)            the request id in a slot (-1: an empty row of a static group), or None
    phase_of(slot)            "prefill" | "final" | "decode" | "hold" | "paused", or None
    phase_end(slot)           the pass after which the resident's current phase ends, or None
    resident_kv(slot)         KV tokens the resident holds: prompt processed + tokens emitted

Act (core.Sim's verbs, sim/verbs.py):

    admit(rid, chunk, prefill=None, hold_until=0, kv0=0) -> slot    take rid from waiting first
    admit_ghost(chunk, prefill, hold_until)   an empty row of a static group (padding)
    evict(slot) -> rid        preemption: its KV is dropped, its emitted tokens stay
    pause(slot) / unpause(slot, chunk)        out of / back into the batch, keeping slot and KV
    set_chunk(slot, chunk)    a prefilling resident's tokens per pass, from the next pass
    schedule_tokens(slot, n)  the tokens the resident processes in the next pass (vLLM's
                              num_scheduled_tokens): unpauses, re-chunks, or leaves it as it is
    wait_until(tick)          run no pass now; jump the clock to tick (> now)
    add_cost(ticks)           add to the next pass's cost only (a swap transfer)
    count_work(units)         work the policy did in its own walks (sim/work.py: the cap)
    count_work_ahead(units)   work it is about to do in one go: past the cap, the run stops first
    record_prefix_hit(rid, tokens)   prompt tokens a prefix cache served at first admission
    count_preemption(rid)     a preemption of a request that holds no slot (vLLM async: preempted
                              while its last token was in flight)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .phases import PAUSED, PHASE_NAMES

if TYPE_CHECKING:
    from .core import Sim

# containers and verbs: the view holds the core's own objects (read them, never rebind them)
_SHARED = ("slots", "arrive", "prompt", "out", "emitted", "waiting", "free", "cost",
           "admit", "admit_ghost", "evict", "pause", "unpause", "set_chunk", "schedule_tokens",
           "wait_until", "add_cost", "count_work", "count_work_ahead", "record_prefix_hit",
           "count_preemption", "resident_kv")


class SimView:
    """A policy's window on one simulation (see the module docstring)."""

    __slots__ = ("_sim",) + _SHARED

    def __init__(self, sim: Sim):
        object.__setattr__(self, "_sim", sim)
        for name in _SHARED:
            object.__setattr__(self, name, getattr(sim, name))

    def __setattr__(self, name, value):
        raise AttributeError("a policy reads the simulation and acts through its verbs; it "
                             "cannot set sim.%s" % name)

    # the clock and counts change as the run goes: read them from the core each time
    @property
    def now(self) -> int:
        return self._sim.now

    @property
    def passes(self) -> int:
        return self._sim.passes

    @property
    def n(self) -> int:          # a fleet's replica gets requests as its router sends them
        return self._sim.n

    @property
    def last_start(self) -> int:
        return self._sim.last_start

    @property
    def phase_ended_at(self) -> int:
        return self._sim.phase_ended_at

    @property
    def n_resident(self) -> int:
        return self._sim.n_resident

    @property
    def next_arrival(self) -> int:
        return self._sim.next_arrival

    @property
    def open(self) -> bool:
        return self._sim.open

    @property
    def kv(self) -> int:
        return self._sim.kv

    def occupant(self, slot: int) -> int | None:
        r = self._sim.res[slot]
        return None if r is None else r.rid

    def phase_of(self, slot: int) -> str | None:
        r = self._sim.res[slot]
        return None if r is None else PHASE_NAMES[r.phase]

    def phase_end(self, slot: int) -> int | None:
        r = self._sim.res[slot]
        return None if r is None or r.phase == PAUSED else r.target


def as_view(sim) -> SimView:
    """The view of a Sim (a view is its own)."""
    return sim if isinstance(sim, SimView) else SimView(sim)


__all__ = ["SimView", "as_view"]
