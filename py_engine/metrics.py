"""Metrics of a finished simulation, exact in integer ticks until the last step.

Definitions:
- utilization = useful / (slots * passes); shares useful / prefill / padding / idle of all
  slots * passes slot-steps (idle = slots * passes - occupied rows); they sum to 1.
- Percentiles p50/p95/p99 use the nearest-rank method: the value at rank ceil(p/100 * N) of the
  sorted samples (an actual sample, computed in integer ticks, then converted to the cost unit).
- ttft = first_token - arrive; e2e = done - arrive (done = when the slot is freed; static: the
  group's end); tpot = (done - first_token) / (out - 1), 0 when out = 1.
- tbt: time between consecutive tokens of the same request, pooled over all token gaps of all
  requests (a request with out tokens contributes out - 1 gaps). In a run of passes every decoding
  resident's gap is that pass's cost; the first token after a preemption gaps from the last one.
  null when no request has 2+ tokens.
- SLO: a request meets the SLO when ttft <= slo.ttft_ms and tpot <= slo.tbt_ms (values in the cost
  unit: passes under the unit cost). slo_attainment = share of requests meeting it; goodput_rps =
  requests meeting it per second of makespan; throughput_tok_s = output tokens per second of
  makespan. Under the unit cost one pass counts as 1 ms for these per-second rates.
- makespan = time the last request's slot is freed, from t = 0.
"""

import numpy as np

from .cost import TICKS, to_ticks

PCTS = (50, 95, 99)


def nearest_rank(sorted_vals, p):
    """Nearest-rank percentile of an ascending sequence (p integer in 1..100)."""
    n = len(sorted_vals)
    return sorted_vals[max(1, (p * n + 99) // 100) - 1]


def _pcts(ticks):
    """ticks: int64 numpy array -> {"p50", "p95", "p99"} in the cost unit (None if empty)."""
    if len(ticks) == 0:
        return {"p%d" % p: None for p in PCTS}
    s = np.sort(ticks)
    return {"p%d" % p: int(nearest_rank(s, p)) / TICKS for p in PCTS}


def _weighted_pcts(weights):
    """weights: {value_ticks: count} -> nearest-rank percentiles of the pooled samples."""
    total = sum(weights.values())
    if total == 0:
        return {"p%d" % p: None for p in PCTS}
    vals = sorted(weights)
    out = {}
    for p in PCTS:
        rank = max(1, (p * total + 99) // 100)
        acc = 0
        for v in vals:
            acc += weights[v]
            if acc >= rank:
                out["p%d" % p] = v / TICKS
                break
    return out


def compute(sim, scenario):
    n, slots, passes = sim.n, sim.slots, sim.passes
    arrive = np.asarray(sim.arrive, dtype=np.int64)
    out = np.asarray(sim.out, dtype=np.int64)
    first = np.frombuffer(sim.first_tick, dtype=np.int64)
    done = np.frombuffer(sim.done_tick, dtype=np.int64)
    ttft = first - arrive
    e2e = done - arrive
    makespan = int(done.max())
    total = slots * passes
    t_idle = total - sim.t_rows
    slo = scenario["slo"]
    ttft_ok = ttft <= to_ticks(slo["ttft_ms"])
    # tpot <= tbt  <=>  done - first <= tbt * (out - 1), exactly in integers
    tpot_ok = (done - first) <= to_ticks(slo["tbt_ms"]) * (out - 1)
    ok = ttft_ok & tpot_ok
    if slo["e2el_ms"] is not None:
        ok &= e2e <= to_ticks(slo["e2el_ms"])
    good = int(np.count_nonzero(ok))
    seconds = makespan / TICKS / 1000.0
    output_tokens = int(out.sum())
    return {
        "passes": passes,
        "makespan": makespan / TICKS,
        "utilization": sim.t_useful / total,
        "shares": {"useful": sim.t_useful / total, "prefill": sim.t_prefill / total,
                   "padding": sim.t_pad / total, "idle": t_idle / total},
        "slot_steps": {"useful": sim.t_useful, "prefill": sim.t_prefill, "padding": sim.t_pad,
                       "idle": t_idle, "total": total},
        "output_tokens": output_tokens,
        "throughput_tok_s": output_tokens / seconds,
        "ttft": _pcts(ttft),
        "tbt": _weighted_pcts(sim.rec.gap_weights),
        "e2e": _pcts(e2e),
        "goodput_rps": good / seconds,
        "slo_attainment": good / n,
        "preemptions": int(sum(sim.preemptions)),
        "kv_peak_tokens": int(sim.kv_peak),
        "makespan_ticks": makespan,
    }
