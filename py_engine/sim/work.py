"""Bounded work: how much a run may compute, and the message when it would compute more.

A run's *work* is counted as it goes (core.Sim.run): EVENT_WORK units per event of the core's loop
(about a microsecond of native CPU each, including the transitions an event makes) plus one unit
per request the policy walks in its own per-event bookkeeping (the vllm policy's running list),
one per BLOCKS_PER_UNIT blocks the vllm policy's KV pool touches (taken, hashed, freed: the pool
handles a request's blocks as slices, at C speed; one it handles alone counts ALONE_BLOCKS), and
one per resident the roofline walks to price a run.
One unit is roughly a microsecond natively and two to three in the page's Pyodide, so WORK_CAP
stops a run after about 20 s of native CPU.

The estimate: when a run has done a probe's share of its cap (PROBES), its work per finished
request so far, times the requests, is the estimate of the whole run; a run estimated above the
probe's multiple of the cap stops there, seconds in, instead of at the cap (an estimate needs
ESTIMATE_MIN of the requests finished: until then the run goes on). Either way the message says
how far the run got, what to lower, and how to run it natively without the cap (`--max-work 0`).
"""

from ..errors import ScenarioError

EVENT_WORK = 10
BLOCKS_PER_UNIT = 4   # blocks touched per unit (py_engine/bench/work.py prints seconds per unit);
                      # at 3 units a touch, bench/fleet.py's 8 replicas on the whole Mooncake
                      # trace (~14 s of CPU) were refused: "needs about 99,436,564 units, 5.0x"
ALONE_BLOCKS = 12     # a block the pool handles alone (cache_block: a Python call chain, ~3 us
                      # natively) counts as this many blocks: 3 units
WORK_CAP = 20_000_000
CHECK_WORK = 2560   # units between checks of the cap and the deadline (sim/core.py): ~3 ms
PROBES = ((0.05, 2.0), (0.25, 1.5), (0.5, 1.25))   # (share of the cap done, refuse above x cap)
ESTIMATE_MIN = 0.002


class WorkCapExceeded(Exception):
    """A run did more than Sim.work_cap units of work (run_steps turns it into too_much())."""

    def __init__(self, work, done, n):
        super().__init__(work, done, n)
        self.work, self.done, self.n = work, done, n


def estimate(work, done, n):
    """Work of the whole run, extrapolated from `work` done with `done` of `n` requests finished
    (None while nothing has finished)."""
    return work * n / done if done and done >= ESTIMATE_MIN * n else None


class Probes:
    """The cap looked at in steps as one run goes (PROBES): at each probe's share of the cap the
    run's estimate must stay under the probe's multiple of the cap; past the last probe, the cap
    itself. A run that starts over starts its probes over (a new Probes)."""

    def __init__(self, cap):
        self.cap = cap
        self.left = list(PROBES) if cap is not None else []

    def limit(self):
        """The work at which the run is looked at next (None: no cap)."""
        if self.cap is None:
            return None
        return max(1, int(self.cap * self.left[0][0])) if self.left else self.cap

    def check(self, work, done, n):
        """The run did `work` with `done` of its n requests finished: WorkCapExceeded when that
        is past the cap or estimated above a probe's multiple of it; else on past the probes it
        passed (a fleet, looked at every few requests, may pass more than one at once)."""
        limit = self.limit()
        while limit is not None and work > limit:
            if not self.left:
                raise WorkCapExceeded(work, done, n)
            guess = estimate(work, done, n)
            if guess is not None and guess > self.left[0][1] * self.cap:
                raise WorkCapExceeded(work, done, n)
            self.left.pop(0)
            limit = self.limit()


def too_much(scenario, work, done, n, cap):
    """The ScenarioError for a run stopped at `work` of its `cap` (done of n requests finished)."""
    wl, sv = scenario["workload"], scenario["server"]
    guess = estimate(work, done, n)
    needs = ("about %s units, %.1fx the cap" % ("{:,.0f}".format(guess), guess / cap)
             if guess else "more than the cap: no request had finished")
    # a trace's window is its count (the page's "Window size"), a generated workload's its requests
    traced = wl.get("trace", {}).get("name", "none") != "none"
    field = "workload.trace.count" if traced else "workload.requests"
    lower = ["%s (%s)" % (field, "{:,}".format(n))]
    if wl.get("items") is None and not traced:
        lower += ["workload.output_mean", "workload.prompt_mean"]
    if scenario["scheduler"] == "vllm":
        lower.append("server.slots (%s)" % "{:,}".format(sv["slots"]))
    if sv.get("chunk") is not None and 0 < sv["chunk"] < 64:
        lower.append("or raise server.chunk (%s)" % sv["chunk"])
    message = ("the %s run is too big for the work cap of %s units (about %s s of CPU): %s of %s "
               "requests done after %s units; it needs %s. Lower %s; or run it natively with "
               "no cap: python -m py_engine run --max-work 0 --scenario FILE"
               % (scenario["scheduler"], "{:,}".format(cap), "{:,.0f}".format(max(cap / 1e6, 1)),
                  "{:,}".format(done), "{:,}".format(n),
                  "{:,}".format(work), needs, ", ".join(lower)))
    return ScenarioError(field, n, "a run within the work cap of %s units"
                         % "{:,}".format(cap), message)
