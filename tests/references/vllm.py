"""Brute-force reference of the `vllm` scheduler, written from its documented semantics (below),
independently of py_engine: one plain loop iteration per forward pass, no jumps, no shared code.

Semantics (the same documented contract the engine implements):
- A request first prefills its prompt in chunks; the pass that processes the last chunk also emits
  its first token; then it decodes one token per pass. Its KV = prompt tokens prefilled + tokens
  emitted (the newly sampled token's slot is reserved in the pass that samples it), held in
  ceil(kv / block_size) blocks out of ``kv_tokens // block_size`` (kv_tokens None = unlimited).
- Each pass, with ``budget = max_num_batched_tokens``: running requests (admission order) that are
  decoding take 1 token each, then running requests that are prefilling take
  min(chunk, left, budget).
  An item that needs more blocks than are free preempts the NEWEST running request (taking it out of
  this pass if it was already scheduled) until it fits or it is itself the victim. Then, only if no
  one was preempted in this pass, waiting requests that have arrived are admitted FCFS while a slot,
  budget and blocks remain; the first that does not fit stops admission.
- recompute: the victim's blocks are freed and its KV is lost: on re-admission it prefills its
  ``prompt + emitted`` tokens again, and that prefill's last chunk emits the next (new) token.
  swap: its blocks go to host memory (``swap_ticks_per_block`` each, added to this pass's cost) and
  come back on re-admission (same cost again, added to that pass); it resumes where it stopped.
  Either way the victim goes to the head of the waiting queue and its ``preemptions`` grows by one.
- Pass cost (ticks) = fixed + per_row × scheduled rows + per_token × prefill tokens + swap ticks.
  Requests that arrived by a pass's start are admissible; with nothing running or admissible the
  clock jumps to the next arrival.
"""


def cdiv(a, b):
    return -(-a // b)


def run_vllm_reference(items, *, slots, chunk, max_num_batched_tokens, block_size=16,
                       kv_tokens=None, preemption="recompute", cost=(0, 0, 0),
                       swap_ticks_per_block=0, max_passes=10**6):
    """items: [(arrive_tick, prompt, out)] in arrival order (ids are indices).
    Returns {"requests": [...], "passes": [...], "swapped_blocks": {"out", "in"}} with integer
    tick times and 1-based passes."""
    fixed, per_row, per_tok = cost
    n = len(items)
    total_blocks = None if kv_tokens is None else kv_tokens // block_size
    reqs = [dict(id=i, arrive=a, prompt=p, out=o, emitted=0, pf_left=p, kv=0, blocks=0,
                 swapped=False, admit=None, admit_pass=None, first_token=None, done=None,
                 first_token_pass=None, done_pass=None, preemptions=0, token_times=[],
                 lost=0, token_passes=[])
            for i, (a, p, o) in enumerate(items)]
    waiting = list(range(n))      # head first, arrival order
    running = []                  # admission order; the last is the newest
    used = 0                      # blocks in use on the GPU
    t = 0
    passes = []
    finished = 0
    swapped_blocks = {"out": 0, "in": 0}

    while finished < n:
        if len(passes) >= max_passes:
            raise RuntimeError("reference did not finish")
        if not running and reqs[waiting[0]]["arrive"] > t:
            t = reqs[waiting[0]]["arrive"]
        budget = max_num_batched_tokens
        sched = {}                # id -> tokens this pass
        swap_ticks = 0
        preempted = []

        def preempt_newest():
            nonlocal used, budget, swap_ticks
            v = running.pop()
            r = reqs[v]
            if v in sched:
                budget += sched.pop(v)
            used -= r["blocks"]
            if preemption == "swap":
                # the blocks holding its KV move (not one just allocated for this pass)
                moved = cdiv(r["kv"], block_size)
                swap_ticks += moved * swap_ticks_per_block
                swapped_blocks["out"] += moved
                r["swapped"] = True
            else:
                r["lost"] += r["kv"]
                r["kv"] = 0
                r["pf_left"] = r["prompt"] + r["emitted"]
            r["blocks"] = 0
            r["preemptions"] += 1
            preempted.append(v)
            return v

        def kv_after(r, k):
            emits = k == r["pf_left"] or r["pf_left"] == 0
            return r["kv"] + k + (1 if emits and r["pf_left"] > 0 else 0)

        decodes = [i for i in running if reqs[i]["pf_left"] == 0]
        prefills = [i for i in running if reqs[i]["pf_left"] > 0]
        for i in decodes + prefills:
            if i not in running or budget <= 0:
                continue
            r = reqs[i]
            k = 1 if r["pf_left"] == 0 else min(chunk, r["pf_left"], budget)
            while True:
                extra = cdiv(kv_after(r, k), block_size) - r["blocks"]
                if total_blocks is None or extra <= total_blocks - used:
                    break
                if preempt_newest() == i:
                    break
            if i not in running:
                continue
            used += extra
            r["blocks"] += extra
            sched[i] = k
            budget -= k

        if not preempted:
            while waiting and len(running) < slots and budget > 0:
                i = waiting[0]
                r = reqs[i]
                if r["arrive"] > t:
                    break
                k = 1 if r["pf_left"] == 0 else min(chunk, r["pf_left"], budget)
                held = cdiv(r["kv"], block_size)     # > 0 only for a swapped-out request
                want = cdiv(kv_after(r, k), block_size)
                if total_blocks is not None and want > total_blocks - used:
                    break
                waiting.pop(0)
                if r["swapped"]:
                    swap_ticks += held * swap_ticks_per_block
                    swapped_blocks["in"] += held
                    r["swapped"] = False
                used += want
                r["blocks"] = want
                running.append(i)
                if r["admit"] is None:
                    r["admit"], r["admit_pass"] = t, len(passes) + 1
                sched[i] = k
                budget -= k
        # Preempted requests go back to the head of the queue, the oldest of them first.
        for v in preempted:
            waiting.insert(0, v)

        assert sched, "a pass with nothing scheduled"
        rows = len(sched)
        decode_tokens = sum(1 for i in sched if reqs[i]["pf_left"] == 0)
        prefill_tokens = sum(sched.values()) - decode_tokens
        c = fixed + per_row * rows + per_tok * prefill_tokens + swap_ticks
        end = t + c
        emitted_now = []
        prefill_rows = 0
        for i, k in sched.items():
            r = reqs[i]
            r["kv"] = kv_after(r, k)
            if r["pf_left"] == 0 or k == r["pf_left"]:
                r["pf_left"] = 0
                r["emitted"] += 1
                r["token_times"].append(end)
                r["token_passes"].append(len(passes) + 1)
                emitted_now.append(i)
                if r["emitted"] == 1:
                    r["first_token"], r["first_token_pass"] = end, len(passes) + 1
            else:
                r["pf_left"] -= k
                prefill_rows += 1
        assert all(reqs[i]["blocks"] == cdiv(reqs[i]["kv"], block_size) for i in running)
        passes.append(dict(start=t, cost=c, rows=rows, prefill_tokens=prefill_tokens,
                           decode_tokens=decode_tokens, useful=len(emitted_now),
                           prefill_rows=prefill_rows,
                           kv_tokens=sum(reqs[i]["kv"] for i in running), kv_blocks=used,
                           swap_ticks=swap_ticks, preempted=list(preempted)))
        for i in emitted_now:
            r = reqs[i]
            if r["emitted"] == r["out"]:
                r["done"], r["done_pass"] = end, len(passes)
                running.remove(i)
                used -= r["blocks"]
                r["blocks"] = 0
                finished += 1
        t = end
    return {"requests": reqs, "passes": passes, "swapped_blocks": swapped_blocks}
