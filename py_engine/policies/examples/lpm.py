"""After SGLang's longest-prefix-match scheduling (Zheng et al., "SGLang", NeurIPS 2024;
sgl-project/sglang python/sglang/srt/managers/schedule_policy.py): free slots go to the waiting
requests that share the longest prefix with what is cached (here: the prefix streams of the
residents and of the last requests served), ties by arrival; above 128 waiting requests the
sort costs too much and it falls back to FCFS, as SGLang does."""
from collections import deque

from py_engine.policies import Policy

FCFS_ABOVE = 128
REMEMBER = 64       # recently served prefix streams that count as cached


class LPM(Policy):
    def __init__(self, sim, scenario, trace=None):
        super().__init__(sim, scenario, trace)
        self.recent = deque(maxlen=REMEMBER)

    def shared(self, r):
        t = self.trace
        if t is None or t.prefix_id is None or t.prefix_id[r] is None:
            return 0
        return t.prefix_len[r] if t.prefix_id[r] in self.cached else 0

    def schedule(self):
        sim = self.sim
        if not (sim.free and sim.waiting):
            return
        self.cached = set(self.recent)
        while sim.free and sim.waiting:
            if len(sim.waiting) > FCFS_ABOVE:
                r = sim.waiting.popleft()
            else:
                r = max(sim.waiting, key=lambda q: (self.shared(q), -sim.arrive[q], -q))
                sim.waiting.remove(r)
            sim.admit(r, self.chunk)
            if self.trace is not None and self.trace.prefix_id is not None:
                self.recent.append(self.trace.prefix_id[r])
                self.cached.add(self.trace.prefix_id[r])
