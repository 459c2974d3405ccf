"""The vllm policy's per-event shortcuts rest on invariants of its state at the end of a plan;
here they are checked at every plan, on cases that preempt, swap, share prefixes and run sync."""

import pytest

from py_engine import api
from py_engine.policies.vllm.scheduler import VLLM

CASES = [
    {"scheduler": "vllm", "server": {"kv_tokens": 3000}},
    {"scheduler": "vllm", "server": {"kv_tokens": 3000, "preemption": "swap"}},
    {"scheduler": "vllm", "server": {"kv_tokens": 3000, "async_scheduling": False}},
    {"scheduler": "vllm", "server": {"kv_tokens": 4000, "policy": "priority",
                                     "enable_prefix_caching": False}},
    {"scheduler": "vllm", "workload": {"requests": 200, "prefix": {"kind": "system", "groups": 4,
                                                                   "tokens": 96}},
     "server": {"slots": 16, "kv_tokens": 8000}},
    {"scheduler": "vllm", "server": {"max_num_batched_tokens": 256, "chunk": 128}},
    {"scheduler": "vllm", "workload": {"requests": 300}, "server": {"slots": 64}},
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_every_slot_holder_is_running_after_a_plan(case, monkeypatch):
    """block_view.holders copies slot_of alone: the finished and the preempted have left the
    running list and slot_of alike when a sample is taken."""
    schedule, plans = VLLM.schedule, []

    def checking(self):
        schedule(self)
        assert self.slot_of.keys() <= self.running.keys()
        plans.append(1)

    monkeypatch.setattr(VLLM, "schedule", checking)
    api.simulate(case)
    assert plans
