"""The prefix cache's map (vLLM's `BlockHashToBlockMap`): block key -> the first block holding it.

Kept in groups of W consecutive keys (block_keys.py: one tag's keys step by 1 with the block
index, and a Mooncake prompt's ~770 blocks are ~3 runs of one tag): a group is one dict entry, a
list of W slots (a block, or NONE: that key is not cached). A request caches and looks up its
blocks, and the free queue evicts them, a stretch of one group at a time with C-level slices,
instead of a dict entry per block (a stretch is found by its last key, bisected: _run).

A group holds one tag's keys only: its first slot's key is `tag * KEY_SPACE + b` with b a
multiple of W, and b + W stays below KEY_SPACE. Later copies of a key (the same content computed
twice at once) are not here: block_pool.PrefixCachePool.dups keeps them.
"""

from .block_keys import KEY_SPACE

W = 256                    # keys per group
NONE = -1                  # an empty slot (block ids are >= 0): found by min / max in C, where
                           # None would cost a rich comparison per slot
EMPTY = [NONE] * W


def holds(groups, key, b):
    """Is key (of a request's block b) cached? (b: key % KEY_SPACE, known to the caller.)"""
    e = groups.get(key - b % W)
    return e is not None and e[b % W] >= 0


def _run(keys, p, k, m, step):
    """How many of keys[p:p + m] continue k by step (k, k + step, ...), >= 1, where keys are
    one table's in block order (step 1) or tail first (step -1), some maybe left out: key = tag +
    block index, and a table's blocks of one tag are consecutive, so keys[p + j] continues k
    exactly when every key before it does (bisected on that)."""
    if keys[p + m - 1] == k + step * (m - 1):
        return m
    lo, hi = 1, m                # keys[p + lo - 1] continues k, keys[p + hi - 1] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if keys[p + mid - 1] == k + step * (mid - 1):
            lo = mid
        else:
            hi = mid
    return lo


def _stretches(keys, p, n):
    """keys[p:n] (a table's, in block order) as stretches of one group each: (start, the
    group's first key, the first key's slot in it, length)."""
    while p < n:
        k = keys[p]
        i = k % KEY_SPACE % W
        m = _run(keys, p, k, min(W - i, n - p), 1)
        yield p, k - i, i, m
        p += m


class PrefixCache:

    __slots__ = ("groups",)

    def __init__(self):
        self.groups = {}                 # first slot's key -> [block or NONE] * W

    def get(self, key):
        """key's first block, or None."""
        i = key % KEY_SPACE % W
        e = self.groups.get(key - i)
        return None if e is None or e[i] < 0 else e[i]

    def __contains__(self, key):
        return self.get(key) is not None

    def items(self):
        """(key, first block) of every cached key, group by group."""
        for g, e in self.groups.items():
            for i, b in enumerate(e):
                if b >= 0:
                    yield g + i, b

    def run_of(self, keys):
        """The first blocks of keys[0], keys[1], ... (a request's, in block order) up to the
        first key not cached."""
        groups, out = self.groups, []
        for p, g, i, m in _stretches(keys, 0, len(keys)):
            e = groups.get(g)
            if e is None:
                return out
            got = e[i:i + m]
            if min(got) < 0:
                return out + got[:got.index(NONE)]
            out += got
        return out

    def insert(self, keys, blocks, start, end):
        """blocks[j] enters under keys[j] for j in start..end-1 (a request's table and keys,
        in block order) where that key is not cached yet -> None, or the (key, block) pairs
        whose key was cached (later copies), in order."""
        groups, later = self.groups, None
        for p, g, i, m in _stretches(keys, start, end):
            e = groups.get(g)
            if e is None:
                e = groups[g] = EMPTY[:]
                e[i:i + m] = blocks[p:p + m]
            elif max(e[i:i + m]) < 0:
                e[i:i + m] = blocks[p:p + m]
            else:
                for j in range(m):
                    f, b = e[i + j], blocks[p + j]
                    if f < 0:
                        e[i + j] = b
                    elif f != b:
                        if later is None:
                            later = []
                        later.append((g + i + j, b))
        return later

    def put(self, key, block):
        """key's first block is now block (the key is cached)."""
        i = key % KEY_SPACE % W
        self.groups[key - i][i] = block

    def discard(self, keys, tables=()):
        """keys leave (None: a block holding no key, skipped): one table's keys in block order,
        or the free queue's, tail first, where tables lists the indices at which another
        table's keys begin (its pushes: a stretch of keys is one table's)."""
        if tables:
            start = 0
            for end in tables:
                self._discard(keys[start:end])
                start = end
            keys = keys[start:]
        self._discard(keys)

    def _discard(self, keys):
        groups = self.groups
        p, n = 0, len(keys)
        while p < n:
            k = keys[p]
            if k is None:
                p += 1
                continue
            i = k % KEY_SPACE % W
            if p + 1 < n and keys[p + 1] == k - 1:
                m = _run(keys, p, k, min(i + 1, n - p), -1)
                lo = i - m + 1
            else:
                m = _run(keys, p, k, min(W - i, n - p), 1)
                lo = i
            e = groups.get(k - i)
            if e is not None:
                e[lo:lo + m] = EMPTY[:m]
                if e == EMPTY:
                    del groups[k - i]
            p += m
