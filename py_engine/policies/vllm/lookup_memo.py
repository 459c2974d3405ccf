"""The last prefix-cache lookup, kept up to date (block_pool.PrefixCachePool.memo).

A waiting head that does not fit is looked up again at every step until it does, each time
~(prompt / block_size) dict probes. Its answer (the longest run of cached keys from its first
block, each key's first block) changes only when a block enters the cache under the key it
missed (the run grows) or a block of the run leaves it (the run ends there, or a later copy of
that key is first now). The pool reports both, so a repeated lookup is one comparison. Until the
head is looked up a second time the memo follows no key (most heads fit at once): any eviction
then drops it.
"""


class LookupMemo:

    __slots__ = ("rid", "nb", "keys", "hits", "missed", "found")

    def __init__(self, rid, nb, keys, hits):
        self.rid, self.nb = rid, nb      # the request and how many blocks it looked up
        self.keys = keys                 # their keys
        self.hits = hits                 # the first block of each key of the run
        self.missed = keys[len(hits)] if len(hits) < nb else None
        self.found = None                # key -> its place in the run, once followed

    def follow(self):
        """It is looked up again: from now on follow each key of its run."""
        if self.found is None:
            self.found = dict(zip(self.keys, range(len(self.hits))))

    def extend(self, cached):
        """The missed key was cached: the run goes on as far as the cache (prefix_cache.py)
        has it now."""
        h = len(self.hits)
        more = cached.run_of(self.keys[h:])
        self.hits = self.hits + more
        if self.found is not None:
            self.found.update(zip(self.keys[h:h + len(more)], range(h, h + len(more))))
        self.missed = self.keys[len(self.hits)] if len(self.hits) < self.nb else None

    def lost(self, keys):
        """Before keys leave the cache: None (the run is not touched), True (it may be: the
        memo follows no key), or the set of its keys among them."""
        if not self.hits:
            return None
        if self.found is None:
            return True
        h, found = len(self.hits), self.found
        gone = {k for k in found.keys() & keys if found[k] < h}
        return gone or None

    def shrunk(self, gone, cached):
        """After the keys `lost` named left: the memo with its run cut at the first key no
        block holds now (or None: it followed no key)."""
        if gone is True:
            return None
        hits, cut = list(self.hits), len(self.hits)
        for k in gone:
            b, p = cached.get(k), self.found[k]
            if b is None:
                cut = min(cut, p)
            else:                        # a later copy of that key is first now
                hits[p] = b
        self.hits = hits[:cut]
        self.missed = self.keys[cut] if cut < self.nb else None
        return self
