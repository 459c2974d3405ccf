"""The vllm policy: vLLM 0.33.0's V1 scheduler, decision for decision.

    scheduler.py   the scheduler's steps (vllm/v1/core/sched/scheduler.py, async_scheduler.py)
    block_pool.py  the paged KV cache: block pool, free queue, prefix cache, block tables
    block_view.py  the pool sampled over a run, bounded, for the page's block view
    livelock.py    the proof that a trace never finishes (the scheduler's state repeats)
"""

from .scheduler import VLLM, VLLM_VERSION

__all__ = ["VLLM", "VLLM_VERSION"]
