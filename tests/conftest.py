"""Shared test settings: Hypothesis without deadlines (CI machines are slow and shared)."""

from hypothesis import settings

settings.register_profile("engine", deadline=None, max_examples=150, derandomize=False)
settings.load_profile("engine")
