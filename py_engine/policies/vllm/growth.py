"""Blocks a batch allocates over its next m steps, in O(1) per m (the horizon searches over m).

A request with c computed tokens that takes n tokens a step holds cdiv(c, bs) blocks and needs
cdiv(c + m n, bs) after m more steps. Decoders (n = 1) are counted together by the free slots u
of their last block: one that has u takes its first new block at step u + 1 and one every bs
steps after, so m = q bs + t steps cost it q + [t > u] blocks, and N of them
N q + #(u < t): a table of bs counts answers any m.

>>> g = Growth(4, [(5, 1), (8, 1), (0, 3)])        # u = 3 and u = 0; a prefill of 3 a step
>>> [g(m) for m in range(6)] == [sum(-(-(c + m * n) // 4) + (c // -4) for c, n in
...                                  [(5, 1), (8, 1), (0, 3)]) for m in range(6)]
True
"""

from itertools import accumulate


class Growth:
    """Growth(bs, [(computed, tokens a step)]) -> a callable: m -> blocks taken in m steps."""

    def __init__(self, bs, rows=(), by_free=None, per_step=0):
        """rows: (computed, tokens a step) each; by_free[u]: further decoders whose last block
        has u free slots; per_step: further blocks every step takes (steady prefillers)."""
        self.bs, self.per_step = bs, per_step
        hist = list(by_free) if by_free is not None else [0] * bs
        self.others = []
        for c, n in rows:
            if n == 1:
                hist[-c % bs] += 1
            else:
                self.others.append((c, n))
        self.below = [0]                 # below[t] = decoders with u < t
        self.below += accumulate(hist[:-1])
        self.decoders = self.below[-1] + hist[-1]

    def __call__(self, m):
        if m <= 0:
            return 0
        bs = self.bs
        q, t = divmod(m, bs)
        total = self.decoders * q + self.below[t] + self.per_step * m
        for c, n in self.others:
            total += -(-(c + m * n) // bs) + c // -bs
        return total
