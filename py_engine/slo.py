"""Sizing against an SLO: "raise max_num_seqs until the SLO breaks, then stop".

A run, and so a sweep point, *meets the SLO* by the one rule of metrics.py: at least
`slo.attainment` of its requests meet every limit given (slo.ttft_ms, slo.tpot_ms, slo.e2el_ms,
per request, compared in integer ticks as the engine computes them, so a value exactly on the
line meets it). metrics["slo"]["failing"] names the limits that broke it.

`best` is the largest swept value that meets the SLO: for `slots` the largest max_num_seqs whose
latency still fits (beyond it more slots buy throughput at the SLO's expense, or only preemptions
once the KV cache is over-committed); for `rate` the highest load the server sustains within the
SLO. `lowest` is the smallest (e.g. the fewest slots that keep queueing under the TTFT limit).

>>> verdicts = [(4, False), (8, True), (16, True), (32, False)]
>>> pts = [{"value": v, "vllm": {"meets_slo": ok}} for v, ok in verdicts]
>>> best_value(pts, "vllm")
16
"""


def best_value(points, scheduler):
    """Largest swept value whose point meets the SLO for `scheduler`, or None."""
    ok = [pt["value"] for pt in points if pt[scheduler]["meets_slo"]]
    return max(ok) if ok else None


def annotate(result, schedulers, slo):
    """Add "slo", "best" (largest value meeting it) and "lowest" (smallest value meeting it),
    each {scheduler: value or None}, to a sweep result whose points carry meets_slo."""
    result["slo"] = dict(slo)
    result["best"] = {name: best_value(result["points"], name) for name in schedulers}
    result["lowest"] = {name: min((pt["value"] for pt in result["points"]
                                   if pt[name]["meets_slo"]), default=None)
                        for name in schedulers}
    return result
