"""vLLM 0.33.0's paged KV cache for one full-attention group: the block pool, its free-block queue,
the prefix cache and every request's block table, with the semantics of vLLM's own code
(vllm/v1/core/block_pool.py, kv_cache_utils.py `FreeKVCacheBlockQueue`,
single_type_kv_cache_manager.py `FullAttentionManager`, kv_cache_manager.py `allocate_slots`).

- The pool has `total` usable blocks (vLLM's num_gpu_blocks - 1: block 0 is its null block), or is
  unlimited (total None). All start free, in id order, in the free queue (free_queue.py).
- Allocation pops blocks from the head of the free queue; a popped block that holds a hash leaves
  the prefix cache (that is the eviction).
- A request's blocks are freed in reverse order (its tail first); a block whose reference count
  drops to 0 goes to the FRONT of the queue when it holds no hash (reused first) and to the BACK
  when it is cached (evicted last, least recently freed first).
- Caching: once a block is full of computed tokens whose ids are known, it takes its content hash
  (block_keys.py) and enters the prefix cache (hash -> the blocks holding it, in insertion order;
  a lookup takes the first). A prefix hit touches the blocks: +1 reference, and a free one leaves
  the queue.
- A lookup finds the longest run of cached blocks from a request's first block, capped so that at
  least one token is computed (num_tokens - 1), in whole blocks.

Only what can be observed is kept: a finished request's own-key blocks can never be hit again, so
their hashes leave the cache when they are freed (the blocks keep their place in the queue, where
a cached block would be); in an unlimited pool the blocks behind the never-used ones are never
reached, so those are not kept at all. Blocks are ids, created when first used; which id a block
has cannot be observed, only counts, hashes and the queue's order.

Block by block, as vLLM does it, a request's ~500 blocks of a long prompt cost ~500 Python calls
at every step: here a request's blocks are handled as slices (their keys are ranges, block_keys.py;
the queue is sliced, free_queue.py; the prefix cache holds groups of keys, prefix_cache.py), with
C-level map / zip. What that leans on: a table is its
cached blocks (the first `n_cached`, each holding its own position's key) then blocks holding no
hash; only cached blocks are shared by two tables (a hit).

`counting_pool.CountingPool` is the same interface when prefix caching is off: then blocks are
interchangeable and only counts matter.
"""

from bisect import bisect_left
from collections import deque
from itertools import compress, repeat
from operator import le

from ...sim.exact import cdiv
from ...sim.work import ALONE_BLOCKS
from .block_keys import KEY_SPACE, ALL, BlockKeys, path_tags
from .free_queue import FreeQueue
from .lookup_memo import LookupMemo
from .prefix_cache import PrefixCache, holds


