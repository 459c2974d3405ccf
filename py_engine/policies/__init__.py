"""Scheduling policies by name: every module in this folder that registers a class is a scheduler.

A new policy is one new file here (see base.py); nothing else changes: the validated choices of
`scheduler`, the page's lanes and labels and the CLI all read the registry."""

import importlib
import pkgutil

from .base import REGISTRY, Policy, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module("%s.%s" % (__name__, _module.name))


# the speedup a comparison reports: the first's passes (and time) over the second's
SPEEDUP = ("static", "continuous")


def get(name):
    return REGISTRY[name]


def base_schedulers():
    """The schedulers always compared (class attribute `base`), in display order."""
    return tuple(n for n in scheduler_names() if REGISTRY[n].base)


def scheduler_names():
    """Registered scheduler names in display order (each class's `order`, then its name)."""
    return sorted(REGISTRY, key=lambda n: (REGISTRY[n].order, n))


__all__ = ["REGISTRY", "SPEEDUP", "Policy", "register", "get", "scheduler_names", "base_schedulers"]
