"""Sizing against an SLO: "raise max_num_seqs until p95 TTFT breaks the SLO, then stop".

A sweep point *meets the SLO* when its p95 TTFT <= slo.ttft_ms and its p95 time between tokens
<= slo.tbt_ms (a run with no multi-token request has no TBT and passes that half). Compared in
integer ticks, as the engine computes them, so a value exactly on the line meets it.

`best` is the largest swept value that meets the SLO: for `slots` the largest max_num_seqs whose
tail latency still fits (beyond it more slots buy throughput at the SLO's expense, or only
preemptions once the KV cache is over-committed); for `rate` the highest load the server sustains
within the SLO. Goodput (requests per second meeting both objectives, per request) is reported
next to it by the metrics.

>>> slo = {"ttft_ms": 2000.0, "tbt_ms": 100.0}
>>> meets_slo({"ttft": {"p95": 1999.5}, "tbt": {"p95": 100.0}}, slo)
True
>>> meets_slo({"ttft": {"p95": 2000.1}, "tbt": {"p95": 20.0}}, slo)
False
>>> verdicts = [(4, False), (8, True), (16, True), (32, False)]
>>> pts = [{"value": v, "vllm": {"meets_slo": ok}} for v, ok in verdicts]
>>> best_value(pts, "vllm")
16
"""

from .cost import to_ticks


def meets_slo(metrics, slo):
    ttft, tbt = metrics["ttft"]["p95"], metrics["tbt"]["p95"]
    if ttft is None or to_ticks(ttft) > to_ticks(slo["ttft_ms"]):
        return False
    return tbt is None or to_ticks(tbt) <= to_ticks(slo["tbt_ms"])


def best_value(points, scheduler):
    """Largest swept value whose point meets the SLO for `scheduler`, or None."""
    ok = [pt["value"] for pt in points if pt[scheduler]["meets_slo"]]
    return max(ok) if ok else None


def annotate(result, schedulers, slo):
    """Add meets_slo to every point, and "slo", "best" (largest value meeting it) and "lowest"
    (smallest value meeting it; e.g. the fewest slots that keep queueing under the TTFT
    objective), each {scheduler: value or None}, to a sweep result."""
    for pt in result["points"]:
        for name in schedulers:
            pt[name]["meets_slo"] = meets_slo(pt[name], slo)
    result["slo"] = dict(slo)
    result["best"] = {name: best_value(result["points"], name) for name in schedulers}
    result["lowest"] = {name: min((pt["value"] for pt in result["points"]
                                   if pt[name]["meets_slo"]), default=None)
                        for name in schedulers}
    return result
