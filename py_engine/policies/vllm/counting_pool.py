"""The vllm policy's KV pool when prefix caching is off (or cannot be observed): blocks are
interchangeable, so only counts matter. The same interface as block_pool.PrefixCachePool."""

from ...sim.exact import cdiv
from .free_queue import UNLIMITED


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

    def grow_many(self, grows):
        """grow() for each (request, num_tokens), in order."""
        bs, held = self.bs, self.held
        for rid, num_tokens in grows:
            want = -(-num_tokens // bs)
            have = held[rid]
            if want > have:
                self.free -= want - have
                held[rid] = want

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
