"""A brute-force model of vLLM 0.33.0's V1 scheduler, written independently of py_engine.

It follows the real system's own shape, not the engine's: request objects holding their token ids,
block hashes chained over the token ids (as vLLM's sha256 chain, with Python's tuple hash), a
literal doubly linked free-block queue with vLLM's eviction order, and the engine loop of
tools/vllm_oracle.py (sync: schedule, run, update; async: a batch queue of two, so step k+1 is
scheduled before step k's outputs are processed). One Python iteration per scheduler step, empty
steps included; no jumps, no closed forms. The recorded decisions of the real scheduler
(tests/fixtures/vllm-0.33.0.json.gz) check this model; this model then checks the engine on
random traces the fixture does not have.

Token ids: request i's prompt is the first prefix_len tokens of its prefix id's stream, then
tokens of its own; a request whose whole prompt is stream continues the stream with its outputs,
any other samples token 7 (the oracle's fake model runner).

Times are integer ticks: cost = fixed + per_row * rows + per_token * prefill tokens (prefill
tokens: tokens of requests that are not decoding; a request decodes from the step after its
(re)prefill finished until it is preempted).
"""

from collections import deque

WAITING, RUNNING, PREEMPTED, DONE = "waiting", "running", "preempted", "done"


def stream_token(pid, j):
    return 500_000 + 104_729 * pid + j


class Request:
    def __init__(self, i, arrive, prompt, out, pid, plen, prio, bs):
        self.id, self.arrive, self.prompt, self.max_tokens, self.prio = i, arrive, prompt, out, prio
        self.pid, self.follows = pid, pid is not None and plen == prompt
        self.tokens = ([stream_token(pid, j) for j in range(plen)] if pid is not None else [])
        self.tokens += [1000 + 7919 * i + j for j in range(len(self.tokens), prompt)]
        self.bs = bs
        self.hashes = []
        self.computed = self.placeholders = self.in_flight = self.stale = 0
        self.status, self.preemptions, self.prefill_chunk = WAITING, 0, True
        self.rehash()

    def rehash(self):
        while (len(self.hashes) + 1) * self.bs <= len(self.tokens):
            b = len(self.hashes)
            parent = self.hashes[-1] if self.hashes else None
            self.hashes.append(hash((parent, tuple(self.tokens[b * self.bs:(b + 1) * self.bs]))))

    @property
    def num_tokens(self):
        return len(self.tokens)

    def next_output(self):
        return stream_token(self.pid, len(self.tokens)) if self.follows else 7

    def outputs(self):
        return len(self.tokens) - self.prompt


class Block:
    __slots__ = ("id", "ref", "hash", "prev", "next")

    def __init__(self, i):
        self.id, self.ref, self.hash, self.prev, self.next = i, 0, None, None, None


class FreeQueue:
    def __init__(self, blocks):
        self.head, self.tail = Block(-1), Block(-2)
        self.head.next, self.tail.prev = self.tail, self.head
        self.n = 0
        self.append(blocks)

    def _link(self, after, blocks):
        nxt = after.next
        for b in blocks:
            after.next, b.prev = b, after
            after = b
        after.next, nxt.prev = nxt, after
        self.n += len(blocks)

    def append(self, blocks):
        self._link(self.tail.prev, blocks)

    def prepend(self, blocks):
        self._link(self.head, blocks)

    def remove(self, b):
        b.prev.next, b.next.prev = b.next, b.prev
        b.prev = b.next = None
        self.n -= 1

    def popleft(self, n):
        out = []
        for _ in range(n):
            b = self.head.next
            self.remove(b)
            out.append(b)
        return out


