"""The fleet's prefix probe (Fleet.cached_all: one probe a request, a binary search a replica,
bounded by the nodes routed so far) against a brute-force reference: block by block from the
first, while the block's key is in the replica's prefix cache, at most prompt - 1 tokens."""

from py_engine.api import simulate
from py_engine.bench.fleet import scenario
from py_engine.fleet import run as fleet_run
from py_engine.policies.vllm.block_keys import path_tags


def brute_held(pool, nodes, prompt):
    """Cached whole blocks from the first of a request with hash-id nodes, looked up one by one."""
    if nodes is None:
        return 0
    bs, hb = pool.bs, pool.keys.hb
    tags = path_tags(nodes)
    b = 0
    while (b < (prompt - 1) // bs
           and pool.cached.get(tags[((b + 1) * bs - 1) // hb] + b) is not None):
        b += 1
    return b * bs


def test_cached_all_is_the_cached_run_of_every_replica(monkeypatch):
    seen = {"asked": 0, "held": 0}
    cached_all = fleet_run.Fleet.cached_all

    def checked(self, g):
        held = cached_all(self, g)
        nodes, prompt = self.chain[g], self.trace[1][g]
        assert held == [brute_held(rep.policy.pool, nodes, prompt) for rep in self.replicas]
        seen["asked"] += 1
        seen["held"] += sum(map(bool, held))
        return held

    monkeypatch.setattr(fleet_run.Fleet, "cached_all", checked)
    simulate(scenario(400, 3, "cache_aware"), work_cap=None)
    assert seen["asked"] >= 400 and seen["held"] > 0
