"""The vllm policy's livelock proof. With a tight pool and priority (or no full-prompt admission)
vLLM's scheduler can preempt in a cycle forever; the real vLLM then never finishes the trace. After
LIVELOCK_AFTER passes without a sampled token, every preempting step records a digest of the
scheduler's whole state; the same digest twice, with no arrival pending, is a proven cycle and a
ScenarioError on server.kv_tokens. Any token sampled clears the record (VLLM._progress)."""

import hashlib

from ...errors import ScenarioError

LIVELOCK_AFTER = 256     # passes without a sampled token before states are compared
CHARS_PER_UNIT = 8       # characters of a state's text per unit of work (sim/work.py)
ENTRY_CHARS = 12         # characters an entry of the state's text takes, at the least about
                         # (13-22 measured: a request's numbers, a block's key)


def check_livelock(policy, version):
    """Raise a ScenarioError if the scheduler's whole state repeats with no arrival pending and no
    token sampled since (a proven cycle); called after a step that preempted."""
    sim = policy.sim
    if (sim.next_arrival < sim.n or sim.open or policy.arrived
            or sim.passes - policy.last_progress < LIVELOCK_AFTER):
        return
    # its work: ~0.12 us a character natively, building, sorting and writing it (the prefix
    # cache's entries among it: counting only the running, waiting and used blocks missed 620k
    # cached ones, 4.5 us a unit). Counted before it is built, as far as its entries tell (one
    # such state was 3.26M units: counted after, a run went that far past its cap)
    ahead = _entries(policy) * ENTRY_CHARS // CHARS_PER_UNIT
    sim.count_work_ahead(ahead)
    state = _state(policy)
    # the state is O(running + blocks): only its 128-bit digest is kept (states were once kept
    # whole: 540 MB for a chunk-1 run whose prefills sample nothing for thousands of passes)
    text = repr(state)
    sim.count_work(max(0, len(text) // CHARS_PER_UNIT - ahead))
    key = hashlib.blake2b(text.encode(), digest_size=16).digest()
    first = policy.seen.get(key)
    if first is None:
        policy.seen[key] = sim.passes
        return
    cycle = sorted(policy.victims)
    raise ScenarioError(
        "server.kv_tokens", policy.scenario.kv_pool,
        "enough for this trace to finish",
        "vLLM %s never finishes this trace: from pass %d its scheduler repeats a cycle of "
        "%d passes in which requests %s preempt each other and no token is produced "
        "(server.kv_tokens = %s, policy %s, scheduler_reserve_full_isl %s). A larger KV pool, "
        "full-prompt admission or fcfs avoid it." % (
            version, first, sim.passes - first,
            ", ".join(map(str, cycle[:8])) + (" ..." if len(cycle) > 8 else ""),
            policy.scenario.kv_pool, "fcfs" if policy.fcfs else "priority",
            "on" if policy.full_fit else "off"))


def _entries(policy):
    """The entries _state lists, about: the running and waiting requests, and each block once or
    twice (free or in a table, and cached)."""
    n = len(policy.running) + len(policy.waitq) + len(policy.saved)
    pool = policy.pool
    if pool.caching:
        n += (pool.total or 0) + pool.queue.n_hashed + pool.in_use
    return n


def _state(policy):
    """Everything the next steps depend on (no arrival is pending)."""
    computed, num_tokens = policy.num_computed_tokens, policy.num_tokens
    placeholders, pool = policy.num_output_placeholders, policy.pool
    parts = [tuple((r, computed[r], num_tokens[r], placeholders[r], policy.inflight[r])
                   for r in policy.running),
             policy.waitq.state(), pool.num_free(),
             tuple(sorted(policy.saved.items()))]
    if pool.caching:
        parts += pool.state()
    return tuple(parts)
