"""Scheduling policies by name. A new policy = one new file here + one import line below."""

import importlib.util

from .base import REGISTRY, Policy, register
from . import static, continuous  # noqa: F401  (registration side effect)

if importlib.util.find_spec(__name__ + ".vllm") is not None:  # the vLLM-style policy (issue 4)
    from . import vllm  # noqa: F401


def get(name):
    return REGISTRY[name]


__all__ = ["REGISTRY", "Policy", "register", "get"]