class PrefixCachePool:
    """Block ids, the free queue, the prefix cache and block tables (prefix caching on)."""

    caching = True

    def __init__(self, total, block_size, shared_span, chain=None, hash_block=None,
                 every_chain=None):
        """shared_span[r] = (group, tokens of r that are shared) or None (shared_spans);
        chain[r] = r's hash-id trie nodes (workload/blocks.py), or chain None: no hash ids;
        every_chain: the chains of every request that may come (BlockKeys.hittable)."""
        self.total, self.bs = total, block_size
        self.keys = BlockKeys(block_size, shared_span, chain, hash_block, every_chain)
        self.queue = FreeQueue(total)
        self.cached = PrefixCache()      # key -> the first block holding it (a lookup's)
        self.dups = {}                   # key -> the later ones, in insertion order: the same
                                         # content computed twice at once (rare)
        self.shared = {}                 # block -> tables holding it beyond the first (hits)
        self.shared_at = {}              # ... and its index in each of them (a key names its
                                         # block's index: every table holds it there)
        self.table = {}                  # request -> [blocks]
        self.table_keys = {}             # request -> the keys of its first blocks, so far
        self.n_cached = {}               # request -> blocks of its table already cached
        self.in_use = 0
        self.memo = None                 # the last lookup, kept up to date (LookupMemo)
        self.last_lookup = None          # the request it was for
        self.ops = 0                     # blocks touched so far (the run's work, py_engine/sim/work.py)

    @property
    def cached_free(self):
        """Free blocks that hold a hash (the block view shows them)."""
        return self.queue.n_hashed

    def stop_counting_cached(self):
        """No block view will read cached_free: the free queue need not count it."""
        self.queue.counting = False

    def key(self, rid, b):
        return self.keys.key(rid, b)

    def _keys_upto(self, rid, b):
        """The keys of rid's first b blocks (and maybe more), kept while its table lives."""
        ks = self.table_keys.get(rid)
        if ks is None:
            ks = self.table_keys[rid] = self.keys.keys(rid, 0, b)
        elif len(ks) < b:
            ks += self.keys.keys(rid, len(ks), b)
        return ks

    # ------------------------------------------------------------ the prefix cache
    def _insert(self, keys, blocks, start, end):
        """blocks[start:end] enter the prefix cache under keys[start:end] (a table's and its
        keys: distinct, not held by these blocks yet)."""
        cached, memo = self.cached, self.memo
        # whether the memo's missed key is among keys, by two dict probes instead of a scan:
        # only keys enter the cache here (the scan when the key was cached before: a dup)
        missed = None if memo is None else memo.missed
        scan = missed is not None and missed in cached
        later = cached.insert(keys, blocks, start, end)
        if later is not None:            # some keys were cached already: later copies
            dups = self.dups
            for k, b in later:
                dups.setdefault(k, []).append(b)
        if missed is not None and (missed in keys[start:end] if scan else missed in cached):
            memo.extend(cached)

    def _forget(self, keys, blocks, tables=()):
        """Blocks leave the prefix cache (each holds its key; None: holds none): one table's,
        or the free queue's, tables at the indices where another table's begin."""
        memo = self.memo
        lost = memo.lost(keys) if memo is not None else None
        dups = self.dups
        if not dups or dups.keys().isdisjoint(keys):   # each key's only block
            self.cached.discard(keys, tables)
        else:
            cached = self.cached
            for k, b in zip(keys, blocks):
                if k is None:
                    continue
                later = dups.get(k)
                if later is None:
                    cached.discard([k])
                elif cached.get(k) == b:     # the first copy goes: the next one is first now
                    cached.put(k, later.pop(0))
                else:
                    later.remove(b)
                if later is not None and not later:
                    del dups[k]
        if lost is not None:
            self.memo = memo.shrunk(lost, self.cached)

    # ------------------------------------------------------------ the free queue
    def num_free(self):
        return self.queue.size()

    def used(self):
        return self.in_use

    def _pop(self, n):
        """popleft_n: n blocks from the head; a cached one leaves the prefix cache."""
        blocks, evicted, pushes = self.queue.pop(n)
        if evicted:
            self._forget(evicted, blocks[len(blocks) - len(evicted):], pushes)
        self.in_use += n
        self.ops += n
        return blocks

    # ------------------------------------------------------------ requests
    def has(self, rid):
        return rid in self.table

    def n_blocks(self, rid):
        t = self.table.get(rid)
        return 0 if t is None else len(t)

    def lookup(self, rid, num_tokens):
        """get_computed_blocks: the cached blocks of the longest hit (at most num_tokens - 1
        tokens, whole blocks)."""
        nb = (num_tokens - 1) // self.bs
        memo = self.memo
        if memo is not None and memo.rid == rid and memo.nb == nb:
            memo.follow()                # looked up again: it waits, keep it up to date
            self.ops += 1
            return memo.hits
        keys = self.keys.keys(rid, 0, nb)
        hits = self.cached.run_of(keys)
        self.ops += len(hits) + 1
        self.memo = LookupMemo(rid, nb, keys, hits)
        if self.last_lookup == rid:      # looked up again (its memo was dropped): follow it
            self.memo.follow()
        self.last_lookup = rid
        return hits

    def probe(self, span, nodes, prompt, routed=None):
        """held()'s question about a request not yet here (its span_of, its hash-id nodes or
        None, its prompt), the same for every replica of a fleet (one scenario: the fleet asks
        it once a request, fleet/run.py): (maxb, bound, key tags or None, hash block or its
        stream's key base), or None when no block of it can be cached.
        maxb: the blocks a lookup may find (at most prompt - 1 tokens, within its span); bound:
        the blocks before the first node no request routed so far reached (routed: 1 + the
        largest node of their chains, or None: no bound). A key names its trie node (a tag is a
        run's first node, whose depth is fixed, + the block), so a block of a node no routed
        request reached is cached nowhere, and a lookup's run stops before it. A child node is
        numbered after its parent (workload/blocks.py): a chain's nodes increase, and the first
        one at or above `routed` is found by bisection."""
        bs = self.bs
        maxb = (prompt - 1) // bs
        if span[1] != ALL:
            maxb = min(maxb, span[1] // bs)
        if maxb == 0:
            return None
        if nodes is None:
            return maxb, maxb, None, (2 * span[0] + 1) * KEY_SPACE - 1   # + b + 1: block b's key
        hb, bound = self.keys.hb, maxb
        if routed is not None and nodes[(maxb * bs - 1) // hb] >= routed:   # block maxb - 1's
            bound = bisect_left(nodes, routed) * hb // bs   # < maxb
            if bound == 0:
                return None
        return maxb, bound, path_tags(nodes), hb

    def held(self, probe):
        """Prompt tokens of a request not yet here (its probe()) that a lookup would find cached
        now: what a router that reads the replicas' KV events sees. A binary search over its
        first `bound` blocks: vLLM caches a chain from its root and frees a request's blocks
        tail first, so a cached block's parents are cached too; the blocks from bound on are
        not cached. The work counted is that of a search over all maxb blocks."""
        maxb, bound, tags, base = probe
        bs, groups = self.bs, self.cached.groups
        last = bound - 1
        # block b's key inline (no call per probe: the router asks every replica about every
        # request): its hash block's path tag, or its stream's, then + b
        if tags is not None:
            hb = base
            if not holds(groups, tags[(bs - 1) // hb], 0):
                return 0
            if holds(groups, tags[(bound * bs - 1) // hb] + last, last):
                if bound < maxb:     # block maxb - 1 is not cached: a search's work
                    self.ops += maxb.bit_length()
                return bound * bs
            lo, hi = 1, bound     # block lo - 1 is cached, block hi - 1 is not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if holds(groups, tags[(mid * bs - 1) // hb] + mid - 1, mid - 1):
                    lo = mid
                else:
                    hi = mid
        else:
            if not holds(groups, base + 1, 0):
                return 0
            if holds(groups, base + bound, last):
                if bound < maxb:
                    self.ops += maxb.bit_length()
                return bound * bs
            lo, hi = 1, bound
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if holds(groups, base + mid, mid - 1):
                    lo = mid
                else:
                    hi = mid
        self.ops += maxb.bit_length()
        return lo * bs

    def need(self, rid, num_tokens, hits=()):
        """get_num_blocks_to_allocate: new blocks, plus hit blocks that must leave the queue."""
        t = self.table.get(rid)
        have = len(t) if t is not None else 0
        new = max(0, cdiv(num_tokens, self.bs) - have - len(hits))
        if not hits:
            return new
        at, head = self.queue.at, self.queue.head
        self.ops += len(hits)     # a look at every hit block (work: a blocked head asks each step)
        return new + sum(map(le, repeat(head), map(at.__getitem__, hits)))

    def allocate(self, rid, num_tokens, hits=()):
        """A waiting request's admission: touch the hits, then blocks for num_tokens in all."""
        t = self.table.setdefault(rid, [])
        memo = self.memo
        if memo is not None and memo.rid == rid:
            self.table_keys[rid] = memo.keys      # what its lookup computed
            self.memo = None
        if hits:
            queue, shared, shared_at = self.queue, self.shared, self.shared_at
            at, head, free = queue.at, queue.head, []
            for i, b in enumerate(hits):
                if at[b] >= head:        # free (in the back): it leaves the queue
                    free.append(b)
                else:                    # it gains a holder
                    shared[b] = shared.get(b, 0) + 1
                    shared_at[b] = i
            if free:
                queue.take(free)
                self.in_use += len(free)
            t += hits
            self.n_cached[rid] = len(t)
        want = cdiv(num_tokens, self.bs) - len(t)
        if want > 0:
            t += self._pop(want)

    def grow(self, rid, num_tokens):
        t = self.table[rid]
        want = cdiv(num_tokens, self.bs) - len(t)
        if want > 0:
            t += self._pop(want)

    def grow_many(self, grows):
        """grow() for each (request, num_tokens) in order, with one pop from the free queue:
        pop(n) hands blocks out in queue order, so each request gets the ids it would get one
        after the other (and the evictions, the work count and in_use are the sums). Most steps
        give 1-3 decoders a block each: one call instead of one a request (~12 % of a profile
        of bench/engine.py's Azure run)."""
        bs, table = self.bs, self.table
        tables, wants = [], []
        for rid, num_tokens in grows:
            t = table[rid]
            want = -(-num_tokens // bs) - len(t)
            if want > 0:
                tables.append(t)
                wants.append(want)
        if not tables:
            return
        n = sum(wants)
        blocks = self._pop(n)
        if n == len(tables):             # a block each
            deque(map(list.append, tables, blocks), 0)
            return
        i = 0
        for t, want in zip(tables, wants):
            t += blocks[i:i + want]
            i += want

    def try_grow(self, rid, num_tokens):
        """grow() if the free blocks suffice (True), else change nothing (False)."""
        t = self.table[rid]
        want = -(-num_tokens // self.bs) - len(t)
        if want <= 0:
            return True
        if want > self.queue.size():
            return False
        t += self._pop(want)
        return True

    def cache(self, rid, num_tokens, known_tokens):
        """cache_blocks: blocks full within num_tokens computed tokens, whose tokens are known
        (known_tokens: the request's num_tokens), enter the prefix cache."""
        bs = self.bs
        full = min(num_tokens, known_tokens - known_tokens % bs) // bs
        done = self.n_cached.get(rid, 0)
        if done >= full:
            return
        self.ops += ALONE_BLOCKS - 1 + full - done      # cache_block's call chain, and its blocks
        self._insert(self._keys_upto(rid, full), self.table[rid], done, full)
        self.n_cached[rid] = full

    def collide(self, stretches):
        """Would two of these (request, first block, end block) stretches of shared content
        cache the same key? Equal keys at a block mean equal content up to it (a trie node, a
        stream's block), so two stretches share a key exactly when they share their first
        common block's."""
        key = self.keys.key
        stretches = [s for s in stretches if s[1] < s[2]]
        for i, (r1, f1, e1) in enumerate(stretches):
            for r2, f2, e2 in stretches[i + 1:]:
                lo = max(f1, f2)
                if lo < min(e1, e2) and key(r1, lo) == key(r2, lo):
                    return True
        return False

    def cache_block(self, rid, b):
        """Cache block b of rid's table alone (the caller keeps n_cached: see VLLM._bulk)."""
        self.ops += ALONE_BLOCKS
        self._insert(self._keys_upto(rid, b + 1), self.table[rid], b, b + 1)

    def free_request(self, rid, finished):
        """free(): the table in reverse order; unhashed blocks to the front, cached to the back.
        A finished request's own keys can never be hit again: they leave the cache (the block
        keeps a cached block's place in the queue; in an unlimited pool that place is never
        reached, so the block is dropped)."""
        t = self.table.pop(rid, None)
        nc = self.n_cached.pop(rid, 0)
        ks = self.table_keys.pop(rid, None)
        if not t:
            return
        self.ops += len(t)
        queue = self.queue
        # the table and its keys are this call's now: cut and reversed in place, not copied (a
        # copy touches each of ~770 int objects; the key copy alone was 2.7% of a py-spy
        # profile of bench/fleet.py's round robin)
        cached = t if nc == len(t) else t[:nc]
        keys = ks if ks is not None and len(ks) >= nc else self.keys.keys(rid, 0, nc)
        if len(keys) > nc:
            del keys[nc:]
        if self.shared:
            cached, keys = self._release_shared(cached, keys)
        self.in_use -= len(t) - nc + len(cached)
        queue.push_front(t[:nc - 1:-1] if nc else t[::-1])   # hold no hash (never shared)
        own = alone = 0
        if finished:                     # own keys: only this request could hit them
            own = nc - min(nc, self.keys.own_from(rid))     # never shared: all still here
            top = nc                     # its blocks below top are pushed
            if own:
                self._forget(keys[-own:], cached[-own:])
                if self.total is None:
                    queue.drop(cached[len(cached) - own:][::-1])
                    cached, keys = cached[:-own], keys[:-own]
                    top -= own
                    own = 0
                else:
                    keys[-own:] = repeat(None, own)
            # no request could hit those of its blocks from hittable on (never shared: all
            # here, pushed first)
            alone = max(own, top - self.keys.hittable(rid))
        cached.reverse()                 # tail first: its own blocks first, hashes gone
        keys.reverse()
        queue.push_back(cached, keys, own, alone)

    def _release_shared(self, blocks, keys):
        """A table's cached blocks that other tables hold too lose one holder and stay; ->
        (blocks, keys) of the others, which are freed."""
        shared, shared_at, n = self.shared, self.shared_at, len(blocks)
        # which of them are shared: each shared block looked at at its index (a fleet's tables
        # are ~800 blocks, its shared blocks ~30: scanning the table was ~6% of bench/fleet.py)
        if len(shared) < n:
            mine = [i for b, i in shared_at.items() if i < n and blocks[i] == b]
        else:
            mine = [i for i, b in enumerate(blocks) if b in shared]
        if not mine:
            return blocks, keys
        for i in mine:
            b = blocks[i]
            c = shared[b]
            if c == 1:
                del shared[b]
                del shared_at[b]
            else:
                shared[b] = c - 1
        m = len(mine)
        if max(mine) == m - 1:      # usually the first blocks (a hit is a prefix run of keys)
            return blocks[m:], keys[m:]
        alone = [True] * n
        for i in mine:
            alone[i] = False
        return list(compress(blocks, alone)), list(compress(keys, alone))

    def free_listing(self):
        """The free queue's listed blocks head to tail, (block, key or None) (tests)."""
        return self.queue.listing()

    def state(self):
        """Everything later steps depend on (the livelock proof's digest): the queue's keys in
        order, every table's keys, the cache's blocks per key."""
        order = [k for _, k in self.free_listing()]
        if self.queue.fresh:
            order.insert(len(self.queue.front), "fresh")
        tables = []
        for r, t in sorted(self.table.items()):
            nc = self.n_cached.get(r, 0)
            tables.append((r, tuple(self._keys_upto(r, nc)[:nc]) + (None,) * (len(t) - nc)))
        dups = self.dups
        cached = sorted((k, (b,) + tuple(dups.get(k, ()))) for k, b in self.cached.items())
        return (tuple(order), tuple(tables), tuple(cached))
