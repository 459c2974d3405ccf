"""A finished fleet as a run the result builders read (analysis/results.py), plus what only a
fleet has: each replica's metrics and passes log, and the router's counters.

`FleetRun` looks like api.Run: `.sim` is the replicas merged into one view in the fleet's request
order (every request's records from the replica that served it, `replica` beside them), `.policy`
merges the replicas' own counters, `.scenario` is the scenario. So `metrics` are the fleet's,
under the single server's keys and definitions, summed where a single server has one number:
    passes, slot steps, shares, utilization   over every replica's passes
    kv_peak_tokens, peak_running, kv_pool_tokens   the replicas' own added (peaks at any time)
    prefix_hit_rate                           the replicas' hits over their lookups
With one replica the merged view is that replica, so a one-replica fleet gives the single
server's document number for number (tests/engine/test_fleet.py).
"""

import math

from ..analysis.metrics import gpus, percentiles
from ..analysis.results import passes_log_columns, run_metrics
from ..model.cost import TICKS
from ..sim import records
from ..workload.blocks import block_reuse
from .run import MAX_SCORES

REPLICA_METRICS = ("passes", "utilization", "output_tokens", "throughput_tok_s",
                   "prompt_throughput_tok_s", "served_rps",
                   "ttft", "tpot", "e2e", "goodput_rps", "slo_attainment", "preemptions",
                   "kv_peak_tokens", "kv_pool_tokens", "prefix_hit_rate", "peak_running",
                   "makespan")


class _Log:
    """The recorder of a merged view: replica 0's when it is the only one, else nothing drawn
    (each replica's passes log is in `replicas`) and every TBT gap of the fleet."""

    def __init__(self, recs, single):
        first = recs[0]
        self.segments = first.segments if single else []
        self.seg_truncated = first.seg_truncated if single else False
        self.log_truncated = first.log_truncated if single else False
        self.runs = first.runs if single else []
        self.log = first.log if single else _empty_log()
        weights = {}
        for r in recs:
            for v, c in r.gap_weights.items():
                weights[v] = weights.get(v, 0) + c
        self.gap_weights = weights
        self.gap_lines = [line for r in recs for line in r.gap_lines]
        self.gap_lines_sum = sum(r.gap_lines_sum for r in recs)


def _empty_log():
    return {k: [] for k in records.names(records.PASSES_LOG)}


class Merged:
    """The replicas' cores as one, in fleet request order (see the module docstring)."""

    PER_REQUEST = ("arrive", "prompt", "out", "admit_tick", "admit_pass", "first_tick",
                   "first_pass", "done_tick", "done_pass", "last_tick", "emitted",
                   "preemptions", "cached_tokens")

    def __init__(self, fleet):
        sims = [r.sim for r in fleet.replicas]
        single = len(sims) == 1
        self.n = n = len(fleet.trace[0])
        rep_of, loc_of = fleet.replica_of, fleet.local_of
        for name in self.PER_REQUEST:
            if single:
                setattr(self, name, getattr(sims[0], name))
                continue
            cols = [getattr(s, name) for s in sims]
            setattr(self, name, [cols[rep_of[g]][loc_of[g]] for g in range(n)])
        self.replica = rep_of
        # every replica has the same slots: slots x the passes of all is the fleet's slot steps
        self.slots = sims[0].slots
        self.passes = sum(s.passes for s in sims)
        for name in ("t_rows", "t_useful", "t_prefill", "t_pad", "kv_peak", "peak_in_slot"):
            setattr(self, name, sum(getattr(s, name) for s in sims))
        self.rec = _Log([s.rec for s in sims], single)


class _Counters:
    """The replicas' policies as one: their counters added, their block view if only one."""

    def __init__(self, replicas, passes=None):
        """replicas: every replica of the fleet; passes: the fleet's passes when the merged
        view counts slot steps instead (pools of different slots)."""
        self.policies = [r.policy for r in replicas]
        self.pools = [r.kv_pool for r in replicas]
        self.gpus = sum(gpus(r.policy.scenario) for r in replicas)
        self.passes = passes

    def extra_metrics(self):
        parts = [p.extra_metrics() for p in self.policies]
        if len(parts) == 1:
            return parts[0]
        out = {}
        for part in parts:
            for k, v in part.items():
                if isinstance(v, dict):
                    d = out.setdefault(k, {})
                    for kk, vv in v.items():
                        if isinstance(vv, (int, float)) and not isinstance(vv, bool):
                            d[kk] = d.get(kk, 0) + vv
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    before = out.get(k)     # (None: a replica sent nothing had no rate)
                    out[k] = v if before is None else before + v
                else:
                    out.setdefault(k, v)
        pc = out.get("prefix_cache")
        if pc is not None:
            pc["hit_rate"] = pc["hits"] / pc["queries"] if pc.get("queries") else None
            out["prefix_hit_rate"] = pc["hit_rate"]
        out["kv_pool_tokens"] = None if any(p is None for p in self.pools) else sum(self.pools)
        out["gpus"] = self.gpus
        if self.passes is not None:
            out["passes"] = self.passes
        return out

    def block_view(self):
        return self.policies[0].block_view() if len(self.policies) == 1 else None


