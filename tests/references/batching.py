"""Independent references for the engine: the article's closed form and its brute-force step loop.

Written from the article only (no import from py_engine): one Python loop iteration per forward
pass, one inner iteration per slot. tests/engine/test_references.py pins them to the article's own
statements; the engine tests compare the engine with them.
"""

import math
from collections import Counter


def prefill_steps_ref(prompt, chunk):
    return max(1, math.ceil(prompt / chunk))


def static_closed_form(reqs, cap, chunk):
    """The article's static makespan, verbatim (time in passes; arrive in passes)."""
    t = 0
    for g in [reqs[i:i + cap] for i in range(0, len(reqs), cap)]:
        start = max(t, max(r["arrive"] for r in g))
        max_pf = max(prefill_steps_ref(r["prompt"], chunk) for r in g)
        max_out = max(r["out"] for r in g)
        t = start + max_pf + max_out - 1
    return t


def brute_force(scheduler, arrive, prompt, out, slots, chunk, cost):
    """Pass-by-pass, slot-by-slot simulation. arrive in ticks, cost = (fixed, per_row, per_token)
    in ticks, or a function cost(tokens, rows, context, attention, prefill_tokens=) -> ticks of
    one pass (a roofline deployment's pass_ticks), given per pass: the new tokens of every row (a prefill
    chunk's, or 1), the rows, the context already in their KV caches and the attention pairs
    sum(n x (context + (n + 1) / 2)). A decoding row's context is its KV but the token it feeds; a
    held static row (finished, or an empty row after its prefill) feeds 1 token over a context
    that does not grow. Returns a dict of everything the engine reports, in ticks and 1-based
    passes."""
    n = len(arrive)
    if callable(cost):
        pass_cost = cost
    else:
        fixed, per_row, per_tok = cost
        pass_cost = None

    def tick(rows_state, ptoks, nrows):
        """One pass's ticks; rows_state: (new tokens, context, grows) per row in the batch."""
        if pass_cost is None:
            return fixed + per_row * nrows + per_tok * ptoks
        tokens = sum(x for x, _, _ in rows_state)
        ctx = sum(c for _, c, _ in rows_state)
        att = sum(x * c + x * (x + 1) // 2 for x, c, _ in rows_state)
        return pass_cost(tokens, nrows, ctx, att, prefill_tokens=ptoks)
    R = {"first_pass": [None] * n, "done_pass": [None] * n, "first_tick": [None] * n,
         "done_tick": [None] * n, "admit_pass": [None] * n}
    tally = Counter()
    gaps = Counter()
    last_token = [None] * n
    kv_peak = 0
    t = 0
    p = 0

    def emit(rid, t):
        if last_token[rid] is None:
            R["first_pass"][rid] = p
            R["first_tick"][rid] = t
        else:
            gaps[t - last_token[rid]] += 1
        last_token[rid] = t

    if scheduler == "continuous":
        table = [None] * slots       # each: [rid, prompt_left, emitted, kv]
        qi = done = 0
        while done < n:
            for s in range(slots):   # 1. ADMIT
                if table[s] is None and qi < n and arrive[qi] <= t:
                    table[s] = [qi, prompt[qi], 0, 0]
                    R["admit_pass"][qi] = p + 1
                    qi += 1
            if all(x is None for x in table):
                t = arrive[qi]       # nothing resident, nothing arrived: jump, no pass
                continue
            rows = sum(x is not None for x in table)
            ptoks = sum(min(chunk, x[1]) for x in table if x is not None and x[1] > 0)
            state = [(min(chunk, x[1]), x[3], True) if x[1] > 0 else (1, x[3] - 1, True)
                     for x in table if x is not None]
            p += 1                   # 2. STEP
            t += tick(state, ptoks, rows)
            for s in range(slots):
                x = table[s]
                if x is None:
                    tally["idle"] += 1
                    continue
                if x[1] > 0:
                    take = min(chunk, x[1])
                    x[1] -= take
                    x[3] += take
                    if x[1] > 0:
                        tally["prefill"] += 1
                        continue
                tally["useful"] += 1
                x[2] += 1
                x[3] += 1
                emit(x[0], t)
            kv_peak = max(kv_peak, sum(x[3] for x in table if x is not None))
            for s in range(slots):   # 3. RETIRE
                x = table[s]
                if x is not None and x[2] == out[x[0]]:
                    R["done_pass"][x[0]] = p
                    R["done_tick"][x[0]] = t
                    table[s] = None
                    done += 1
    elif scheduler == "static":
        for g0 in range(0, n, slots):
            g = list(range(g0, min(n, g0 + slots)))
            t = max(t, max(arrive[i] for i in g))     # the group waits to fill
            longest = max(prompt[i] for i in g)
            rows = [[i, longest, 0, 0] for i in g] + [[None, longest, 0, 0]
                                                     for _ in range(slots - len(g))]
            for i in g:
                R["admit_pass"][i] = p + 1
            while any(r[0] is not None and r[2] < out[r[0]] for r in rows):
                ptoks = sum(min(chunk, r[1]) for r in rows)
                state = [(min(chunk, r[1]), r[3], True) if r[1] > 0 else
                         (1, r[3] - 1, True) if r[0] is not None and r[2] < out[r[0]] else
                         (1, r[3], False) for r in rows]
                p += 1
                t += tick(state, ptoks, slots)
                for r in rows:
                    if r[1] > 0:
                        take = min(chunk, r[1])
                        r[1] -= take
                        r[3] += take
                        if r[1] > 0:
                            tally["prefill" if r[0] is not None else "padding"] += 1
                            continue
                        if r[0] is None:
                            tally["padding"] += 1
                            continue
                    if r[0] is not None and r[2] < out[r[0]]:
                        tally["useful"] += 1
                        r[2] += 1
                        r[3] += 1
                        emit(r[0], t)
                    else:
                        tally["padding"] += 1
                kv_peak = max(kv_peak, sum(r[3] for r in rows))
            for i in g:
                R["done_pass"][i] = p
                R["done_tick"][i] = t
    else:
        raise ValueError(scheduler)
    R.update(passes=p, makespan=max(R["done_tick"]), tally=dict(tally), gaps=gaps,
             kv_peak=kv_peak)
    return R