class KVCache:
    def __init__(self, num_blocks, bs, caching):
        self.bs, self.caching = bs, caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free = FreeQueue(self.blocks[1:])        # block 0 is vLLM's null block
        self.map = {}                                 # hash -> {block id: block}
        self.req_blocks, self.n_cached = {}, {}

    def hit(self, req):
        if not self.caching:
            return []
        out = []
        for h in req.hashes[:(req.num_tokens - 1) // self.bs]:
            d = self.map.get(h)
            if not d:
                break
            out.append(next(iter(d.values())))
        return out

    def to_allocate(self, req, num_tokens, hits):
        need = -(-num_tokens // self.bs)
        have = len(self.req_blocks.get(req.id, ()))
        if req.id in self.req_blocks:
            return max(need - have, 0)
        return max(need - len(hits), 0) + sum(1 for b in hits if b.ref == 0)

    def allocate(self, req, num_new, hits=(), full_fit=False):
        """allocate_slots: new blocks for computed + new tokens, or None (nothing changes)."""
        computed = req.computed + len(hits) * self.bs
        if full_fit and self.to_allocate(req, req.num_tokens, hits) > self.free.n:
            return None
        if self.to_allocate(req, computed + num_new, hits) > self.free.n:
            return None
        table = self.req_blocks.setdefault(req.id, [])
        if hits:
            for b in hits:
                if b.ref == 0:
                    self.free.remove(b)
                b.ref += 1
            table.extend(hits)
            self.n_cached[req.id] = len(table)
        need = -(-(computed + num_new) // self.bs) - len(table)
        if need > 0:
            new = self.free.popleft(need)
            for b in new:
                if b.hash is not None:                 # evict from the prefix cache
                    d = self.map[b.hash]
                    del d[b.id]
                    if not d:
                        del self.map[b.hash]
                    b.hash = None
                b.ref = 1
            table.extend(new)
        self.cache(req, min(computed + num_new, req.num_tokens))
        return True

    def cache(self, req, num_tokens):
        if not self.caching:
            return
        start = self.n_cached.get(req.id, 0)
        full = min(num_tokens // self.bs, len(req.hashes))
        if start >= full:
            return
        table = self.req_blocks[req.id]
        for b in range(start, full):
            blk, h = table[b], req.hashes[b]
            d = self.map.setdefault(h, {})
            if blk.id not in d:
                d[blk.id] = blk
            blk.hash = h
        self.n_cached[req.id] = full

    def release(self, req):
        table = self.req_blocks.pop(req.id, [])
        self.n_cached.pop(req.id, None)
        first, last = [], []
        for b in reversed(table):
            b.ref -= 1
            if b.ref == 0:
                (first if b.hash is None or not self.caching else last).append(b)
        self.free.prepend(first)
        self.free.append(last)


class Scheduler:
    def __init__(self, reqs, cfg, num_blocks):
        self.cfg = cfg
        self.kv = KVCache(num_blocks, cfg["block_size"], cfg["enable_prefix_caching"])
        self.running, self.waiting = [], []
        self.fcfs = cfg["policy"] == "fcfs"
        self.finished_ids = set()

    def add(self, req):
        self.waiting.append(req)
        self._sort()

    def _sort(self):
        if not self.fcfs:   # a heap in vLLM; the order it pops in is this one
            self.waiting.sort(key=lambda r: (r.prio, r.arrive, r.id))

    def has_requests(self):
        return bool(self.running or self.waiting or self.finished_ids)

    def preempt(self, victim):
        self.kv.release(victim)
        victim.status = PREEMPTED
        victim.computed = victim.placeholders = 0
        victim.stale = victim.in_flight
        victim.preemptions += 1
        self.waiting.insert(0, victim)
        self._sort()

    def schedule(self):
        cfg, kv = self.cfg, self.kv
        budget = cfg["budget"]
        thr = cfg["chunk"] if len(self.running) + len(self.waiting) > 1 else 0
        sched, preempted, cached = {}, [], {}
        i = 0
        while i < len(self.running) and budget > 0:
            req = self.running[i]
            if (req.placeholders > 0 and req.computed + 2 - req.placeholders
                    >= req.prompt + req.max_tokens):
                i += 1
                continue
            n = min(req.num_tokens + req.placeholders - req.computed, budget)
            if 0 < thr < n:
                n = thr
            while kv.allocate(req, n) is None:
                if self.fcfs:
                    victim = self.running.pop()
                else:
                    victim = max(self.running, key=lambda r: (r.prio, r.arrive))
                    j = self.running.index(victim)
                    self.running.pop(j)
                    if j < i:
                        i -= 1
                    if victim.id in sched:
                        budget += sched.pop(victim.id)
                self.preempt(victim)
                preempted.append(victim.id)
                if victim is req:
                    break
            if req.status == PREEMPTED:
                if not self.fcfs:
                    continue
                break
            sched[req.id] = n
            budget -= n
            i += 1
        if not preempted:
            while budget > 0 and self.waiting and len(self.running) < cfg["slots"]:
                req = self.waiting[0]
                hits = kv.hit(req)
                n = req.num_tokens - len(hits) * kv.bs
                if 0 < thr < n:
                    n = thr
                n = min(n, budget)
                if kv.allocate(req, n, hits, cfg["scheduler_reserve_full_isl"]) is None:
                    break
                self.waiting.pop(0)
                req.status, req.computed = RUNNING, len(hits) * kv.bs
                self.running.append(req)
                sched[req.id] = n
                cached[req.id] = req.computed
                budget -= n
        by_id = {r.id: r for r in self.running}
        for rid, n in sched.items():
            req = by_id[rid]
            req.computed += n
            req.in_flight += n
            req.prefill_chunk = req.computed < req.num_tokens + req.placeholders
            if cfg["async_scheduling"] and not req.prefill_chunk:
                req.placeholders += 1
        self.finished_ids = set()
        return sched, preempted, cached, {r: not by_id[r].prefill_chunk for r in sched}

    def update(self, sched, samples, reqs):
        stopped = []
        for rid, n in sched.items():
            req = reqs[rid]
            req.in_flight -= n
            stale = req.stale > 0
            if stale:
                req.stale -= n
            if req.status == DONE or not samples[rid]:
                continue
            had = req.placeholders > 0
            req.tokens.append(req.next_output())
            req.rehash()
            if not stale and had:
                req.placeholders -= 1
            if not stale and req.status == RUNNING and had:
                self.kv.cache(req, req.computed - req.in_flight)
            if req.outputs() == req.max_tokens:
                if req.status == RUNNING:
                    stopped.append(req)
                else:
                    self.waiting.remove(req)
                req.status = DONE
                self.kv.release(req)
                self.finished_ids.add(rid)
                yield rid
        self.running = [r for r in self.running if r not in stopped]


def run(cfg, cost, max_steps=20_000):
    """cfg: a fixture case's config, arrive in ticks. cost: (fixed, per_row, per_token) ticks.
    -> {"finished", "requests": [{first_step, first, done_step, done, preemptions}],
        "steps": [{tokens, preempted, cached, free_blocks, start, end}]}"""
    items, bs = cfg["items"], cfg["block_size"]
    if cfg["kv_tokens"] is None:
        num_blocks = sum(-(-(p + o) // bs) for _, p, o, *_ in items) + 8
    else:
        num_blocks = cfg["kv_tokens"] // bs + 1
    reqs = [Request(i, a, p, o, pid, plen, prio, bs)
            for i, (a, p, o, pid, plen, prio) in enumerate(items)]
    s = Scheduler(reqs, cfg, num_blocks)
    fixed, per_row, per_tok = cost
    n = len(reqs)
    res = [{"first_step": None, "first": None, "done_step": None, "done": None}
           for _ in range(n)]
    steps, inflight, decoding = [], deque(), set()
    depth = 2 if cfg["async_scheduling"] else 1
    nxt = clock = gpu_free = finished = step = 0
    while finished < n:
        if step > max_steps:
            return {"finished": False, "requests": res, "steps": steps}
        while nxt < n and reqs[nxt].arrive <= clock:
            s.add(reqs[nxt])
            nxt += 1
        if s.has_requests():
            sched, preempted, cached, samples = s.schedule()
            step += 1
            decoding.difference_update(preempted)
            prefill = sum(k for r, k in sched.items() if r not in decoding)
            decoding.update(r for r in sched if samples[r])
            start = max(gpu_free, clock)
            end = start + (fixed + per_row * len(sched) + per_tok * prefill if sched else 0)
            gpu_free = end
            steps.append({"tokens": dict(sched), "preempted": sorted(preempted),
                          "cached": cached, "free_blocks": s.kv.free.n, "start": start,
                          "end": end})
            inflight.appendleft((sched, samples, end, step))
            if len(inflight) < depth and (sched or s.has_requests()):
                continue
        elif not inflight:
            clock = max(clock, reqs[nxt].arrive)
            continue
        sched, samples, end, at = inflight.pop()
        clock = max(clock, end)
        for rid, k in sched.items():
            if samples[rid] and res[rid]["first_step"] is None and reqs[rid].status != DONE:
                res[rid]["first_step"], res[rid]["first"] = at, end
        for rid in s.update(sched, samples, reqs):
            res[rid]["done_step"], res[rid]["done"] = at, end
            finished += 1
    for r, q in zip(res, reqs):
        r["preemptions"] = q.preemptions
    return {"finished": True, "requests": res, "steps": steps}
