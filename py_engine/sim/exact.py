"""Exact integer helpers of the clock: sub-ticks and the floor sums that add up a growing run.

A pass whose cost grows by a line within a run (the roofline cost, model/roofline.py) costs
K + ceil((a + b i) / SUB) ticks in its i-th pass, with a and b in sub-ticks; `floor_sum` adds a
run of those in O(log) steps, so a run of any length is priced exactly.
"""

SUB = 1000                 # sub-ticks per tick


def cdiv(a, b):
    """ceil(a / b) for integers (b > 0)."""
    return -(-a // b)


def floor_sum(n, m, a, b):
    """sum(floor((a*i + b) / m) for i in range(n)) for integers n >= 0, m >= 1, a, b >= 0, in
    O(log) steps (the Euclid-like reduction).

    >>> floor_sum(5, 3, 2, 1), sum((2 * i + 1) // 3 for i in range(5))
    (7, 7)
    """
    total = 0
    while n:
        if a >= m:
            total += (n - 1) * n // 2 * (a // m)
            a %= m
        if b >= m:
            total += n * (b // m)
            b %= m
        top = a * n + b
        if top < m:
            break
        n, b = divmod(top, m)
        m, a = a, m
    return total
