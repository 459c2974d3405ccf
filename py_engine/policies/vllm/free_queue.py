"""vLLM's free-block queue (kv_cache_utils.py `FreeKVCacheBlockQueue`) with prefix caching on, as
three parts, head to tail, each handled in slices rather than block by block:

- `front`: free blocks that hold no hash, which vLLM puts at the head (reused first): a stack
  whose end is the head.
- the never-used blocks (`fresh` of them), in vLLM's initial id order: ids handed out as ranges.
- `back`: freed blocks that hold a hash, or held one until their request finished, in the order
  they were freed (evicted first to last). A list read from `head` on; a prefix hit takes a block
  out of the middle lazily: its entry becomes DEAD and is skipped when the head reaches it (found
  by counting DEAD in the slice the head takes: C-level, no per-entry Python).

Ids are handed out in vLLM's order (a request's blocks get the same ids as block by block), so
the pool's state is the same as vLLM's id for id (the livelock proof compares whole states).

Positions in `back` are absolute (the list drops its consumed start now and then: `base`);
`at[block]` is the position of the block's entry, so a block that holds a hash is in the back
exactly when at[block] >= head (one that holds none is never asked: no prefix hit can take it).
`pushes` are the positions where each push_back began: a pop names those inside what it takes,
so the prefix cache evicts each table's keys as a stretch (prefix_cache.PrefixCache.discard).
"""

from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from itertools import compress, count, repeat
from operator import ne, setitem, sub

UNLIMITED = 1 << 62        # never-used blocks of an unlimited pool
COMPACT = 4096             # consumed back entries dropped at once, at least
DEAD = -1                  # a back entry a prefix hit took out (block ids are >= 0)


class FreeQueue:

    def __init__(self, total):
        self.front = []                  # unhashed free blocks; the list's end is the head
        self.fresh = UNLIMITED if total is None else total
        self.spare = []                  # ids of blocks gone for good (an unlimited pool's)
        self.n_ids = 0                   # ids handed out so far
        self.back, self.back_keys = [], []   # blocks from position head on, and their keys
        self.head = self.base = 0        # positions of the first listed entry and of back[0]
        # block -> position of its back entry: machine ints, so a push writes each in place
        # (a list's would allocate an int object per entry and free the old one: ~2x the time,
        # measured)
        self.at = array("q")
        self.pushes = []                 # positions where a push_back's entries begin
        self.n_back = 0                  # blocks listed in back
        self.n_hashed = 0                # ... of them holding a hash (the block view's cached free)
        self.counting = True             # n_hashed kept (False: no block view will read it)

    def size(self):
        # Not __len__: an unlimited pool's count passes a 32-bit index (Pyodide's wasm32), which
        # len() refuses.
        return len(self.front) + self.fresh + self.n_back

    # ------------------------------------------------------------ taking blocks
    def pop(self, n):
        """popleft_n: n blocks from the head -> (blocks, keys of the back blocks among them: the
        caller evicts them from the prefix cache; None for one that holds no hash, indices in
        keys where another push's begin: prefix_cache.PrefixCache.discard)."""
        front, out = self.front, []
        if front:
            m = min(n, len(front))
            out = front[len(front) - m:][::-1]
            del front[len(front) - m:]
            n -= m
        if n and self.fresh:
            m = min(n, self.fresh)
            self.fresh -= m
            n -= m
            spare = self.spare
            if spare:                    # reused ids first, the last dropped first
                k = min(m, len(spare))
                out += spare[len(spare) - k:][::-1]
                del spare[len(spare) - k:]
                m -= k
            if m:
                out += range(self.n_ids, self.n_ids + m)
                self.at.extend(repeat(-1, m))
                self.n_ids += m
        if not n:
            return out, (), ()
        blocks, keys, pushes = self._pop_back(n)
        return out + blocks, keys, pushes

    def _pop_back(self, n):
        back, base = self.back, self.base
        i = self.head - base
        e = i + n
        blocks = back[i:e]
        d = blocks.count(DEAD)
        if d:                            # skip the entries hits took out: take d more, and so on
            while d:
                more = back[e:e + d]
                blocks += more
                e += d
                d = more.count(DEAD)
        # where another push's entries begin (between the first and the last taken)
        pushes = self.pushes
        cuts = (pushes[bisect_right(pushes, base + i):bisect_left(pushes, base + e)]
                if e - i > 1 else ())
        if len(blocks) > n:              # DEAD among them: leave those out
            live = list(map(ne, blocks, repeat(DEAD)))
            if cuts:
                cuts = [c - base - i - blocks[:c - base - i].count(DEAD) for c in cuts]
            blocks = list(compress(blocks, live))
            keys = list(compress(self.back_keys[i:e], live))
        else:
            keys = self.back_keys[i:e]
            if cuts:
                cuts = [c - base - i for c in cuts]
        e += base
        self.head = e
        self.n_back -= n
        if self.counting:                # (a count of None per block taken: ~1.6% of a fleet)
            self.n_hashed -= n - keys.count(None)
        if e - base >= COMPACT and 2 * (e - base) >= len(self.back):
            del self.back[:e - base]
            del self.back_keys[:e - base]
            del pushes[:bisect_right(pushes, e)]
            self.base = e
        return blocks, keys, cuts

    def take(self, blocks):
        """Prefix hits take free blocks (which hold a hash) out of the back."""
        at, back, base = self.at, self.back, self.base
        deque(map(setitem, repeat(back), map(sub, map(at.__getitem__, blocks), repeat(base)),
                  repeat(DEAD)), 0)
        deque(map(setitem, repeat(at), blocks, repeat(-1)), 0)
        self.n_back -= len(blocks)
        self.n_hashed -= len(blocks)

    # ------------------------------------------------------------ giving blocks back
    def push_front(self, blocks):
        """Blocks that hold no hash to the head, in queue order (the first is the new head)."""
        self.front += reversed(blocks)

    def push_back(self, blocks, keys, unhashed=0, alone=0):
        """Blocks to the tail, in queue order, with their keys. The first `unhashed` of them
        hold no hash (their keys are None), the others do. No prefix hit can take the first
        `alone` (>= unhashed) out of the middle: they hold no hash, or one no request that may
        come reaches (block_keys.BlockKeys.hittable). Their positions are not recorded (`at`
        keeps an older one, below head: a hit asks only of a block it can take)."""
        if not blocks:
            return
        start = self.base + len(self.back)
        self.pushes.append(start)
        # operator.setitem, not at.__setitem__: a builtin called without a method wrapper (~1/3
        # less per block, measured)
        if alone:
            deque(map(setitem, repeat(self.at), blocks[alone:], count(start + alone)), 0)
        else:
            deque(map(setitem, repeat(self.at), blocks, count(start)), 0)
        self.back += blocks
        self.back_keys += keys
        self.n_back += len(blocks)
        self.n_hashed += len(keys) - unhashed

    def drop(self, blocks):
        """Blocks gone for good (an unlimited pool never reaches them), in the order they go:
        their ids are reused."""
        self.spare += blocks

    # ------------------------------------------------------------ checks
    def listing(self):
        """The listed blocks head to tail, as (block, key or None) (the never-used ones aside):
        for tests that count the queue entry by entry."""
        out = [(b, None) for b in reversed(self.front)]
        for i in range(self.head - self.base, len(self.back)):
            if self.back[i] != DEAD:
                out.append((self.back[i], self.back_keys[i]))
        return out
