"""The two errors the engine reports, as data across every boundary (API, CLI, worker protocol)."""

import math


class ScenarioError(ValueError):
    """Bad input: names the field (dotted path), the value and the allowed range."""

    def __init__(self, field, value, allowed, message=None):
        self.field = field
        self.value = value
        self.allowed = allowed
        if message is None:
            message = "%s = %s: must be %s" % (field, show(value), allowed)
        self.message = message
        super().__init__(message)

    def to_dict(self):
        value = self.value
        if not isinstance(value, (int, float, str, bool, type(None))) or (
                isinstance(value, float) and not math.isfinite(value)):
            value = show(value)
        return {"type": "ScenarioError", "field": self.field, "value": value,
                "allowed": self.allowed, "message": self.message}


class EngineError(RuntimeError):
    """An internal inconsistency (a bug or a stalled policy), reported as data by the protocol."""


def show(value):
    """A value as it appears in a message: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
