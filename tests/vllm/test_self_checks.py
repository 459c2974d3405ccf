"""The vllm self-checks (shown in the page's self-check panel) pass, and they can fail."""

import random

from py_engine.verify import vllm_checks as check_vllm


def test_vllm_self_checks_pass():
    results = [(name, fn()) for name, fn in check_vllm.checks(random.Random(7), quick=False)]
    failed = [(name, detail) for name, (ok, detail) in results if not ok]
    assert not failed
    assert len(results) == 61


def test_a_broken_policy_fails_the_checks(monkeypatch):
    # A policy that under-reports the KV it threw away (or the swap time) must fail the
    # tight-KV checks.
    from py_engine.policies import vllm
    monkeypatch.setattr(vllm.VLLM, "extra_metrics", lambda self: {
        "swap_out_blocks": 0, "swap_in_blocks": 0, "swap_ms": 0.0, "recomputed_tokens": 0})
    results = [fn() for _, fn in check_vllm.checks(random.Random(7), quick=True)]
    assert not all(ok for ok, _ in results)
