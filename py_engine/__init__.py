"""py_engine: a verified discrete-event simulator of static vs continuous batching for LLM serving.

Where things live (one concern per module):
    scenario.py   untrusted dict -> normalised scenario, or ScenarioError; schema() for the page
    workload.py   the seeded trace generator (bit-identical natively and in Pyodide)
    cost.py       the article's closed forms: pass cost, prefill_steps; integer-tick Cost
    core.py       the event-driven loop: integer clock, slots, runs of identical passes
    policies/     one file per scheduler behind a three-hook interface (base.py) and a registry
    metrics.py    utilization, shares, percentiles, TBT, SLO goodput
    api.py        simulate / compare / sweep / presets (JSON in, JSON out)
    protocol.py   handle(request) and handle_json(text), the worker's entry point (never raise)
    cli.py        python -m py_engine run | compare | sweep | check | bench | kv
    reference.py  the article's brute-force step loop and closed form (independent of core)
    check.py      self-verification: engine vs reference.py (also run in the browser)
    bench.py      event-driven engine vs the step loop; one million requests
    kv.py         KV-cache capacity (bytes per token, tokens and sequences that fit)
"""

__version__ = "0.1.0"

from .scenario import ScenarioError, normalize, schema  # noqa: E402
from .core import EngineError  # noqa: E402
from .api import simulate, compare, sweep, presets  # noqa: E402
from .kv import kv_capacity, kv_bytes_per_token  # noqa: E402

__all__ = ["simulate", "compare", "sweep", "presets", "schema", "normalize", "ScenarioError",
           "EngineError", "kv_capacity", "kv_bytes_per_token", "__version__"]
