"""The routers of a fleet, one per module, each registered by its `cluster.router.kind` name
(base.py: the interface and what a router may read)."""

import importlib
import pkgutil

from .base import REGISTRY, Router, describe

for _m in pkgutil.iter_modules(__path__):
    if _m.name != "base":
        importlib.import_module("%s.%s" % (__name__, _m.name))


def make_router(scenario, fleet):
    """The router the scenario names, on this fleet."""
    return REGISTRY[scenario["cluster"]["router"]["kind"]](scenario, fleet)


__all__ = ["make_router", "Router", "REGISTRY", "describe"]
