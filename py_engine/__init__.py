"""py_engine: a verified discrete-event simulator of static vs continuous batching for LLM serving."""

__version__ = "0.1.0"
