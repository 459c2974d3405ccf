"""What a fleet's router asks a replica's prefix cache (mixed into scheduler.VLLM; fleet/run.py
Fleet.cached_all): a request's probe, computed once for all replicas, then each one's search."""

from .block_keys import span_of


class FleetProbe:

    def prefix_probe(self, trace, r, chain, routed=None):
        """What the fleet asks every replica about request r of its trace (not sent yet; chain:
        the fleet's hash-id nodes or None; routed: 1 + the largest node of the requests routed so
        far, or None): the same for every replica (one scenario), so computed once a request
        (None: no replica holds any of it; block_pool.PrefixCachePool.probe)."""
        if not self.pool.caching:
            return None
        span = span_of(trace, r, self.bs, chain)
        if span is None:
            return None
        return self.pool.probe(span, None if chain is None else chain[r], trace[1][r], routed)

    def cached_prefix(self, probe):
        """Prompt tokens of a request (its prefix_probe, not None) this replica's prefix cache
        holds now (fleet/run.py)."""
        return self.pool.held(probe) if self.pool.caching else 0
