"""vLLM's waiting queue (vllm/v1/core/sched/request_queue.py): FCFS, a deque in arrival order
(a preempted request goes back to its head), or priority, a heap ordered by (priority, arrival
time, request id)."""

import heapq
from collections import deque


class WaitQueue:
    def __init__(self, fcfs, priority, arrive):
        self.fcfs, self.priority, self.arrive = fcfs, priority, arrive
        self.queue = deque() if fcfs else []

    def __len__(self):
        return len(self.queue)

    def __bool__(self):
        return bool(self.queue)

    def add(self, r):
        """A new arrival: at the back (fcfs) or by its priority."""
        if self.fcfs:
            self.queue.append(r)
        else:
            heapq.heappush(self.queue, (self.priority[r], self.arrive[r], r))

    def prepend(self, r):
        """A preempted request: at the head (fcfs) or by its priority."""
        if self.fcfs:
            self.queue.appendleft(r)
        else:
            heapq.heappush(self.queue, (self.priority[r], self.arrive[r], r))

    def peek(self):
        return self.queue[0] if self.fcfs else self.queue[0][2]

    def pop(self):
        return self.queue.popleft() if self.fcfs else heapq.heappop(self.queue)[2]

    def remove(self, r):
        if self.fcfs:
            self.queue.remove(r)
        else:
            self.queue = [e for e in self.queue if e[2] != r]
            heapq.heapify(self.queue)

    def state(self):
        """The queue's order, for the livelock digest."""
        return tuple(self.queue if self.fcfs else sorted(self.queue))
