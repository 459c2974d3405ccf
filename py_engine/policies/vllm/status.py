"""The request statuses the scheduler tells apart (vLLM's RequestStatus, vllm/v1/request.py)."""

WAITING, RUNNING, PREEMPTED, FINISHED = 0, 1, 2, 3
