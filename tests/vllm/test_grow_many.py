"""pool.grow_many (one pop for several requests) against the reference: grow() for each request
one after the other. Random histories of admissions (with prefix hits), caching and frees leave
blocks at the queue's front, never used, and cached in its back (so the pop evicts); then both
pools grow the same requests and must agree block for block."""

from hypothesis import given, settings, strategies as st

from py_engine.policies.vllm.block_pool import PrefixCachePool
from py_engine.policies.vllm.counting_pool import CountingPool

BS = 4


def history(pool, ops, n_req):
    """Apply (kind, request, tokens) ops; requests that hold a table afterwards."""
    for kind, r, tokens in ops:
        if kind == "alloc" and not pool.has(r):
            hits = pool.lookup(r, tokens)
            if pool.need(r, tokens, hits) <= pool.num_free():
                pool.allocate(r, tokens, hits)
                if pool.caching:
                    pool.cache(r, tokens, tokens)
        elif kind == "free" and pool.has(r):
            pool.free_request(r, finished=tokens % 2 == 0)
    return [r for r in range(n_req) if pool.has(r)]


def snapshot(pool):
    if not pool.caching:
        return pool.free, sorted(pool.held.items())
    return (pool.state(), sorted((r, list(t)) for r, t in pool.table.items()), pool.ops,
            pool.in_use, pool.num_free(), pool.cached_free)


N_REQ = 8
ops_st = st.lists(st.tuples(st.sampled_from(["alloc", "alloc", "free"]),
                            st.integers(0, N_REQ - 1), st.integers(1, 24)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(ops=ops_st, total=st.integers(8, 40), caching=st.booleans(), data=st.data())
def test_grow_many_is_each_grow_in_turn(ops, total, caching, data):
    spans = [(r % 2, 12) if r % 3 else None for r in range(N_REQ)]   # two shared groups

    def make():
        return PrefixCachePool(total, BS, spans) if caching else CountingPool(total, BS)

    a, b = make(), make()
    live = history(a, ops, N_REQ)
    assert history(b, ops, N_REQ) == live
    order = data.draw(st.permutations(live))
    grows, free = [], a.num_free()
    for r in order:
        extra = data.draw(st.integers(0, 2 * BS))
        have = a.n_blocks(r) * BS
        want = -(-(have + extra) // BS) - a.n_blocks(r)
        if want > free:
            break
        free -= want
        grows.append((r, have + extra))
    for r, tokens in grows:
        a.grow(r, tokens)
    b.grow_many(grows)
    assert snapshot(b) == snapshot(a)


def test_a_block_cached_alone_counts_the_same_either_way():
    """cache() and cache_block() walk the same call chain for one block (its keys, the insert);
    cache() counted the block alone (1/BLOCKS_PER_UNIT of a unit for ~4 us: a decoder caching
    a block at a time ran at 2.1 us a unit in bench/work.py) where cache_block counts
    ALONE_BLOCKS. A stretch of blocks counts its blocks on top."""
    from py_engine.sim.work import ALONE_BLOCKS

    def cached(call):
        pool = PrefixCachePool(16, BS, [None])
        pool.allocate(0, 5 * BS, pool.lookup(0, 5 * BS))
        before = pool.ops
        call(pool)
        return pool.ops - before
    assert cached(lambda p: p.cache(0, BS, BS)) == cached(lambda p: p.cache_block(0, 0)) \
        == ALONE_BLOCKS
    assert cached(lambda p: p.cache(0, 5 * BS, 5 * BS)) == ALONE_BLOCKS + 4
