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
                isinstance(value, float) and not math.isfinite(value)) or (
                type(value) is int and abs(value) > 2 ** 53):   # JSON readers would round it
            value = show(value)
        return {"type": "ScenarioError", "field": self.field, "value": value,
                "allowed": self.allowed, "message": self.message}

    def __reduce__(self):
        # pickled (a sweep's point in another process): rebuilt as it is, not by calling
        # __init__ with the message alone, which is what Exception's own reduce does
        return _rebuilt, (type(self), self.args, self.__dict__)


class PolicyError(ScenarioError):
    """A scheduling policy's decision broke a rule of the core ("admit: no free slot"): refused
    before it changed anything (sim/verbs.py). Bad input when the policy is the user's own code."""

    def __init__(self, verb, rule):
        super().__init__("scheduler", verb, "a decision the core allows", "%s: %s" % (verb, rule))
        self.verb, self.rule = verb, rule


class EngineError(RuntimeError):
    """An internal inconsistency (a bug or a stalled policy), reported as data by the protocol."""


def _rebuilt(cls, args, state):
    """A pickled ScenarioError (or subclass) as it was: its class, args and attributes."""
    e = cls.__new__(cls, *args)
    e.args = args
    e.__dict__.update(state)
    return e


def show(value):
    """A value as it appears in a message: its repr, cut to 60 characters."""
    if type(value) is int and value.bit_length() > 200:
        # repr of a huge int is slow and above 4,300 digits refused: say how big it is instead
        return "an integer of about %d digits" % int(value.bit_length() * 0.30103 + 1)
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return "a value too large to show"
    return text if len(text) <= 60 else text[:57] + "..."
