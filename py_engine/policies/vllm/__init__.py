"""The vllm policy: vLLM 0.33.0's V1 scheduler, decision for decision.

    scheduler.py   the scheduler's steps (vllm/v1/core/sched/scheduler.py, async_scheduler.py);
                   SpeculativeVLLM: block counts until a preemption makes the prefix cache
                   observable, then the run starts over (what api.run_steps and fleets run)
    admission.py   the step's WAITING loop: the head's prefix lookup and admission
    block_pool.py  the paged KV cache: block pool, prefix cache, block tables
    counting_pool.py the same interface as block counts, where the cache cannot be observed
    block_keys.py  which content a block holds: its prefix-cache key, a request's keys as ranges
    prefix_cache.py the prefix cache's key -> first block map, in groups of 256 keys
    free_queue.py  the free-block queue (front, never-used, back), in slices
    lookup_memo.py the waiting head's lookup, kept up to date while it waits
    block_view.py  the pool sampled over a run, bounded, for the page's block view
    livelock.py    the proof that a trace never finishes (the scheduler's state repeats)
    runs.py        runs of identical steps: booked at once, the horizon where they end
    growth.py      blocks a batch allocates over its next m steps, in O(1) per m
    steady.py      steady decoders in aggregate: a step touches only what changes
    waiting.py     vLLM's waiting queue (fcfs or priority)
    outputs.py     a step's outcome (_update_after_schedule, update_from_output)
    status.py      the request statuses

Async scheduling (`async_scheduling`, vLLM's default): step k+1 is planned while step k runs, before
step k's outputs are known: a request that sampled its last token in step k still holds its slot
and blocks when step k+1 is planned (it is skipped), and is freed after; requests arriving while
step k runs are seen when step k+1 is planned only if they arrived before step k started. A step
with nothing to run is no pass: its outputs are processed at once and the next step is planned.

The usable pool is `kv_tokens` (vLLM's num_gpu_blocks - 1 blocks of `block_size`: it keeps a null
block); null = unlimited. A request needs prompt + out - 1 KV slots to finish (the last token is
never fed back): one that cannot fit the whole pool is a ScenarioError on server.kv_tokens (the
pre-flight `check`).

Exactness is checked against decisions recorded from the real vLLM 0.33.0 scheduler
(tools/vllm_oracle.py -> tests/fixtures/vllm-0.33.0.json.gz): per request the step and time of its
first and last token, its preemptions and prefix-cache hits; per step the tokens of every request
and the free blocks.

Our extension (not in V1, which only recomputes): `preemption: "swap"` moves a victim's computed
KV to host memory (`blocks x block_size x kv_bytes_per_token / pcie_gb_s` per direction, added to
the pass that moves it) and back when it is admitted again; blocks the prefix cache still holds
are not moved back.
"""

from .scheduler import VLLM, VLLM_VERSION

__all__ = ["VLLM", "VLLM_VERSION"]