class FleetRun:
    """api.Run's shape for a fleet (the result builders read .sim, .policy, .scenario), and the
    fleet's own part of the document (extra_doc)."""

    def __init__(self, fleet):
        self.fleet = fleet
        self.scenario = fleet.scenario
        self.sim = Merged(fleet)
        self.policy = _Counters(fleet.replicas)

    def extra_doc(self, keep=None):
        """`replicas` (each one's requests, metrics and passes log) and `router` (decisions by
        reason, prefix tokens forgone, the load imbalance: the most requests a replica was sent
        over the mean, and the scores and reason of the first requests). keep: as
        results.result_meta's, for each replica's metrics."""
        f = self.fleet
        return {"replicas": replica_entries(f.replicas, keep=keep), "router": router_doc(f)}


def replica_entries(replicas, pool=None, keep=None, first=0):
    """Each replica's requests, metrics (REPLICA_METRICS; None without requests) and passes
    log; `pool` names a disaggregated fleet's pool. keep: a list to add (("replicas", i,
    "metrics"), its SLO columns) to, i counted from `first` (results.result_meta)."""
    out = []
    for rep in replicas:
        entry = {"replica": rep.index, "requests": rep.sim.n}
        if pool is not None:
            entry["pool"] = pool
        if rep.sim.n:
            cols = None if keep is None else {}
            m = run_metrics(_One(rep), itl=False, keep=cols)     # REPLICA_METRICS has no ITL
            entry["metrics"] = {k: m[k] for k in REPLICA_METRICS}
            if keep is not None:
                keep.append((("replicas", first + len(out), "metrics"), cols))
        else:
            entry["metrics"] = None
        entry["passes_log"] = passes_log_columns(rep.sim.rec)
        out.append(entry)
    return out


def router_doc(f):
    """A router's counters over its fleet (or pool); the load imbalance is the most requests a
    replica was sent over the mean."""
    sent = [rep.sim.n for rep in f.replicas]
    return {
        "kind": f.scenario["cluster"]["router"]["kind"],
        "decisions": dict(sorted(f.reasons.items())),
        "prefix_tokens_held": f.hit_at_route,
        "prefix_tokens_forgone": f.forgone,
        # a cache-only replay of the trace's hash ids, no eviction: one cache for the fleet,
        # and one per replica as this router sent them (workload/blocks.py)
        "block_reuse_one_cache": block_reuse(f.chain),
        "block_reuse_routed": block_reuse(f.chain, f.replica_of),
        "load_imbalance": max(sent) * len(sent) / sum(sent) if sum(sent) else None,
        "scores": [[g, s] for g, s in f.scores],
        "reasons": f.reason[:MAX_SCORES]}


class _One:
    """One replica as an api.Run (run_metrics reads .sim, .policy, .scenario)."""

    def __init__(self, rep):
        self.sim, self.policy, self.scenario = rep.sim, rep.policy, rep.policy.scenario


TTFT_PARTS = ("prefill_queue", "prefill", "transfer", "decode_queue", "first_decode")


def summing_to_ttft(ticks):
    """A request's TTFT parts (ticks, adding up to its TTFT) in the cost unit, so that added up
    in order, as floats, they give its `ttft` exactly (SPEC 9: each t / TICKS alone missed it by
    an ulp for a quarter of the requests). One part that is not 0 takes the rounding (the last
    one first; where rounding ties skip the TTFT there, an earlier one): an ulp or two of the
    TTFT, never below 0."""
    parts = [t / TICKS for t in ticks]
    target = sum(ticks) / TICKS
    if sum(parts) == target:
        return parts
    for j in sorted((i for i, t in enumerate(ticks) if t), reverse=True):
        kept = parts[j]
        x = kept + (target - sum(parts))        # the shortfall, then an ulp at a time
        for _ in range(8):
            if x < 0:
                break
            parts[j] = x
            total = sum(parts)
            if total == target:
                return parts
            x = math.nextafter(x, math.inf if total < target else -math.inf)
        parts[j] = kept
    return parts


