"""Scheduling policies by name: every module in this folder that registers a class is a scheduler.

A new policy is one new file here (see base.py); nothing else changes: the validated choices of
`scheduler`, the page's lanes and labels and the CLI all read the registry."""

import importlib
import pkgutil

from ..errors import ScenarioError
from .base import REGISTRY, Policy, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module("%s.%s" % (__name__, _module.name))


# the speedup a comparison reports: the first's passes (and time) over the second's
SPEEDUP = ("static", "continuous")


CUSTOM = "custom"      # the reader's own policy: scenario.custom.code (custom.py)


def get(name):
    return REGISTRY[name]


def policy_class(scenario):
    """The class that runs the scenario's scheduler: a registered one, or the reader's code
    compiled (custom.py)."""
    if scenario["scheduler"] == CUSTOM:
        from .custom import compile_policy   # cycle: custom.py imports base through this package
        c = scenario.get("custom")
        if c is None:       # compare(schedulers=[..., "custom"]) on a scenario of another scheduler
            raise ScenarioError("scheduler", "custom", "scheduler = custom with custom.code",
                                "the custom lane needs scheduler = custom and custom.code")
        return compile_policy(c["name"], c["code"])
    return REGISTRY[scenario["scheduler"]]


def base_schedulers():
    """The schedulers always compared (class attribute `base`), in display order."""
    return tuple(n for n in scheduler_names() if REGISTRY[n].base)


def scheduler_names():
    """Registered scheduler names in display order (each class's `order`, then its name)."""
    return sorted(REGISTRY, key=lambda n: (REGISTRY[n].order, n))


__all__ = ["REGISTRY", "SPEEDUP", "CUSTOM", "Policy", "register", "get", "policy_class",
           "scheduler_names", "base_schedulers"]
