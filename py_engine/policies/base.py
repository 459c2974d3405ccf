"""The policy interface: a scheduler is one class with a few hooks, registered by name.

The core (`py_engine.sim.core.Sim`) owns the clock, the slots, the per-resident phases (prefill chunks,
the final chunk that emits a token, decode, held padding) and retirement; what the run records lives
in `py_engine.sim.recorder`. A policy only decides *who is resident and how big their prefill chunks
are*; the core then runs the longest stretch of identical passes and calls the policy again at the
next event.

Every hook a policy may use is declared below with its default:

    check(scenario, trace)  (classmethod) Before anything runs: raise ScenarioError for an input
                     this policy cannot serve (vllm: a request bigger than the whole KV pool).
    schedule()       Shape the batch for the next run: admit from `sim.waiting` (FCFS deque of
                     arrived request ids; `popleft()` then `sim.admit(rid, chunk, prefill=None,
                     hold_until=0)`), evict (`sim.evict(slot)` -> rid, then e.g.
                     `sim.waiting.appendleft(rid)`), change chunk sizes (`sim.set_chunk(slot, c)`),
                     add a one-pass cost (`sim.add_cost(ticks)`, e.g. a swap transfer), or run no
                     pass and jump the clock (`sim.wait_until(tick)`). Doing nothing is fine: the
                     batch runs on.
    horizon()        Max passes the batch may run unchanged for policy reasons (e.g. until the KV
                     pool overflows), or None. The core already stops at every phase end.
    wants_arrivals() True if an arrival during the run could be admitted (e.g. a slot is free):
                     the core then cuts the run at the first pass starting at/after the next arrival.
    extra_metrics()  Counters of this policy merged into the result's metrics (vllm: swap and
                     recompute totals); {} by default.
    block_view()     The paged pool sampled over the run (vllm: blocks.BlockSamples), for the
                     result's kv_blocks; None by default.
    kv_after(k)      KV tokens in use after the k passes just run, when the policy keeps its own
                     account (vllm: tokens in allocated blocks, shared blocks once); None: the
                     residents' prefilled + emitted tokens.

Class attributes: `label` and `summary` (the page's lane title and subtitle), `order` (display
order among schedulers), `base` (always compared on the page; other schedulers are lanes a reader
adds). `name` is set by @register.

State a policy may read: sim.now, sim.passes, sim.slots, sim.free (free slot numbers), sim.res[slot]
(Resident or None; .rid, .phase in core.PREFILL/FINAL/DECODE/HOLD/PAUSED, .chunk), sim.n_resident,
sim.arrive/prompt/out (per request id, ticks/tokens), sim.emitted[rid] (exact for non-decoding
residents), sim.resident_kv(slot), sim.kv (KV tokens over residents), sim.next_arrival (first
request not yet arrived), sim.cost (Cost in ticks); the scenario is self.scenario.

More batch-shaping calls: `sim.pause(slot)` keeps a resident's slot and KV but leaves it out of the
next passes (no row, no tokens; its slot-steps count as idle), `sim.unpause(slot, chunk)` puts it
back (a decode continues, its TBT gap measured from its last token).

Preemption: `sim.evict(slot)` drops the resident (its KV leaves `sim.kv`; `preemptions[rid]` += 1);
tokens already emitted stay emitted. Re-admit with `prefill=prompt + emitted` (recompute) or
`prefill=0, kv0=prompt + emitted` (swap resume; add the transfer with `add_cost`). The first token
after a resume is counted as a TBT gap from the request's previous token; a request's first token is
never re-emitted.

Determinism: no policy may use randomness or wall-clock time; ties go to the lowest slot / the
earliest request id (sim.free is a min-heap; waiting is FCFS).
"""


class Policy:
    name = "?"
    label = "?"
    summary = ""
    order = 100
    base = False   # True: always on the page's comparison (static, continuous)

    def __init__(self, sim, scenario, trace=None):
        self.sim = sim
        self.scenario = scenario
        self.trace = trace      # the workload.Trace (per-request prefix ids, priorities)
        self.chunk = scenario["server"]["chunk"]

    @classmethod
    def check(cls, scenario, trace):
        """Raise ScenarioError if this policy cannot serve `trace` under `scenario`."""

    def schedule(self):
        raise NotImplementedError

    def horizon(self):
        return None

    def wants_arrivals(self):
        return bool(self.sim.free)

    def extra_metrics(self):
        return {}

    kv_after = None

    def block_view(self):
        return None


REGISTRY = {}


def register(name):
    """Class decorator: make a policy available as scenario["scheduler"] == name."""
    def deco(cls):
        cls.name = name
        REGISTRY[name] = cls
        return cls
    return deco