class _Pooled:
    """A disaggregated fleet's requests as one core's records (fleet/disagg.py): what the user
    sees comes from the decode replica (first token on), the admission and the prefix hits from
    the prefill replica, the arrival from the trace; slot steps over every replica of both
    pools (slots 1, passes = slots x passes summed: the pools' slots may differ)."""

    def __init__(self, d):
        pre, dec = d.pools["prefill"], d.pools["decode"]
        psims = [r.sim for r in pre.replicas]
        dsims = [r.sim for r in dec.replicas]
        n = self.n = len(d.trace[0])
        self.arrive, self.prompt, self.out = d.trace[0], d.trace[1], d.trace[2]
        p_of, p_loc = pre.replica_of, pre.local_of
        d_of, d_loc = d.decode_of, d.decode_local

        def pcol(name):
            cols = [getattr(s, name) for s in psims]
            return [cols[p_of[g]][p_loc[g]] for g in range(n)]

        def dcol(name):
            cols = [getattr(s, name) for s in dsims]
            return [cols[d_of[g]][d_loc[g]] for g in range(n)]
        self.admit_tick, self.admit_pass = pcol("admit_tick"), pcol("admit_pass")
        self.cached_tokens = pcol("cached_tokens")
        for name in ("first_tick", "first_pass", "done_tick", "done_pass", "last_tick",
                     "emitted"):
            setattr(self, name, dcol(name))
        self.preemptions = [a + b for a, b in zip(pcol("preemptions"), dcol("preemptions"))]
        self.replica = list(d_of)
        self.prefill_replica = list(p_of)
        self.p_first = pcol("first_tick")
        self.d_admit = dcol("admit_tick")
        sims = psims + dsims
        self.slots = 1
        self.passes = sum(s.slots * s.passes for s in sims)
        for name in ("t_rows", "t_useful", "t_prefill", "t_pad", "kv_peak", "peak_in_slot"):
            setattr(self, name, sum(getattr(s, name) for s in sims))
        self.rec = _Log([s.rec for s in sims], False)


class _PooledCounters(_Counters):
    """A disaggregated fleet's counters, and each TTFT part's percentiles and mean over every
    request (metrics.ttft_parts.<part>: the same nearest-rank rule as metrics.ttft)."""

    def __init__(self, replicas, passes, parts):
        super().__init__(replicas, passes)
        self.parts = parts

    def extra_metrics(self):
        out = super().extra_metrics()
        parts = self.parts()
        out["ttft_parts"] = {k: percentiles([p[i] for p in parts])
                             for i, k in enumerate(TTFT_PARTS)}
        return out


class DisaggRun:
    """api.Run's shape for a disaggregated fleet (see FleetRun)."""

    def __init__(self, d):
        self.d = d
        self.scenario = d.scenario
        self.sim = _Pooled(d)
        self._parts = None
        reps = d.pools["prefill"].replicas + d.pools["decode"].replicas
        self.policy = _PooledCounters(reps, sum(r.sim.passes for r in reps), self.ttft_parts)

    def ttft_parts(self):
        """Per request the five parts of its TTFT, in ticks (they add up to it exactly)."""
        if self._parts is None:
            s, d = self.sim, self.d
            self._parts = [(s.admit_tick[g] - s.arrive[g], s.p_first[g] - s.admit_tick[g],
                            d.link_end[g] - s.p_first[g], s.d_admit[g] - d.link_end[g],
                            s.first_tick[g] - s.d_admit[g]) for g in range(s.n)]
        return self._parts

    def request_extras(self, n):
        """Beside each of the first n requests' records: its prefill replica and TTFT parts (in
        the cost unit)."""
        parts = self.ttft_parts()[:n]
        return {"prefill_replica": self.sim.prefill_replica[:n],
                "ttft_parts": [dict(zip(TTFT_PARTS, summing_to_ttft(p))) for p in parts]}

    def extra_doc(self, keep=None):
        d = self.d
        pre, dec = d.pools["prefill"], d.pools["decode"]
        return {"replicas": replica_entries(pre.replicas, "prefill", keep)
                + replica_entries(dec.replicas, "decode", keep, len(pre.replicas)),
                "router": dict(router_doc(dec), prefill=router_doc(pre)),
                "transfer": {"bytes_per_token": d.per_token * d.scenario["cluster"]["transfer"][
                    "gb_s"], "gb_s": d.scenario["cluster"]["transfer"]["gb_s"]}}
