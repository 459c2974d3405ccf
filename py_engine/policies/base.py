"""The policy interface: a scheduler is one class with a few hooks, registered by name.

The core (`sim/core.py`) owns the clock, the slots, the per-resident phases (prefill chunks, the
final chunk that emits a token, decode, held padding) and retirement. A policy only decides *who
is resident and how big their prefill chunks are*; the core then runs the longest stretch of
identical passes and calls the policy again at the next event. What a policy may read and the
verbs it acts by are `self.sim`, a SimView (sim/view.py: every name, what it means); the core
checks every verb and refuses a bad decision with a PolicyError naming the rule. A policy never
assigns to the simulation (tests/engine/test_layers.py holds every policy to that).

The hooks, each with its default below:

    check(scenario, trace)  (classmethod) Before anything runs: raise ScenarioError for an input
                     this policy cannot serve (vllm: a request bigger than the whole KV pool).
    schedule()       Shape the batch for the next run: admit from `sim.waiting` (`popleft()`
                     then `sim.admit(rid, self.chunk)`), evict, pause, change chunk sizes, add a
                     one-pass cost, or run no pass and jump the clock (`sim.wait_until(tick)`).
                     Doing nothing is fine: the batch runs on. A schedule() that acts only when
                     a slot is free and a request waits may say so (`schedule.only_free_slots =
                     True`, as continuous.py): the core then skips the call otherwise.
    horizon()        Max passes the batch may run unchanged for policy reasons (e.g. until the KV
                     pool overflows), or None. The core already stops at every phase end.
    wants_arrivals() True if an arrival during the run could be admitted (e.g. a slot is free):
                     the core then cuts the run at the first pass starting at/after the next arrival.
    extra_metrics()  Counters of this policy merged into the result's metrics (vllm: swap and
                     recompute totals); {} by default.
    block_view()     The paged pool sampled over the run (vllm: block_view.BlockSamples), for the
                     result's kv_blocks; None by default.
    hide_block_view() No result will show this run's block view (a replica of a fleet of several,
                     fleet/run.py): a policy that samples one may stop. Nothing by default.
    grow()           A fleet's router sent request sim.n - 1 (the trace's lists grew by one,
                     sim/core.py add_request): extend the policy's own per-request state.
                     Only policies that keep such state need it.
    kv_after(k)      KV tokens in use after the k passes just run, when the policy keeps its own
                     account (vllm: tokens in allocated blocks, shared blocks once); None: the
                     residents' prefilled + emitted tokens.
    restartable()    (classmethod) The class to run when the runner can start the run over
                     (api.run_steps; a fleet's fleet/run.py, the whole fleet): such a policy may
                     raise RunAgain(cls), and the run starts again from nothing with cls (the
                     work cap bounds each run). The same decisions kept a cheaper way while they
                     can be (vllm: block counts until a preemption makes its prefix cache
                     observable). This class by default.

Work: a policy whose decisions walk more than a constant number of items per event counts that
walk with `sim.count_work(units)` (sim/work.py), so the work cap bounds it.

Class attributes: `label` and `summary` (the page's lane title and subtitle), `order` (display
order among schedulers), `base` (always compared on the page; other schedulers are lanes a reader
adds). `name` is set by @register. The scenario is `self.scenario` (scenario/prepared.py: index it
like its JSON), the trace `self.trace`, the scenario's chunk `self.chunk`.

Preemption: `sim.evict(slot)` drops the resident (its KV leaves `sim.kv`; its preemptions + 1);
tokens already emitted stay emitted. Re-admit with `prefill=prompt + emitted` (recompute) or
`prefill=0, kv0=prompt + emitted` (swap resume; add the transfer with `add_cost`). The first token
after a resume is counted as a TBT gap from the request's previous token; a request's first token is
never re-emitted.

Determinism: no policy may use randomness or wall-clock time; ties go to the lowest slot / the
earliest request id (sim.free is a min-heap; waiting is FCFS).
"""

from __future__ import annotations

from typing import Any, Callable

from ..sim.view import SimView, as_view


UNCHUNKED = 1 << 40       # a prefill chunk no prompt reaches (server.chunk 0)


class RunAgain(Exception):
    """A policy's run must start over as `policy_class` (raised only by a class restartable()
    gave: the runner catches it)."""

    def __init__(self, policy_class):
        super().__init__(policy_class.__name__)
        self.policy_class = policy_class


class Policy:
    name = "?"
    label = "?"
    summary = ""
    order = 100
    base = False   # True: always on the page's comparison (static, continuous)

    @classmethod
    def restartable(cls) -> type[Policy]:
        return cls

    def __init__(self, sim, scenario, trace=None):
        self.sim: SimView = as_view(sim)
        self.scenario = scenario     # scenario/prepared.py Scenario
        self.trace = trace      # the workload.Trace (per-request prefix ids, priorities)
        # chunk 0 = off (vLLM's long_prefill_token_threshold 0): more than any prompt
        self.chunk: int = scenario["server"]["chunk"] or UNCHUNKED

    @classmethod
    def check(cls, scenario, trace) -> None:
        """Raise ScenarioError if this policy cannot serve `trace` under `scenario`."""

    def schedule(self) -> None:
        raise NotImplementedError

    def horizon(self) -> int | None:
        return None

    def wants_arrivals(self) -> bool:
        return bool(self.sim.free)

    # a hook kept as it is here the core's fast loop need not call (sim/fused.py _run_inline:
    # no horizon; wants_arrivals is a free slot, read there directly)
    horizon.default_hook = wants_arrivals.default_hook = True

    def grow(self) -> None:
        return None

    def extra_metrics(self) -> dict[str, Any]:
        return {}

    kv_after: Callable[[int], int] | None = None

    def block_view(self) -> dict | None:
        return None

    def hide_block_view(self) -> None:
        return None


REGISTRY: dict[str, type[Policy]] = {}


def register(name: str):
    """Class decorator: make a policy available as scenario["scheduler"] == name."""
    def deco(cls):
        cls.name = name
        REGISTRY[name] = cls
        return cls
    return deco
