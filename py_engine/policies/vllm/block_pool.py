"""vLLM 0.33.0's paged KV cache for one full-attention group: the block pool, its free-block queue,
the prefix cache and every request's block table, with the semantics of vLLM's own code
(vllm/v1/core/block_pool.py, kv_cache_utils.py `FreeKVCacheBlockQueue`,
single_type_kv_cache_manager.py `FullAttentionManager`, kv_cache_manager.py `allocate_slots`).

- The pool has `total` usable blocks (vLLM's num_gpu_blocks - 1: block 0 is its null block), or is
  unlimited (total None). All start free, in id order, in the free queue.
- Allocation pops blocks from the head of the free queue; a popped block that holds a hash leaves
  the prefix cache (that is the eviction).
- A request's blocks are freed in reverse order (its tail first); a block whose reference count
  drops to 0 goes to the FRONT of the queue when it holds no hash (reused first) and to the BACK
  when it is cached (evicted last, least recently freed first).
- Caching: once a block is full of computed tokens whose ids are known, it takes its content hash
  and enters the prefix cache (hash -> the blocks holding it, in insertion order; a lookup takes
  the first). A prefix hit touches the blocks: +1 reference, and a free one leaves the queue.
- A lookup finds the longest run of cached blocks from a request's first block, capped so that at
  least one token is computed (num_tokens - 1), in whole blocks.

Hashes. vLLM hashes each full block's tokens chained with its parent's hash, so two blocks match
exactly when the token prefixes up to them are equal. The engine knows token identities without
tokens: request r's tokens are the first `prefix_len` tokens of its prefix id's shared stream,
then tokens of its own; a request whose whole prompt is its stream's start continues the stream
with its outputs (a deterministic model answers the same context the same way). So block b of r is
the stream's block b, key `shared(pid, b)`, while it lies inside that shared span, and r's own
block otherwise, key `own(r, b)`. A request with `hash_ids` names its content itself: block b is
shared content while it lies inside the prompt, its key the trie node (workload/blocks.py) of the
hash block holding its last token: equal nodes, equal tokens up to there.

Only what can be observed is kept: a finished request's own-key blocks can never be hit again, so
their hashes leave the cache when they are freed (the blocks keep their place in the queue, where
a cached block would be); in an unlimited pool the blocks behind the never-used ones are never
reached, so those are not kept at all. Blocks are ids, created when first used.

`CountingPool` is the same interface when prefix caching is off: then blocks are interchangeable
and only counts matter.
"""

from ...sim.exact import cdiv


KEY_SPACE = 1 << 34        # keys: block * KEY_SPACE + (2 * prefix_id + 1 | 2 * request)
NODE_BASE = 1 << 31        # ... or 2 * (NODE_BASE + hash-id node) + 1
UNLIMITED = 1 << 62        # never-used blocks of an unlimited pool
HEAD, TAIL, FRESH = 0, 1, 2  # sentinel nodes of the free queue (FRESH = the never-used blocks)


def span_of(trace, r, block_size, hashed=None):
    """Request r's (group, tokens of it that are shared content), or None: the group is its
    prefix id, or ("h", its first hash-id node) for a request with hash_ids (whose blocks' keys
    follow its chain `hashed[r]`, workload/blocks.py chains(trace))."""
    if hashed is not None:
        c = hashed[r]
        return None if c is None else (("h", c[0]), trace[1][r])
    pid = getattr(trace, "prefix_id", None)
    if pid is None or pid[r] is None:
        return None
    plen, prompt = trace.prefix_len[r], trace[1][r]
    if plen >= prompt:           # a whole prompt of stream continues it with its outputs
        return (pid[r], float("inf"))
    if plen >= block_size:
        return (pid[r], plen)
    return None                  # not one whole block of stream


def shared_spans(trace, block_size, hashed=None):
    """span_of every request of the trace."""
    return [span_of(trace, r, block_size, hashed) for r in range(len(trace[0]))]


