"""py_engine: a verified discrete-event simulator of static, continuous and vLLM batching.

The package in layers, lowest first; a module imports only from its own layer and the ones above
it in this list (tests/engine/test_layers.py reads every import and holds the rule):

    errors.py        ScenarioError (bad input; PolicyError: a policy broke a rule) and EngineError
    data/            cited tables and compact data: deployments (models, GPUs), measurements
                     (Splitwise), azure_traces (Azure traces 2023, CC BY 4.0), mooncake_traces
                     (Mooncake traces, FAST'25, Apache-2.0), each made by a tool
    sim/             the simulator: exact (integer helpers), records (result layouts), work (the
                     cap), recorder, phases (the residents' state machine), verbs (a policy's
                     checked actions), view (what a policy may read: the policy interface), core
                     (the event loop in named stages)
    model/           what a pass costs and what fits: cost (ticks, the article's closed forms),
                     kv (KV capacity), roofline (a pass on a real deployment, exact integers)
    workload/        generator (the seeded trace generator), traces (production traces as workloads)
    policies/        one file (or package) per scheduler behind base.Policy; the registry:
                     static, continuous, vllm/ (scheduler, block_pool, block_view, runs, waiting,
                     livelock)
    scenario/        fields (every field, declared once), normalize (untrusted dict -> JSON),
                     prepared (the typed Scenario the engine runs), presets (and the story)
    analysis/        metrics, slo (sizing and its words), results (a run as a document), calibrate
                     (numpy, optional), validate (the roofline against measurements)
    api.py           the facade: simulate / compare / sweep, JSON in, JSON out
    verify/          the self-check (also in the page) and its brute-force reference
    bench/           benchmarks (python -m py_engine bench)
    app/             what clients use: schema, figures, protocol (the worker's entry point), cli,
                     report (the command line's tables), parallel (a sweep's points in processes
                     or on Ray)
"""

__version__ = "0.1.0"

from .errors import EngineError, PolicyError, ScenarioError  # noqa: E402
from .scenario.normalize import normalize  # noqa: E402
from .app.schema import schema  # noqa: E402
from .api import simulate, compare, sweep  # noqa: E402
from .scenario.presets import presets, story  # noqa: E402
from .model.kv import kv_capacity, kv_bytes_per_token  # noqa: E402

__all__ = ["simulate", "compare", "sweep", "presets", "story", "schema", "normalize", "ScenarioError",
           "EngineError", "PolicyError", "kv_capacity", "kv_bytes_per_token", "__version__"]
