"""Prompt content as chains of block ids: what prefix caches and prefix-aware routers match on.

A trace's `hash_ids` name a prompt's content one id per `hash_block` tokens (the Mooncake traces'
format): equal ids at equal positions are equal tokens. Equal content is equal *prefixes*, since
a block's KV depends on every token before it (vLLM chains each block's hash with its parent's):
so a request's blocks become the nodes of one trie over all the trace's id lists, and block j of
two requests is the same content exactly when they reach the same node at depth j.

`chains(trace)` -> per request its node ids, root first (None: no hash_ids). Nodes are numbered
0, 1, ... in order of first appearance (arrival order), so a trace gives the same numbers
everywhere.

Requests with a `prefix_id` share a stream instead (their first prefix_len tokens are the stream's
first tokens); `stream_chains` writes those as nodes too, so a router matches both kinds of trace by one rule:
the whole blocks of hash_block tokens a request's chain shares.
"""

from .generator import Trace

ID_SPAN = 2 ** 31          # hash ids are 0 .. ID_SPAN - 1 (the field workload.items.hash_ids)


def chains(trace):
    """Per request the trie nodes of its hash_ids (see the module docstring), or None."""
    given = getattr(trace, "chain", None)   # computed before, or a fleet's replica's share
    if given is not None:
        return given
    hids = getattr(trace, "hash_ids", None)
    if hids is None:
        return None
    node, out = {}, []
    get = node.get
    for ids in hids:
        if ids is None:
            out.append(None)
            continue
        parent, chain = -1, []
        for h in ids:
            # the child h of parent, as one int rather than a tuple (a third less time): ids are
            # below ID_SPAN (the field's range), so distinct pairs give distinct keys
            key = parent * ID_SPAN + h
            parent = get(key)
            if parent is None:
                parent = node[key] = len(node)
            chain.append(parent)
        out.append(chain)
    if isinstance(trace, Trace):         # once per trace: a fleet's replicas each ask again
        trace.chain = out
    return out


def stream_chains(trace):
    """Request by request (a generator: a fleet computes them as its router first asks, in
    arrival order, which numbers the nodes the same) the nodes of the whole `hash_block`-token
    blocks of its prompt that are shared content (its hash_ids, or its prefix_id's stream: a
    whole-prompt stream counts the whole prompt), [] when none are: what a prefix-aware router
    matches. A stream's block j is a node of its own, numbered after the trie's."""
    prompt, hb = trace[1], trace.hash_block
    hashed = chains(trace)
    pid, plen = getattr(trace, "prefix_id", None), getattr(trace, "prefix_len", None)
    base = 1 + max((max(c) for c in hashed or () if c), default=-1)
    stream = {}
    for r, p in enumerate(prompt):
        if hashed is not None and hashed[r] is not None:
            yield hashed[r][:p // hb]
        elif pid is not None and pid[r] is not None and plen[r]:
            span = min(p, plen[r])
            chain = []
            for j in range(span // hb):
                key = (pid[r], j)
                node = stream.get(key)
                if node is None:
                    node = stream[key] = base + len(stream)
                chain.append(node)
            yield chain
        else:
            yield []


def block_reuse(chain, replica_of=None):
    """Share of block references that a cache-only replay with no eviction hits: block
    references minus distinct blocks, over references, where a block is a trie node held by a
    replica (replica_of[r]: request r's replica; None: one cache for all). The Mooncake
    conversation trace: 36.64 % with one cache, 13.6 % round robin over 8 replicas."""
    refs, seen = 0, {}                     # replica -> the nodes it holds
    for r, c in enumerate(chain or ()):
        if not c:
            continue
        refs += len(c)
        k = 0 if replica_of is None else replica_of[r]
        held = seen.get(k)
        if held is None:
            held = seen[k] = set()
        held.update(c)
    distinct = sum(map(len, seen.values()))
    return (refs - distinct) / refs if refs else None