class CountingPool:
    """Block counts only (prefix caching off: every free block is as good as any other)."""

    caching = False
    cached_free = 0
    ops = 0                             # counts only: every operation is O(1)

    def __init__(self, total, block_size):
        self.total, self.bs = total, block_size
        self.free = UNLIMITED if total is None else total
        self.held = {}                  # request -> blocks held

    def num_free(self):
        return self.free

    def used(self):
        return (UNLIMITED if self.total is None else self.total) - self.free

    def has(self, rid):
        return rid in self.held

    def n_blocks(self, rid):
        return self.held.get(rid, 0)

    def lookup(self, rid, num_tokens):
        return ()

    def need(self, rid, num_tokens, hits=()):
        return max(0, cdiv(num_tokens, self.bs) - self.held.get(rid, 0))

    def allocate(self, rid, num_tokens, hits=()):
        have = self.held.get(rid, 0)
        want = cdiv(num_tokens, self.bs)
        if want > have:
            self.free -= want - have
            self.held[rid] = want
        elif rid not in self.held:
            self.held[rid] = have

    def grow(self, rid, num_tokens):
        """allocate() for a running request (no hits): blocks for num_tokens in all."""
        want = cdiv(num_tokens, self.bs)
        have = self.held[rid]
        if want > have:
            self.free -= want - have
            self.held[rid] = want

    def try_grow(self, rid, num_tokens):
        """grow() if the free blocks suffice (True), else change nothing (False)."""
        want = -(-num_tokens // self.bs) - self.held[rid]
        if want <= 0:
            return True
        if want > self.free:
            return False
        self.free -= want
        self.held[rid] += want
        return True

    def cache(self, rid, num_tokens, known_tokens):
        pass

    def free_request(self, rid, finished):
        self.free += self.held.pop(rid, 0)


class PrefixCachePool:
    """Block ids, the free queue, the prefix cache and block tables (prefix caching on)."""

    caching = True

    def __init__(self, total, block_size, shared_span, chain=None, hash_block=None):
        """shared_span[r] = (group, tokens of r that are shared) or None (shared_spans);
        chain[r] = r's hash-id trie nodes (workload/blocks.py), or chain None: no hash ids."""
        self.total, self.bs = total, block_size
        self.span = shared_span
        self.chain, self.hb = chain, hash_block
        # the free queue: a doubly linked list over node ids (blocks are ids >= 3)
        self.nxt, self.prv = [FRESH, None, TAIL], [None, FRESH, HEAD]
        self.fresh_left = UNLIMITED if total is None else total
        self.listed = 0                  # free blocks in the list (the rest are FRESH)
        self.ref, self.hash = [0, 0, 0], [None, None, None]
        self.spare = []                  # ids of blocks that are gone for good (reusable ids)
        self.cached = {}                 # key -> [blocks holding it], insertion order
        self.table = {}                  # request -> [blocks]
        self.n_cached = {}               # request -> blocks of its table already cached
        self.in_use = 0
        self.cached_free = 0             # free blocks that hold a hash (the block view shows them)
        self.ops = 0                     # blocks touched so far (the run's work, py_engine/sim/work.py)
        if not self.fresh_left:
            self.nxt[HEAD], self.prv[TAIL] = TAIL, HEAD

    # ------------------------------------------------------------ keys
    def key(self, rid, b):
        span = self.span[rid]
        if span is not None and (b + 1) * self.bs <= span[1]:
            if self.chain is not None:   # the node of the hash block holding b's last token
                return b * KEY_SPACE + 2 * (NODE_BASE + self.chain[rid][
                    ((b + 1) * self.bs - 1) // self.hb]) + 1
            return b * KEY_SPACE + 2 * span[0] + 1
        return b * KEY_SPACE + 2 * rid

    # ------------------------------------------------------------ the free queue
    def num_free(self):
        return self.listed + self.fresh_left

    def used(self):
        return self.in_use

    def _new_id(self):
        if self.spare:
            b = self.spare.pop()
            self.ref[b], self.hash[b] = 0, None
            return b
        self.ref.append(0)
        self.hash.append(None)
        self.nxt.append(None)
        self.prv.append(None)
        return len(self.ref) - 1

    def _unlink(self, b):
        p, q = self.prv[b], self.nxt[b]
        self.nxt[p], self.prv[q] = q, p
        self.listed -= 1
        if self.hash[b] is not None:
            self.cached_free -= 1

    def _pop(self, n):
        """popleft_n: n blocks from the head; a cached one leaves the prefix cache."""
        out = []
        nxt, hash_ = self.nxt, self.hash
        while n:
            b = nxt[HEAD]
            if b == FRESH:
                m = min(n, self.fresh_left)
                out.extend(self._new_id() for _ in range(m))
                self.fresh_left -= m
                n -= m
                if not self.fresh_left:     # the never-used blocks are used up
                    p, q = HEAD, nxt[FRESH]
                    nxt[p], self.prv[q] = q, p
                continue
            self._unlink(b)
            if hash_[b] is not None:        # evict
                self._uncache(b, hash_[b])
            out.append(b)
            n -= 1
        for b in out:
            self.ref[b] = 1
        self.in_use += len(out)
        self.ops += len(out)
        return out

    def _put(self, blocks, front):
        if not blocks:
            return
        nxt, prv = self.nxt, self.prv
        if front:
            p, q = HEAD, nxt[HEAD]
        else:
            p, q = prv[TAIL], TAIL
        hash_ = self.hash
        for b in blocks:
            nxt[p], prv[b] = b, p
            p = b
            if hash_[b] is not None:
                self.cached_free += 1
        nxt[p], prv[q] = q, p
        self.listed += len(blocks)
        self.ops += len(blocks)

    # ------------------------------------------------------------ requests
    def has(self, rid):
        return rid in self.table

    def n_blocks(self, rid):
        t = self.table.get(rid)
        return 0 if t is None else len(t)

    def lookup(self, rid, num_tokens):
        """get_computed_blocks: the cached blocks of the longest hit (at most num_tokens - 1
        tokens, whole blocks)."""
        hits, cached = [], self.cached
        for b in range((num_tokens - 1) // self.bs):
            blocks = cached.get(self.key(rid, b))
            if not blocks:
                break
            hits.append(blocks[0])
        self.ops += len(hits) + 1
        return hits

    def held(self, span, nodes, prompt):
        """Prompt tokens of a request not yet here (its span_of, its hash-id nodes or None, its
        prompt) that a lookup would find cached now: what a router that reads the replicas' KV
        events sees. A binary search over the blocks: vLLM caches a chain from its root and
        frees a request's blocks tail first, so a cached block's parents are cached too."""
        bs, cached = self.bs, self.cached
        maxb = (prompt - 1) // bs
        if span[1] != float("inf"):
            maxb = min(maxb, span[1] // bs)
        if nodes is not None:
            hb, base = self.hb, NODE_BASE

            def key(b):
                return b * KEY_SPACE + 2 * (base + nodes[((b + 1) * bs - 1) // hb]) + 1
        else:
            own = 2 * span[0] + 1

            def key(b):
                return b * KEY_SPACE + own
        if maxb == 0 or key(0) not in cached:
            return 0
        if key(maxb - 1) in cached:
            return maxb * bs
        lo, hi = 1, maxb          # block lo - 1 is cached, block hi - 1 is not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if key(mid - 1) in cached:
                lo = mid
            else:
                hi = mid
        self.ops += maxb.bit_length()
        return lo * bs

    def need(self, rid, num_tokens, hits=()):
        """get_num_blocks_to_allocate: new blocks, plus hit blocks that must leave the queue."""
        t = self.table.get(rid)
        have = len(t) if t is not None else 0
        ref = self.ref
        return (max(0, cdiv(num_tokens, self.bs) - have - len(hits))
                + sum(1 for b in hits if ref[b] == 0))

    def allocate(self, rid, num_tokens, hits=()):
        """A waiting request's admission: touch the hits, then blocks for num_tokens in all."""
        t = self.table.setdefault(rid, [])
        if hits:
            ref = self.ref
            for b in hits:
                if ref[b] == 0:
                    self._unlink(b)
                    self.in_use += 1
                ref[b] += 1
            t.extend(hits)
            self.n_cached[rid] = len(t)
        want = cdiv(num_tokens, self.bs) - len(t)
        if want > 0:
            t.extend(self._pop(want))

    def grow(self, rid, num_tokens):
        t = self.table[rid]
        want = cdiv(num_tokens, self.bs) - len(t)
        if want > 0:
            t.extend(self._pop(want))

    def try_grow(self, rid, num_tokens):
        """grow() if the free blocks suffice (True), else change nothing (False)."""
        t = self.table[rid]
        want = -(-num_tokens // self.bs) - len(t)
        if want <= 0:
            return True
        if want > self.listed + self.fresh_left:
            return False
        t.extend(self._pop(want))
        return True

    def cache(self, rid, num_tokens, known_tokens):
        """cache_blocks: blocks full within num_tokens computed tokens, whose tokens are known
        (known_tokens: the request's num_tokens), enter the prefix cache."""
        bs = self.bs
        full = min(num_tokens, known_tokens - known_tokens % bs) // bs
        done = self.n_cached.get(rid, 0)
        if done >= full:
            return
        t, hash_, cached = self.table[rid], self.hash, self.cached
        self.ops += full - done
        for b in range(done, full):
            blk = t[b]
            k = self.key(rid, b)
            if hash_[blk] == k:
                continue
            blocks = cached.get(k)
            if blocks is None:
                cached[k] = [blk]
            elif blk in blocks:
                continue
            else:
                blocks.append(blk)
            hash_[blk] = k
        self.n_cached[rid] = full

    def cache_block(self, rid, b):
        """Cache block b of rid's table alone (the caller keeps n_cached: see VLLM._bulk)."""
        blk = self.table[rid][b]
        k = self.key(rid, b)
        self.ops += 1
        if self.hash[blk] == k:
            return
        blocks = self.cached.get(k)
        if blocks is None:
            self.cached[k] = [blk]
        elif blk not in blocks:
            blocks.append(blk)
        self.hash[blk] = k

    def _uncache(self, b, k):
        blocks = self.cached[k]
        blocks.remove(b)
        if not blocks:
            del self.cached[k]
        self.hash[b] = None

    def free_request(self, rid, finished):
        """free(): the table in reverse order; unhashed blocks to the front, cached to the back.
        A finished request's own keys can never be hit again: they leave the cache (the block
        keeps a cached block's place in the queue; in an unlimited pool that place is never
        reached, so the block is dropped)."""
        t = self.table.pop(rid, None)
        self.n_cached.pop(rid, None)
        if not t:
            return
        self.ops += len(t)
        front, back = [], []
        ref, hash_ = self.ref, self.hash
        for b in reversed(t):
            ref[b] -= 1
            if ref[b]:
                continue
            self.in_use -= 1
            k = hash_[b]
            if k is None:
                front.append(b)
                continue
            if finished and not k & 1:
                self._uncache(b, k)
                if self.total is None:
                    self.spare.append(b)
                    continue
            back.append(b)
        self._put(front, True)
        self._put(back, False)
