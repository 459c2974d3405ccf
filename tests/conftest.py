"""Shared test settings: Hypothesis without deadlines (CI machines are slow and shared)."""

import pytest
from hypothesis import settings

settings.register_profile("engine", deadline=None, max_examples=150, derandomize=False)
settings.load_profile("engine")


@pytest.fixture(autouse=True)
def _slo_memos_remember_nothing(monkeypatch):
    """The engine's SLO memos (analysis/slo_memo.py: api.RUNS, api.POINTS) remember nothing in
    a test unless it installs its own (tests/engine/test_slo_memo.py, test_slo_rescore.py): a
    test that changes the engine's code (monkeypatch) and runs a scenario again, or one run
    before by another test, gets a run, not an answer remembered from before."""
    from py_engine import api
    from py_engine.analysis.slo_memo import SloMemo
    monkeypatch.setattr(api, "RUNS", SloMemo(0))
    monkeypatch.setattr(api, "POINTS", SloMemo(0))
