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


def assert_same_without(case, switch, monkeypatch):
    """The whole result of case equals the one with VLLM's fast path `switch` off."""
    fast = api.simulate(case)
    monkeypatch.setattr(VLLM, switch, False)
    slow = api.simulate(case)
    for res in (fast, slow):
        res.pop("seconds", None)
    assert fast == slow


REPEAT_CASES = CASES + [
    {"scheduler": "vllm", "workload": {"requests": 200, "arrival": {"kind": "poisson", "rate": 6}},
     "server": {"slots": 16, "kv_tokens": 6000}},
    {"scheduler": "vllm", "workload": {"requests": 150, "arrival": {"kind": "poisson", "rate": 3}},
     "server": {"cost": {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}}},
    # two long decodes whose run the booking cap (2**20 tokens) bounds, and short requests
    # arriving meanwhile: going on, the cap counts afresh as a plan's would (counted from the
    # plan, the run ended a pass early: passes_log.count 524,287 for 524,288)
    {"scheduler": "vllm", "workload": {"items": [{"arrive": 0, "prompt": 16, "out": 600_000}] * 2
                                       + [{"arrive": 2 * i + 1, "prompt": 16, "out": 2}
                                          for i in range(8)]},
     "server": {"slots": 4096, "kv_tokens": 10_000_000, "cost": "unit"}},
]


@pytest.mark.parametrize("case", REPEAT_CASES, ids=range(len(REPEAT_CASES)))
def test_going_on_through_a_repeating_plan_changes_no_number(case, monkeypatch):
    """An event where the plan would repeat the planned step does not plan (runs.py _repeats):
    the whole result equals the one planned at every event."""
    repeats, went_on = VLLM._repeats, []

    def counting(self):
        out = repeats(self)
        went_on.append(out)
        return out

    monkeypatch.setattr(VLLM, "_repeats", counting)
    assert_same_without(case, "continues", monkeypatch)
    if case in REPEAT_CASES[len(CASES):]:       # arrivals while a run goes on: it goes on
        assert any(went_on)


TABLE_CASES = REPEAT_CASES + [
    {"scheduler": "vllm", "workload": {"requests": 150, "prefix": {"kind": "system", "groups": 3,
                                                                   "tokens": 200},
                                       "arrival": {"kind": "poisson", "rate": 10}},
     "server": {"slots": 32, "kv_tokens": 12000, "block_size": 4}},
    {"scheduler": "vllm", "workload": {"requests": 150, "output_mean": 300},
     "server": {"slots": 48, "kv_tokens": 20000, "preemption": "swap", "policy": "priority"}},
]


@pytest.mark.parametrize("case", TABLE_CASES, ids=range(len(TABLE_CASES)))
def test_steady_decoders_with_block_tables_change_no_number(case, monkeypatch):
    """With the prefix cache (async) steady decoders are touched only when they take a block
    and cache their blocks when they leave the steady set (steady.py): the whole result
    equals the one that walks every running request at every plan."""
    assert_same_without(case, "steady_tables", monkeypatch)


ADMISSION_CASES = CASES + [
    {"scheduler": "vllm", "server": {"kv_tokens": 3000, "enable_prefix_caching": False}},
    {"scheduler": "vllm", "server": {"kv_tokens": 2500, "enable_prefix_caching": False,
                                     "async_scheduling": False,
                                     "scheduler_reserve_full_isl": False, "chunk": 64}},
    {"scheduler": "vllm", "workload": {"requests": 2000, "skew": 0.95},
     "server": {"slots": 512, "max_num_batched_tokens": 100_000}},
]


@pytest.mark.parametrize("case", ADMISSION_CASES, ids=range(len(ADMISSION_CASES)))
def test_admission_in_one_walk_changes_no_number(case, monkeypatch):
    """Where a lookup cannot hit (fcfs, block counts), admission.py admits in one walk: the
    whole result (recomputed tokens, the prefix cache's counters too) equals vLLM's loop's."""
    assert_same_without(case, "counted_admission", monkeypatch)


PREFILL_CASES = [
    # long prompts chunked in many steps where nothing binds, async and sync
    {"scheduler": "vllm", "workload": {"requests": 300, "prompt_mean": 2000, "skew": 0.9},
     "server": {"slots": 64, "chunk": 64, "max_num_batched_tokens": 1_000_000}},
    {"scheduler": "vllm", "workload": {"requests": 300, "prompt_mean": 2000, "skew": 0.9},
     "server": {"slots": 64, "chunk": 64, "max_num_batched_tokens": 1_000_000,
                "async_scheduling": False}},
    # the budget binds now and then: every steady prefiller explicit again for the walk
    {"scheduler": "vllm", "workload": {"requests": 200, "prompt_mean": 1500, "skew": 0.8,
                                       "arrival": {"kind": "poisson", "rate": 20}},
     "server": {"slots": 32, "chunk": 128, "max_num_batched_tokens": 1024}},
    # a finite pool without the prefix cache: preemptions (recompute, swap), priority
    {"scheduler": "vllm", "workload": {"requests": 200, "prompt_mean": 1200},
     "server": {"slots": 32, "chunk": 64, "kv_tokens": 20_000,
                "enable_prefix_caching": False}},
    {"scheduler": "vllm", "workload": {"requests": 200, "prompt_mean": 1200},
     "server": {"slots": 32, "chunk": 64, "kv_tokens": 20_000, "preemption": "swap",
                "policy": "priority", "enable_prefix_caching": False,
                "async_scheduling": False}},
    # a finite pool with the prefix cache unobservable until the first preemption
    {"scheduler": "vllm", "workload": {"requests": 200, "prompt_mean": 1200},
     "server": {"slots": 32, "chunk": 64, "kv_tokens": 30_000}},
    # a short request finishes while a long prompt is chunked: the chunk stops applying (one
    # request left), and starts again when more arrive
    {"scheduler": "vllm", "workload": {"items": [{"arrive": 0, "prompt": 100, "out": 3},
                                                 {"arrive": 0, "prompt": 9000, "out": 50},
                                                 {"arrive": 30, "prompt": 4000, "out": 5},
                                                 {"arrive": 31, "prompt": 4000, "out": 5}]},
     "server": {"chunk": 256, "cost": "unit"}},
]


