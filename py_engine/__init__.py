"""py_engine: a verified discrete-event simulator of static vs continuous batching for LLM serving."""

__version__ = "0.1.0"

from .scenario import ScenarioError, normalize, schema  # noqa: E402
from .core import EngineError  # noqa: E402
from .api import simulate, compare, sweep, presets  # noqa: E402
from .kv import kv_capacity, kv_bytes_per_token  # noqa: E402

__all__ = ["simulate", "compare", "sweep", "presets", "schema", "normalize", "ScenarioError",
           "EngineError", "kv_capacity", "kv_bytes_per_token", "__version__"]
