"""The block view: the paged pool sampled over a run, bounded, for the page (result `kv_blocks`).

Layouts: sim/records.py KV_SAMPLE and KV_HOLDER.
"""

from ...sim import records

SAMPLE_CAP = 480           # block-view samples per run at most (about one per pixel column)
HOLDER_CAP = 1 << 16       # ... and holder rows: fewer samples when max_num_seqs is large
NEVER = float("inf")       # the next sample's pass once sampling stopped


def sample_cap(max_seqs):
    return max(16, min(SAMPLE_CAP, HOLDER_CAP // max(1, max_seqs)))


def holders(policy):
    """The running requests' (request, slot, blocks) at this moment, as a callable: the state is
    copied now as lists of keys and values (the dicts have had many deletions, and copying such a
    dict inserts item by item: 3x slower), the rows are built only when called (most samples are
    thinned away before the document is built, and building rows walks every running request)."""
    pool, slot_of = policy.pool, policy.slot_of
    # every slot holder is running: a sample is taken after the step is applied, when the
    # finished and the preempted have left both (checking it cost more than the copies)
    slots = list(slot_of), list(slot_of.values())
    if pool.caching:
        table = pool.table
        held = list(table), list(map(len, table.values()))
        steady, s = None, 0
    else:   # the steady ones' blocks follow from sd and sp (pool.held is stale for them):
        # pool.held is read for the special ones alone (the others' part of it would be
        # overwritten; where most are steady, copying it all cost more than this walk)
        special, blocks_held = list(policy.special), pool.held
        held = special, [blocks_held[r] for r in special]
        steady, s = ((list(policy.sd), list(policy.sd.values())), policy.sd_steps) if policy.sd \
            else (None, 0)
    # ... and the steady prefillers' from sp: a + chunk sp_steps computed tokens
    prefills = (list(policy.sp), list(policy.sp.values())) if policy.sp else None
    chunk, sp_steps = policy.chunk, policy.sp_steps
    bs = policy.bs

    def rows():
        blocks = dict(zip(*held))
        if steady is not None:      # computed tokens = a + sd_steps
            blocks.update((r, -(-(a + s) // bs)) for r, (a, _, _) in zip(*steady))
        if prefills is not None:
            blocks.update((r, -(-(a + chunk * sp_steps) // bs)) for r, (a, _) in zip(*prefills))
        return [(r, slot, blocks.get(r, 0)) for r, slot in zip(*slots)]
    return rows


class BlockSamples:
    """The pool over a run, for the page's block view, bounded: at most `cap` samples spread over
    the run (when full, every other one goes and the spacing doubles), each the pool right after a
    step was scheduled (vLLM's state for that pass): blocks in use, free blocks that still hold a
    cached prefix, free blocks, and every running request's block-table length by slot.
    Layouts: records.KV_SAMPLE, records.KV_HOLDER."""

    def __init__(self, cap, block_size, total):
        self.cap, self.block_size, self.total = cap, block_size, total
        self.stride, self.next = 1, 1
        self.rows = []                   # (pass, used, cached_free, free, holders())

    def stop(self):
        """No more samples (nobody will read them: Policy.hide_block_view); those taken go."""
        self.next = NEVER
        self.rows = []

    def take(self, p, pool, holders):
        """Sample pass p if it is due; holders: a callable -> (request, slot, blocks) of the
        running requests at pass p (block_view.holders), called if the sample is kept."""
        if p < self.next:
            return
        free = None if self.total is None else pool.num_free()
        self.rows.append((p, pool.used(), pool.cached_free, free, holders))
        self.next = p + self.stride
        if len(self.rows) > self.cap:
            self.rows = self.rows[::2]
            self.stride *= 2
            self.next = self.rows[-1][0] + self.stride

    def document(self):
        """The samples as the result's `kv_blocks` (column lists: bounded, plain JSON)."""
        cols = {n: [] for n in records.names(records.KV_SAMPLE)}
        hold = {n: [] for n in records.names(records.KV_HOLDER)}
        for p, used, cached, free, holders in self.rows:
            hs = sorted((slot, r, b) for r, slot, b in holders() if b)
            cols["pass"].append(p)
            cols["used"].append(used)
            cols["cached_free"].append(cached)
            cols["free"].append(free)
            cols["holders"].append(len(hs))
            for slot, r, b in hs:
                hold["request"].append(r)
                hold["slot"].append(slot)
                hold["blocks"].append(b)
        return {"block_size": self.block_size, "total": self.total, "stride": self.stride,
                "samples": cols, "holders": hold}