@pytest.mark.parametrize("case", PREFILL_CASES, ids=range(len(PREFILL_CASES)))
def test_steady_prefillers_change_no_number(case, monkeypatch):
    """Long prompts' full chunks kept apart where nothing binds (steady_prefills.py): the whole
    result equals the one that walks each prefiller at every plan, and prefillers did join."""
    join, joined = VLLM._sp_join_from, []

    def counting(self, step, candidates):
        before = len(self.sp)
        join(self, step, candidates)
        joined.append(len(self.sp) - before)

    monkeypatch.setattr(VLLM, "_sp_join_from", counting)
    assert_same_without(case, "steady_prefills", monkeypatch)
    assert sum(joined) > 0


@pytest.mark.parametrize("case", CASES + PREFILL_CASES, ids=range(len(CASES + PREFILL_CASES)))
def test_a_steady_requests_inflight_tokens_are_its_planned_steps(case, monkeypatch):
    """After every plan a running request's in-flight tokens, kept apart (steady decoders,
    steady prefillers: offsets against the step counters) or not, are the tokens the planned step
    gives it: under async scheduling a prefiller that joined beside others was a chunk short
    (counted twice out of the step before), which no number showed."""
    schedule, wrong = VLLM.schedule, []

    def checking(self):
        schedule(self)
        step = self.step
        for r in self.running:
            if r in self.sp:
                inflight = self.sp[r][1] + self.chunk * (self.sp_steps - self.sp_updates)
                want = self.chunk if step.sp else 0
            elif r in self.sd:
                inflight = self.sd[r][2] + self.sd_steps - self.sd_updates
                want = 1 if step.sd else 0
            else:
                inflight, want = self.inflight[r], step[r][0] if r in step else 0
            if inflight != want:
                wrong.append((self.sim.passes, r, inflight, want))
        assert min(self.stale) >= 0

    monkeypatch.setattr(VLLM, "schedule", checking)
    monkeypatch.setattr(VLLM, "continues", False)      # every event plans
    api.simulate(case)
    assert not wrong, wrong[:5]


def test_the_horizon_search_finds_the_first_repeat_that_does_not_fit():
    """runs.passes_until_short against a scan from m = 1, on demand curves a step can have (a
    Growth of random rows: decoders, prefills, steady prefillers) and on arbitrary
    non-decreasing ones with long plateaus; with the bound UNBOUNDED it asks about
    2 log2(answer) demands, not 40."""
    import math
    import random

    from py_engine.policies.vllm.growth import Growth
    from py_engine.policies.vllm.runs import UNBOUNDED, passes_until_short

    def scan(demand, free, kmax):
        for m in range(1, kmax):
            if demand(m) > free:
                return m
        return None

    rng = random.Random(17)
    found = 0
    for trial in range(3000):
        if trial % 2:
            bs = rng.choice([1, 8, 16, 32])
            rows = [(rng.randrange(0, 400), rng.choice([1, 1, 1, rng.randrange(2, 600)]))
                    for _ in range(rng.randrange(1, 6))]
            demand = Growth(bs, rows, per_step=rng.choice([0, 0, 2]))
        else:       # plateaus: one block more at each of a few passes
            steps = sorted(rng.sample(range(1, 3000), rng.randrange(1, 12)))
            demand = lambda m, steps=steps: sum(m >= s for s in steps) * 7  # noqa: E731
        free = rng.randrange(0, 90)
        kmax = rng.choice([1, 2, 3, rng.randrange(4, 4000), UNBOUNDED])
        asked = []

        def counted(m, demand=demand):
            asked.append(m)
            return demand(m)

        want = scan(demand, free, min(kmax, 5000))
        got = passes_until_short(counted, free, kmax)
        if kmax == UNBOUNDED and want is None:
            continue        # (the scan stops at 5,000: beyond it the search is not checked)
        assert got == want, (trial, free, kmax)
        if got is not None:
            found += 1
            if kmax == UNBOUNDED:
                assert len(asked) <= 2 * math.log2(got) + 3, (trial, got, len(asked))
    assert found > 1000
