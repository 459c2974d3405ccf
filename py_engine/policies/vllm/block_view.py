"""The block view: the paged pool sampled over a run, bounded, for the page (result `kv_blocks`).

Layouts: sim/records.py KV_SAMPLE and KV_HOLDER.
"""

from ...sim import records

SAMPLE_CAP = 480           # block-view samples per run at most (about one per pixel column)
HOLDER_CAP = 1 << 16       # ... and holder rows: fewer samples when max_num_seqs is large


def sample_cap(max_seqs):
    return max(16, min(SAMPLE_CAP, HOLDER_CAP // max(1, max_seqs)))


class BlockSamples:
    """The pool over a run, for the page's block view, bounded: at most `cap` samples spread over
    the run (when full, every other one goes and the spacing doubles), each the pool right after a
    step was scheduled (vLLM's state for that pass): blocks in use, free blocks that still hold a
    cached prefix, free blocks, and every running request's block-table length by slot.
    Layouts: records.KV_SAMPLE, records.KV_HOLDER."""

    def __init__(self, cap, block_size, total):
        self.cap, self.block_size, self.total = cap, block_size, total
        self.stride, self.next = 1, 1
        self.rows = []                   # (pass, used, cached_free, free, [(request, slot, blocks)])

    def take(self, p, pool, holders):
        """Sample pass p if it is due; holders: (request, slot) of the running requests."""
        if p < self.next:
            return
        free = None if self.total is None else pool.num_free()
        hs = sorted((slot, r, pool.n_blocks(r)) for r, slot in holders)
        self.rows.append((p, pool.used(), pool.cached_free, free,
                          [(r, slot, b) for slot, r, b in hs if b]))
        self.next = p + self.stride
        if len(self.rows) > self.cap:
            self.rows = self.rows[::2]
            self.stride *= 2
            self.next = self.rows[-1][0] + self.stride

    def document(self):
        """The samples as the result's `kv_blocks` (column lists: bounded, plain JSON)."""
        cols = {n: [] for n in records.names(records.KV_SAMPLE)}
        hold = {n: [] for n in records.names(records.KV_HOLDER)}
        for p, used, cached, free, hs in self.rows:
            cols["pass"].append(p)
            cols["used"].append(used)
            cols["cached_free"].append(cached)
            cols["free"].append(free)
            cols["holders"].append(len(hs))
            for r, slot, b in hs:
                hold["request"].append(r)
                hold["slot"].append(slot)
                hold["blocks"].append(b)
        return {"block_size": self.block_size, "total": self.total, "stride": self.stride,
                "samples": cols, "holders": hold}
