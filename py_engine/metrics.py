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

from .cost import TICKS, to_ticks

PCTS = (50, 95, 99)


def nearest_rank(sorted_vals, p):
    """Nearest-rank percentile of an ascending sequence (p integer in 1..100).

    >>> nearest_rank([10, 20, 30, 40], 50), nearest_rank([10, 20, 30, 40], 95)
    (20, 40)
    """
    n = len(sorted_vals)
    return sorted_vals[max(1, (p * n + 99) // 100) - 1]


def _pcts(ticks):
    """ticks: a list of integers -> {"p50", "p95", "p99"} in the cost unit (None if empty)."""
    if not ticks:
        return {"p%d" % p: None for p in PCTS}
    s = sorted(ticks)
    return {"p%d" % p: nearest_rank(s, p) / TICKS for p in PCTS}


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
    arrive, out, first, done = sim.arrive, sim.out, sim.first_tick, sim.done_tick
    ttft = [f - a for f, a in zip(first, arrive)]
    e2e = [d - a for d, a in zip(done, arrive)]
    makespan = max(done)
    total = slots * passes
    t_idle = total - sim.t_rows
    # SLO, exactly in integers (Python ints never overflow): tpot <= tbt  <=>
    # done - first <= tbt * (out - 1)
    slo = scenario["slo"]
    ttft_lim, tbt_lim = to_ticks(slo["ttft_ms"]), to_ticks(slo["tbt_ms"])
    e2e_lim = None if slo["e2el_ms"] is None else to_ticks(slo["e2el_ms"])
    good = 0
    for t, e, f, d, o in zip(ttft, e2e, first, done, out):
        if t <= ttft_lim and d - f <= tbt_lim * (o - 1) and (e2e_lim is None or e <= e2e_lim):
            good += 1
    seconds = makespan / TICKS / 1000.0
    output_tokens = sum(out)
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
