"""The block view's data (result kv_blocks, block_view.BlockSamples): bounded, and every sample the
pool's true state at its pass: blocks in use and free add up to the pool, the holders are the
running requests with their block tables, the cached-free count equals a brute count of the free
queue. Checked against the pool itself while the vllm policy runs."""

import pytest

from py_engine import api
from py_engine.policies.vllm import block_view
from py_engine.api import run_sim
from py_engine.policies.vllm.scheduler import VLLM
from py_engine.scenario.prepared import prepare

CASES = [
    {"scheduler": "vllm", "server": {"kv_tokens": 3000}},
    {"scheduler": "vllm", "workload": {"output_mean": 256}, "server": {"slots": 32, "kv_tokens": 6000}},
    {"scheduler": "vllm", "workload": {"requests": 200, "prefix": {"kind": "system", "groups": 4, "tokens": 96},
                                       "arrival": {"kind": "poisson", "rate": 6.0}},
     "server": {"slots": 16, "kv_tokens": 8000}},
    {"scheduler": "vllm", "server": {"kv_tokens": 4000, "enable_prefix_caching": False}},
    {"scheduler": "vllm"},                                     # an unlimited pool
]


def brute_cached_free(pool):
    if not pool.caching:
        return 0
    return sum(1 for _, key in pool.free_listing() if key is not None)


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_every_sample_is_the_pool_at_its_pass(case, monkeypatch):
    checked, now = [], {}
    take = block_view.BlockSamples.take

    def checking_take(self, p, pool, holders):
        assert pool.cached_free == brute_cached_free(pool)
        if pool.total is not None:
            assert pool.used() + pool.num_free() == pool.total
        now[p] = sorted((slot, r, b) for r, slot, b in holders() if b)   # the rows at pass p
        checked.append(p)
        return take(self, p, pool, holders)

    monkeypatch.setattr(block_view.BlockSamples, "take", checking_take)
    r = api.simulate(case)
    kb = r["kv_blocks"]
    s, h = kb["samples"], kb["holders"]
    n = len(s["pass"])
    assert checked and 0 < n <= block_view.SAMPLE_CAP and sum(s["holders"]) == len(h["request"])
    assert s["pass"] == sorted(set(s["pass"])) and s["pass"][-1] <= r["metrics"]["passes"]
    slots = r["scenario"]["server"]["slots"]
    k = 0
    for i in range(n):
        rows = list(zip(h["request"][k:k + s["holders"][i]], h["slot"][k:k + s["holders"][i]],
                        h["blocks"][k:k + s["holders"][i]]))
        k += s["holders"][i]
        assert len(rows) <= slots and [x[1] for x in rows] == sorted(x[1] for x in rows)
        # the holders are resolved when the document is built: they must be pass p's, not later
        assert [(slot, r, b) for r, slot, b in rows] == now[s["pass"][i]]
        assert all(b > 0 for *_, b in rows)
        tables = sum(b for *_, b in rows)
        assert tables >= s["used"][i] or kb["total"] is None   # shared prefix blocks: in each table
        if kb["total"] is not None:
            assert s["used"][i] + s["free"][i] == kb["total"] and s["cached_free"][i] <= s["free"][i]
        else:
            assert s["free"][i] is None
    if kb["total"] is not None and not r["scenario"]["server"]["enable_prefix_caching"]:
        assert all(c == 0 for c in s["cached_free"])


def test_samples_stay_bounded_on_a_long_run():
    r = api.simulate({"scheduler": "vllm", "workload": {"requests": 3000,
                                                       "arrival": {"kind": "poisson", "rate": 30}},
                      "server": {"slots": 256, "kv_tokens": 60000}})
    kb = r["kv_blocks"]
    assert len(kb["samples"]["pass"]) <= block_view.sample_cap(256) <= block_view.SAMPLE_CAP
    assert len(kb["holders"]["request"]) <= block_view.HOLDER_CAP
    assert kb["stride"] > 1 and r["metrics"]["passes"] > len(kb["samples"]["pass"])


def test_the_other_schedulers_have_no_block_view():
    c = api.compare({}, schedulers=["static", "continuous"])
    assert c["static"]["kv_blocks"] is None and c["continuous"]["kv_blocks"] is None


def test_sampling_does_not_change_the_run():
    """The samples are read-only: the same scenario run with sampling disabled gives the same
    requests and passes."""
    sc = prepare({"scheduler": "vllm", "server": {"kv_tokens": 3000}})
    with_samples = run_sim(sc)
    orig = block_view.BlockSamples.take
    try:
        block_view.BlockSamples.take = lambda *a, **k: None
        without = run_sim(sc)
    finally:
        block_view.BlockSamples.take = orig
    assert with_samples.sim.done_tick == without.sim.done_tick
    assert with_samples.sim.passes == without.sim.passes
    assert isinstance(with_samples.policy, VLLM)
