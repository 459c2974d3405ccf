"""Scheduling policies by name. A new policy = one new file here, its import below, and its name in
scenario.SCHEDULERS (the validated choices)."""

from .base import REGISTRY, Policy, register
from . import static, continuous, vllm  # noqa: F401  (registration side effect)


def get(name):
    return REGISTRY[name]


__all__ = ["REGISTRY", "Policy", "register", "get"]
