"""py_engine: a verified discrete-event simulator of static vs continuous batching for LLM serving.

The package by layer (one concern per module):

    the simulator
        fields.py     every scenario field, declared once (type, range, default, label, URL, flag)
        scenario.py   untrusted dict -> normalised scenario, or ScenarioError; schema() for the page
        records.py    the result's record layouts (requests, segments, passes log) and schedulers
        errors.py     ScenarioError (bad input) and EngineError (an internal inconsistency)
        workload.py   the seeded trace generator (bit-identical natively and in Pyodide)
        cost.py       the cost unit and its integer ticks; the article's closed forms
        core.py       the event-driven loop: integer clock, slots, runs of identical passes
        phases.py     the residents' phase state machine (prefill, last chunk, decode, hold, pause)
        recorder.py   what a run records: segments, the passes log, TBT gaps (capped)
        policies/     one file per scheduler behind the hooks in base.py; the registry
        metrics.py    utilization, shares, percentiles, TBT, SLO goodput
        slo.py        sweep points against the SLO: meets_slo, best, lowest
        api.py        simulate / compare / sweep (JSON in, JSON out)
        presets.py    named scenarios, and the story mode's steps
        kv.py         KV-cache capacity (bytes per token, tokens and sequences that fit)
        protocol.py   handle(request) and handle_json(text), the worker's entry point (never raise)
        cli.py        python -m py_engine run | compare | sweep | check | bench | kv
        report.py     the command line's text tables
    verify/           the self-check (also run in the page) and its brute-force reference
    bench/            benchmarks: the engine vs a step loop, one million requests, vllm stepped
"""

__version__ = "0.1.0"

from .errors import EngineError, ScenarioError  # noqa: E402
from .scenario.normalize import normalize  # noqa: E402
from .app.schema import schema  # noqa: E402
from .api import simulate, compare, sweep  # noqa: E402
from .scenario.presets import presets, story  # noqa: E402
from .model.kv import kv_capacity, kv_bytes_per_token  # noqa: E402

__all__ = ["simulate", "compare", "sweep", "presets", "story", "schema", "normalize", "ScenarioError",
           "EngineError", "kv_capacity", "kv_bytes_per_token", "__version__"]
