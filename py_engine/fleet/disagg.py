"""Prefill/decode disaggregation (SPEC §9): a prefill pool and a decode pool of replicas, each
replica a whole server (fleet/run.py Replica) with its pool's server, and a KV link from each
prefill replica.

A request's path, as vLLM's disaggregated serving (its P/D proxy with a KV connector) and llm-d's
P/D run it:
    arrive           the router picks its decode replica, then its prefill replica
    prefill replica  computes the prompt and samples one token (max_tokens 1), which is dropped
    link             the prompt's KV (the deployment's bytes per token x the prompt) crosses the
                     prefill replica's link: transfers queue on it, each taking bytes / bandwidth
                     + latency
    decode replica   the request arrives with its KV, waits until its scheduler admits it (slots,
                     blocks), computes the last prompt token again (vLLM recomputes it for its
                     logits: the connector loads all but the last) and samples the first token the
                     user sees, then the rest
So TTFT runs from the arrival to the decode replica's first token, in five parts (`ttft_parts`):
prefill_queue, prefill, transfer (the link's queue included), decode_queue, first_decode; in
integer ticks they add up to the TTFT exactly.

Time is one clock. The loop routes user arrivals in order; before each, every prefill replica is
advanced to it, each prefill that finished before it books its transfer, and every transfer that
ends before it is delivered to its decode replica in time order (a transfer that ends later
waits: it cannot be overtaken, since a prefill not yet finished ends after the arrival).
"""

import heapq
import math

from ..model.cost import Cost
from ..policies import policy_class
from ..scenario.normalize import pool_server
from ..scenario.prepared import prepare
from ..sim.progress import Progress
from ..sim.work import Probes
from ..workload.blocks import chains
from .routers import make_router
from .run import CHECK_EVERY, Fleet, Replica, Slices, hide_block_views, sliced, watch_all


def pool_scenario(scenario, pool):
    """The prepared scenario a pool's replicas run: the fleet's with the pool's server."""
    doc = dict(scenario.doc)
    doc["server"] = pool_server(scenario.doc, pool)
    return prepare(doc)


def kv_bytes_per_token(scenario):
    """What one token's KV weighs on the link: the deployment's (roofline), else the server's
    kv_bytes_per_token."""
    dep = scenario.deployment
    return getattr(dep, "kv_bytes", None) or scenario["server"]["kv_bytes_per_token"]


