"""The prefix cache's grouped map (prefix_cache.PrefixCache) against a plain dict, key by key:
tables' keys cached in block order and looked up, then evicted the way the free queue hands them
over (each table tail first with some blocks left out, a push's start named, popped from the
head a slice at a time)."""

from hypothesis import given, settings, strategies as st

from py_engine.policies.vllm.block_keys import KEY_SPACE
from py_engine.policies.vllm.prefix_cache import W, PrefixCache

# a table: stretches of one tag each (a tag at most once: block_keys' keys), in block order
tables = st.lists(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 2 * W + 3)),
                           min_size=1, max_size=3, unique_by=lambda s: s[0]),
                  min_size=1, max_size=6)


def table_keys(stretches):
    keys, b = [], 0
    for tag, n in stretches:
        keys += range(tag * KEY_SPACE + b, tag * KEY_SPACE + b + n)
        b += n
    return keys


def run_of(ref, keys):
    out = []
    for k in keys:
        if k not in ref:
            break
        out.append(ref[k])
    return out


@settings(max_examples=200, deadline=None)
@given(tables, st.data())
def test_the_grouped_map_is_a_dict_of_first_blocks(spec, data):
    cache, ref, next_block = PrefixCache(), {}, 0
    pushes = []
    for stretches in spec:
        keys = table_keys(stretches)
        blocks = list(range(next_block, next_block + len(keys)))
        next_block += len(keys)
        start = data.draw(st.integers(0, len(keys) - 1))
        later = cache.insert(keys, blocks, start, len(keys))
        expected = []
        for k, b in zip(keys[start:], blocks[start:]):
            if ref.setdefault(k, b) != b:
                expected.append((k, b))
        assert (later or []) == expected
        assert cache.run_of(keys) == run_of(ref, keys)
        tail_first = keys[::-1]
        out = data.draw(st.sets(st.integers(0, len(keys) - 1), max_size=4))
        pushes.append([k for i, k in enumerate(tail_first) if i not in out])
    assert sorted(cache.items()) == sorted(ref.items())
    # the queue's list: the pushes in order, a key once (the fast path: each key's only block)
    listed, starts, seen = [], [], set()
    for part in pushes:
        part = [k for k in part if k not in seen]
        seen.update(part)
        if part:
            starts.append(len(listed))
            listed += part
    head = 0
    for end in sorted(data.draw(st.sets(st.integers(1, max(1, len(listed))), max_size=4))):
        if end <= head:
            continue
        cache.discard(listed[head:end], [s - head for s in starts if head < s < end])
        for k in listed[head:end]:
            ref.pop(k, None)
        head = end
        assert sorted(cache.items()) == sorted(ref.items())
    for k in listed[head:]:
        assert cache.get(k) == ref.get(k)


def test_an_eviction_stretch_ends_where_another_push_begins():
    """Table A pushed T+10..T+8 (its lower blocks held elsewhere), then table B pushed U+9 and
    T+6 (its T+8, T+7 held elsewhere): the last key, T+6, continues T+10 by its place in the
    list, yet T+7 stays cached; only the push boundary tells."""
    t, u = 3 * KEY_SPACE, 4 * KEY_SPACE
    cache = PrefixCache()
    cache.insert(list(range(t, t + 11)), list(range(11)), 0, 11)
    cache.insert(list(range(u, u + 10)), list(range(20, 30)), 9, 10)
    cache.discard([t + 10, t + 9, t + 8, u + 9, t + 6], [3])
    assert sorted(cache.items()) == [(t + b, b) for b in (0, 1, 2, 3, 4, 5, 7)]
