"""What a steps generator yields between two slices: its progress, read from the simulator's state.

Every steps generator (api.py's *_steps, the fleets', the checks') pauses with `yield`; the value
it yields is a Progress, or None when it has nothing to say. A run counts the requests its core
has finished (Sim.n_done) of those it has (Sim.n); a compare is its lanes one after the other, so
its total is lanes x requests and a lane's count is shifted by the lanes before it (`within`).
Counts never go back, and a finished run says done == total before it returns. The protocol's Job
keeps the last one (app/protocol.py), the page shows it with an estimate of the time left.
"""

from typing import NamedTuple


class Progress(NamedTuple):
    done: int
    total: int
    unit: str = "requests"      # what is counted: requests (simulated), points (a sweep), checks

    def to_dict(self):
        return {"done": self.done, "total": self.total, "unit": self.unit}


def within(steps, before, total):
    """Delegate to `steps`, its progress shown as a part of a bigger whole: `before` already done
    of `total`. Returns what steps returns."""
    while True:
        try:
            p = next(steps)
        except StopIteration as e:
            return e.value
        yield None if p is None else Progress(before + p.done, total, p.unit)


def counted(steps, done, total, unit):
    """Delegate to `steps` hiding its own progress (a part whose size is not known beforehand):
    the whole says `done` of `total` `unit` while it runs. Returns what steps returns."""
    while True:
        try:
            p = next(steps)
        except StopIteration as e:
            return e.value
        yield None if p is None else Progress(done, total, unit)


__all__ = ["Progress", "within", "counted"]