class Disagg:
    """The two pools, the links, and each request's way through them."""

    def __init__(self, scenario, trace, seg_cap, log_cap):
        self.scenario, self.trace = scenario, trace
        cl = scenario["cluster"]
        self.chain = chain = chains(trace)
        self.pools = {}
        for pool in ("prefill", "decode"):
            sc = pool_scenario(scenario, pool)
            cls = policy_class(sc)
            cls.check(sc, trace)
            f = Fleet(sc, trace, chain)
            f.replicas = [Replica(i, sc, trace, chain, Cost.from_scenario(sc), seg_cap, log_cap,
                                  remote=pool == "decode", policy=cls)
                          for i in range(cl[pool]["replicas"])]
            f.router = make_router(sc, f)
            self.pools[pool] = f
        hide_block_views([rep for f in self.pools.values() for rep in f.replicas])
        pre = self.pools["prefill"].scenario
        tr = cl["transfer"]
        # ticks on the link: bytes / (GB/s) = ns = ticks (1 tick = 1 ns of the ms unit)
        self.per_token = kv_bytes_per_token(pre) / tr["gb_s"]
        self.latency = round(tr["latency_ms"] * 1_000_000)
        n = len(trace[0])
        self.link_free = [0] * len(self.pools["prefill"].replicas)
        self.pending = [dict() for _ in self.pools["prefill"].replicas]   # local -> fleet id
        self.booked = [0] * len(self.pools["prefill"].replicas)   # their prefills ended, booked
        self.transfers = []            # heap of (end tick, fleet id)
        self.decode_of = [0] * n       # decode replica, chosen at the arrival
        self.decode_local = [0] * n
        self.link_start = [0] * n
        self.link_end = [0] * n

    def _book_transfers(self):
        """Every prefill finished so far books its transfer on its replica's link (FIFO in the
        order they finished, ties by local id)."""
        prompt = self.trace[1]
        for i, rep in enumerate(self.pools["prefill"].replicas):
            pend = self.pending[i]
            # no prefill ended there since the last booking: nothing to look for (a burst keeps
            # thousands pending, and this runs at every arrival)
            if not pend or rep.sim.n_done == self.booked[i]:
                continue
            self.booked[i] = rep.sim.n_done
            done = rep.sim.done_tick
            ended = sorted((done[loc], loc) for loc in pend if done[loc] >= 0)
            for tf, loc in ended:
                g = pend.pop(loc)
                start = max(tf, self.link_free[i])
                end = start + math.ceil(prompt[g] * self.per_token) + self.latency
                self.link_free[i] = end
                self.link_start[g], self.link_end[g] = start, end
                heapq.heappush(self.transfers, (end, g))

    def _deliver(self, g, e):
        """The KV of g is on its decode replica at e (every decode replica has run to e)."""
        dec = self.pools["decode"]
        k = self.decode_of[g]
        rep = dec.replicas[k]
        rep.coming -= 1
        self.decode_local[g] = rep.sim.n
        p = self.trace[1][g]
        rep.send(g, e, p, self.trace[2][g], self.trace, self.chain, remote=p - 1)
        dec.router.sent(g, e, k)

    def drain(self, t):
        """Everything that happens before t (None: to the end). A replica's check may stop it
        between two steps (fleet/run.py SliceDue): called again, it goes on from there."""
        pre, dec = self.pools["prefill"], self.pools["decode"]
        while True:
            for rep in pre.replicas:
                rep.advance(t) if t is not None else rep.finish()
            self._book_transfers()
            if self.transfers and (t is None or self.transfers[0][0] < t):
                e, g = self.transfers[0]
                for rep in dec.replicas:      # before the transfer leaves the heap
                    rep.advance(e)
                heapq.heappop(self.transfers)
                self._deliver(g, e)
            else:
                return

    def arrive(self, g, t):
        """Request g arrives at t: routed once everything before t has happened (a slice may end
        before the routing: called again, it goes on)."""
        pre, dec = self.pools["prefill"], self.pools["decode"]
        self.drain(t)
        for rep in dec.replicas:
            rep.advance(t)
        self.decode_of[g] = k = dec.route(g, t)
        dec.replicas[k].coming += 1       # the router counts it from now (Replica.outstanding)
        p = pre.route(g, t)
        rep = pre.replicas[p]
        self.pending[p][rep.sim.n] = g
        rep.send(g, t, self.trace[1][g], 1, self.trace, self.chain)
        pre.router.sent(g, t, p)

    def progress(self):
        """Requests finished (their last token, in the decode pool), of the trace's."""
        done = sum(r.sim.n_done for r in self.pools["decode"].replicas)
        return Progress(done, len(self.trace[0]))

    def work_done(self):
        """(both pools' work so far, requests finished: the decode pool's), as run.Fleet's."""
        return (sum(f.work_done()[0] for f in self.pools.values()),
                self.pools["decode"].work_done()[1])

    def check_work(self, probes):
        """Both pools' work against one cap (run.Fleet.check_work)."""
        probes.check(*self.work_done(), len(self.trace[0]))


def run_disagg_steps(scenario, trace, slice_s=None, work_cap=None, seg_cap=None,
                     log_cap=None):
    """Scenario (prepared, disaggregated) + trace -> Disagg (finished), in slices (as
    fleet/run.py run_fleet_steps)."""
    d = Disagg(scenario, trace, seg_cap, log_cap)
    probes = Probes(work_cap)
    slices = Slices(slice_s)
    watch_all([rep for f in d.pools.values() for rep in f.replicas], d, probes, slices)
    for g, t in enumerate(trace[0]):
        yield from sliced(d, slices, d.arrive, g, t)
        if g % CHECK_EVERY == CHECK_EVERY - 1:
            d.check_work(probes)
            if slices.due():
                yield d.progress()
                slices.next()
    yield from sliced(d, slices, d.drain, None)
    for rep in d.pools["decode"].replicas:
        yield from sliced(d, slices, rep.finish)
    d.check_work(probes)
    yield d.progress()
    return d
