"""Block keys: the content a request's block holds, as the prefix cache matches it.

vLLM hashes each full block's tokens chained with its parent's hash, so two blocks match exactly
when the token prefixes up to them are equal. The engine knows token identities without tokens:
request r's tokens are the first `prefix_len` tokens of its prefix id's shared stream, then tokens
of its own; a request whose whole prompt is its stream's start continues the stream with its
outputs (a deterministic model answers the same context the same way). So block b of r is the
stream's block b, key `shared(pid, b)`, while it lies inside that shared span, and r's own block
otherwise, key `own(r, b)`. A request with `hash_ids` names its content itself: block b is shared
content while it lies inside the prompt, its key the trie node (workload/blocks.py) of the hash
block holding its last token: equal nodes, equal tokens up to there.

A trie node's key names it by its *path*: a node whose id is its parent's + 1 (both were first
seen in one request: chains number new nodes in order) continues its parent's path, any other
starts one, named by its own id. A node is (its path, its depth), and depth is b's hash block, so
the key `path tag + b` is as unique as the node; but a request's prompt, ~24 Mooncake hash
blocks, is ~3 paths, so its keys are ~3 runs of consecutive ints instead of one per hash block
(the prefix cache works a run at a time, prefix_cache.py).

Keys are ints, `tag * KEY_SPACE + b`, the tag naming the content (odd: shared, even: own). Within
one stretch of a request's blocks that share a tag (its own blocks, its stream's span, the blocks
of one hash block) the keys step by 1: `runs` gives them as ranges, so the pool handles a
request's blocks with C-level map / zip instead of a Python call per block.

Why the tag is the high part and KEY_SPACE odd: a dict finds an int key's slot from its low bits.
Keys `b * 2**34 + tag` (as they once were) put every block of one tag in one slot, and each
insert or pop of the prefix cache walked a chain of collisions (4x the time, measured). Here
one tag's blocks are consecutive ints (consecutive slots), and an odd multiplier spreads the
tags over the low bits.
"""

from collections import Counter
from itertools import chain as chain_from

KEY_SPACE = 0x4F1BBCD      # keys: (2 * prefix_id + 1 | 2 * request) * KEY_SPACE + block; odd,
                           # above any block index (82.9M; a request has at most 11M tokens),
                           # and small enough that keys stay below 2**60 (two int digits)
NODE_BASE = 1 << 31        # ... or 2 * (NODE_BASE + hash-id node) + 1
ALL = float("inf")         # a span that continues its stream with the outputs


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
        return (pid[r], ALL)
    if plen >= block_size:
        return (pid[r], plen)
    return None                  # not one whole block of stream


def shared_spans(trace, block_size, hashed=None):
    """span_of every request of the trace."""
    return [span_of(trace, r, block_size, hashed) for r in range(len(trace[0]))]


class BlockKeys:
    """The keys of every request's blocks (spans: shared_spans, kept up to date by the caller;
    chain[r]: r's hash-id trie nodes, or chain None: no hash ids)."""

    def __init__(self, block_size, spans, chain=None, hash_block=None, every_chain=None):
        """every_chain: the chains of every request that may come (a fleet's whole trace), or
        None: then any shared block may be hit again."""
        self.bs, self.spans, self.chain, self.hb = block_size, spans, chain, hash_block
        self.uses = None if chain is None or every_chain is None else node_uses(every_chain)

    def key(self, rid, b):
        """The key of block b of request rid."""
        span = self.spans[rid]
        if span is not None and (b + 1) * self.bs <= span[1]:
            if self.chain is not None:   # the node of the hash block holding b's last token
                return path_tags(self.chain[rid])[((b + 1) * self.bs - 1) // self.hb] + b
            return (2 * span[0] + 1) * KEY_SPACE + b
        return 2 * rid * KEY_SPACE + b

    def own_from(self, rid):
        """The first block of rid whose key is its own (every later one's is too)."""
        span = self.spans[rid]
        if span is None:
            return 0
        return span[1] // self.bs if span[1] != ALL else 1 << 62

    def hittable(self, rid):
        """How many of rid's first blocks another request could hit: its shared span, but not
        the blocks of trie nodes no other request reaches (a chain's nodes that others reach
        are a prefix of it: a node's parent is reached wherever the node is)."""
        own = self.own_from(rid)
        if self.uses is None or self.chain[rid] is None:
            return own
        reached = list(map(self.uses.__getitem__, self.chain[rid]))
        alone = reached.index(1) if 1 in reached else len(reached)
        return min(own, alone * self.hb // self.bs)

    def runs(self, rid, b0, b1):
        """The keys of blocks b0..b1-1 of rid, in order, as ranges (one per stretch of one tag)."""
        if b1 <= b0:
            return []
        out = []
        s = min(b1, self.own_from(rid))
        if b0 < s:
            span = self.spans[rid]
            if self.chain is None:
                tag = (2 * span[0] + 1) * KEY_SPACE
                out.append(range(tag + b0, tag + s))
            else:   # the blocks whose last token lies in hash block j: j*hb//bs .. (j+1)*hb//bs
                tags, bs, hb = path_tags(self.chain[rid]), self.bs, self.hb
                b = b0
                while b < s:
                    j = ((b + 1) * bs - 1) // hb
                    tag = tags[j]
                    j += 1
                    while j < len(tags) and tags[j] == tag:    # one path: one run
                        j += 1
                    end = min(s, j * hb // bs)
                    out.append(range(tag + b, tag + end))
                    b = end
            b0 = s
        if b0 < b1:
            tag = 2 * rid * KEY_SPACE
            out.append(range(tag + b0, tag + b1))
        return out

    def keys(self, rid, b0, b1):
        """The keys of blocks b0..b1-1 of rid, as a list."""
        runs = self.runs(rid, b0, b1)
        if len(runs) == 1:
            return list(runs[0])
        out = []
        for run in runs:
            out += run
        return out


_tags_of = [None, None]    # the last chain path_tags was asked about, and its answer


def path_tags(nodes):
    """Per hash block of a chain (trie nodes, root first) its path's key tag (see the module
    docstring). Kept for the last chain asked about: a fleet asks each replica in turn about the
    request it routes, and a request's own calls come in bursts."""
    if _tags_of[0] is nodes:
        return _tags_of[1]
    tags, tag, prev = [], 0, -2
    for node in nodes:
        if node != prev + 1:
            tag = (2 * (NODE_BASE + node) + 1) * KEY_SPACE
        tags.append(tag)
        prev = node
    _tags_of[0], _tags_of[1] = nodes, tags
    return tags


_uses_of = [None, None]    # the last chains node_uses counted, and the counts


def node_uses(every_chain):
    """Per trie node, how many of these chains reach it (each replica of a fleet asks about
    the same whole trace: counted once)."""
    if _uses_of[0] is not every_chain:
        _uses_of[0], _uses_of[1] = every_chain, Counter(
            chain_from.from_iterable(c for c in every_chain if c is not None))
    return _uses_of[1]
