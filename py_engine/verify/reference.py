"""The article's own algorithms, written out independently of the engine (core + policies).

Used by `check` (self-verification, natively and in the browser) and `bench` (the step loop is the
baseline the event-driven engine is timed against). One Python loop iteration per forward pass and
one `advance()` per resident per pass, exactly the article's shape; integer ticks throughout.
Only the closed form `prefill_steps` is shared with the engine (it is checked on its own against the
article's numbers).
"""

from ..model.cost import prefill_steps


def static_makespan(reqs, cap, chunk):
    """The article's closed form: static makespan in passes (arrive in passes)."""
    t = 0
    for g in [reqs[i:i + cap] for i in range(0, len(reqs), cap)]:
        start = max(t, max(r["arrive"] for r in g))
        max_pf = max(prefill_steps(r["prompt"], chunk) for r in g)
        max_out = max(r["out"] for r in g)
        t = start + max_pf + max_out - 1
    return t


class _State:
    """One resident sequence (the article's new_state)."""
    __slots__ = ("rid", "prompt_left", "out_left", "chunk", "tokens", "emitted")

    def __init__(self, rid, prompt, out, chunk):
        self.rid, self.prompt_left, self.out_left, self.chunk = rid, prompt, out, chunk
        self.emitted = 0

    def prefill_tokens(self):
        return min(self.chunk, self.prompt_left) if self.prompt_left > 0 else 0

    def advance(self):
        """One pass: a prefill chunk (the last one emits a token) or one token. True if it emitted."""
        if self.prompt_left > 0:
            self.prompt_left -= min(self.chunk, self.prompt_left)
            if self.prompt_left > 0:
                return False
        self.out_left -= 1
        self.emitted += 1
        return True

    @property
    def finished(self):
        return self.out_left == 0


def run_continuous(arrive, prompt, out, cap, chunk, cost):
    """The article's run_continuous with a clock: ADMIT, STEP, RETIRE, one pass per iteration.

    arrive in ticks; cost = (fixed, per_row, per_token) ticks. Returns per-request first/done passes
    and ticks, passes, useful slot-steps and makespan."""
    n = len(arrive)
    fixed, per_row, per_tok = cost
    slots, t, qi, done, p, useful = [None] * cap, 0, 0, 0, 0, 0
    first_pass, done_pass = [0] * n, [0] * n
    first_tick, done_tick = [0] * n, [0] * n
    while done < n:
        for s in range(cap):                         # 1. ADMIT
            if slots[s] is None and qi < n and arrive[qi] <= t:
                slots[s] = _State(qi, prompt[qi], out[qi], chunk)
                qi += 1
        live = [r for r in slots if r is not None]
        if not live:
            t = arrive[qi]                           # idle: jump to the next arrival
            continue
        t += fixed + per_row * len(live) + per_tok * sum(r.prefill_tokens() for r in live)
        p += 1
        for r in live:                               # 2. STEP
            if r.advance():
                useful += 1
                if r.emitted == 1:
                    first_pass[r.rid], first_tick[r.rid] = p, t
        for s in range(cap):                         # 3. RETIRE
            r = slots[s]
            if r is not None and r.finished:
                done_pass[r.rid], done_tick[r.rid] = p, t
                slots[s] = None
                done += 1
    return {"passes": p, "useful": useful, "makespan": t, "first_pass": first_pass,
            "done_pass": done_pass, "first_tick": first_tick, "done_tick": done_tick}


def run_static(arrive, prompt, out, cap, chunk, cost):
    """Request-level batching pass by pass: groups of `cap`, padded prompts, held slots."""
    n = len(arrive)
    fixed, per_row, per_tok = cost
    t, p, useful = 0, 0, 0
    first_pass, done_pass = [0] * n, [0] * n
    first_tick, done_tick = [0] * n, [0] * n
    for g0 in range(0, n, cap):
        ids = range(g0, min(n, g0 + cap))
        t = max(t, max(arrive[i] for i in ids))      # wait for the group to fill
        longest = max(prompt[i] for i in ids)
        rows = [_State(i, longest, out[i], chunk) for i in ids]
        pad_left = longest                           # empty rows of a short group
        while not all(r.finished for r in rows):
            ptoks = cap * min(chunk, pad_left) if pad_left > 0 else 0
            pad_left -= min(chunk, pad_left)
            t += fixed + per_row * cap + per_tok * ptoks
            p += 1
            for r in rows:
                if not r.finished and r.advance():
                    useful += 1
                    if r.emitted == 1:
                        first_pass[r.rid], first_tick[r.rid] = p, t
        for i in ids:
            done_pass[i], done_tick[i] = p, t
    return {"passes": p, "useful": useful, "makespan": t, "first_pass": first_pass,
            "done_pass": done_pass, "first_tick": first_tick, "done_tick": done_tick}


RUNNERS = {"static": run_static, "continuous": run_continuous}
