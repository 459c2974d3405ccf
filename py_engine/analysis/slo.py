"""Sizing against an SLO: "raise max_num_seqs until the SLO breaks, then stop".

A run, and so a sweep point, *meets the SLO* by the one rule of metrics.py: at least
`slo.attainment` of its requests meet every limit given (slo.ttft_ms, slo.tpot_ms, slo.e2el_ms,
per request, compared in integer ticks as the engine computes them, so a value exactly on the
line meets it). metrics["slo"]["failing"] names the limits that broke it.

`best` is the largest swept value that meets the SLO: for `slots` the largest max_num_seqs whose
latency still fits (beyond it more slots buy throughput at the SLO's expense, or only preemptions
once the KV cache is over-committed); for `rate` the highest load the server sustains within the
SLO. `lowest` is the smallest (e.g. the fewest slots that keep queueing under the TTFT limit).
The recommendation is neither: the smallest setting meeting the SLO that serves (within 1%) as
much goodput as any that meets it (recommended_point), and settings that give the very same run
are said to be the same ("peak concurrency was 40 running requests: any max_num_seqs >= 40 is
the same").

>>> verdicts = [(4, False), (8, True), (16, True), (32, False)]
>>> pts = [{"value": v, "vllm": {"meets_slo": ok}} for v, ok in verdicts]
>>> best_value(pts, "vllm")
16

Values are ordered by their effective setting: a point's "rank" when the sweep gave one (null
kv_tokens = no limit ranks above every number; "auto" ranks as the pool it resolves to), else its
value.
"""


def rank(pt):
    """A sweep point's place in the order of settings (see above)."""
    return pt.get("rank", pt["value"])


def shown(value):
    """A swept value in a sentence."""
    return "no limit" if value is None else value


def best_point(points, scheduler):
    """The point of the largest swept value meeting the SLO for `scheduler`, or None (a point's
    value may itself be None: no limit)."""
    ok = [pt for pt in points if pt[scheduler]["meets_slo"]]
    return max(ok, key=rank) if ok else None


def best_value(points, scheduler):
    """Largest swept value whose point meets the SLO for `scheduler`, or None."""
    pt = best_point(points, scheduler)
    return None if pt is None else pt["value"]


def annotate(result, schedulers, slo, label=None, cap=None):
    """Add "slo", "best" (largest value meeting it), "lowest" (smallest value meeting it) and
    "recommendation" (recommend()), each {scheduler: ...}, to a sweep result whose points carry
    meets_slo. label: the swept parameter's name in words; cap: the batch's cap when the sweep
    is of another field ({"path", "label", "value"}: max_num_seqs as set), see recommend()."""
    result["slo"] = dict(slo)
    result["best"] = {name: best_value(result["points"], name) for name in schedulers}
    result["lowest"] = {name: min((pt for pt in result["points"] if pt[name]["meets_slo"]),
                                  key=rank, default={"value": None})["value"]
                        for name in schedulers}
    result["recommendation"] = {name: recommend(result, name, label or result["param"], cap)
                                for name in schedulers}
    return result


OVERLOAD = 0.1      # a backlog of this share of the requests when the last one arrives
ENOUGH = 1.01       # "as much": within 1% (goodput between settings, throughput rising)


def recommend(result, name, label, cap=None):
    """{"value", "text", "overloaded", "load", "rising", "binds"}: the setting to use and why, in
    words ("set max_num_seqs to 32: at 64, p95 TPOT is 85.5 ms > 80 ms ..."), whether the load
    exceeds what is served at every setting tried (a backlog when the last request arrives),
    and then how much arrives, how much is served at most and what would serve more: a larger
    setting when throughput still rises, else the deployment or the traffic, unless every run
    had as many requests running as `cap` (max_num_seqs, not the field swept) allows: then that
    cap binds, not the deployment ("binds": its path), and the words say to sweep it."""
    pts = sorted(result["points"], key=rank)
    n = [pt[name]["served_rps"] * pt[name]["makespan"] / 1000 for pt in pts]   # requests
    over = all(pt[name].get("offered_rps") and pt[name]["backlog"] > OVERLOAD * k
               for pt, k in zip(pts, n))
    load = None
    # does throughput still rise at the largest setting tried? then a larger one may serve more
    rising = len(pts) > 1 and pts[-1][name]["served_rps"] > pts[-2][name]["served_rps"] * ENOUGH
    binds = cap is not None and all((pt[name].get("peak_running") or 0) >= cap["value"]
                                    for pt in pts)
    capped = ("%s = %s caps the batch: at every %s tried, %s requests run at once"
              % (cap["label"], shown(cap["value"]), label, shown(cap["value"])) if binds else "")
    if over:
        served = "%.2f req/s arrive, at most %.2f are served" % (
            pts[0][name]["offered_rps"], max(pt[name]["served_rps"] for pt in pts))
        if binds:
            load = "%s while the queue grows (%s); try sweeping %s" % (capped, served, cap["label"])
        elif rising:
            load = ("the load exceeds what any %s tried serves: %s; throughput still rises at "
                    "%s = %s: try larger values" % (label, served, label, shown(pts[-1]["value"])))
        else:
            load = ("the load exceeds the deployment: %s; more %s will not fix that — a bigger "
                    "deployment or less traffic will" % (served, label))
    rec = recommended_point(pts, name)
    best = None if rec is None else rec["value"]
    if rec is None:
        text = "no %s tried meets the SLO: at %s, %s" % (label, shown(pts[-1]["value"]),
                                                         pts[-1][name]["slo"]["why"])
        if binds and not over:          # (an overload says it in `load`)
            text += "; %s: try sweeping %s" % (capped, cap["label"])
    else:
        slots = result.get("path") == "server.slots"
        text = "set %s to %s" % (label, shown(best)) + _reasons(pts, name, label, rec, slots)
    # the cap binds when it is what stands between the reader and the SLO or the load, not
    # whenever some run filled it (a setting that meets the SLO is advice enough)
    binds = binds and (over or rec is None)
    return {"value": best, "text": text, "overloaded": over, "load": load, "rising": rising,
            "binds": cap["path"] if binds else None}


def recommended_point(points, name):
    """The smallest setting that meets the SLO and serves (within 1%) as much goodput as any
    setting that meets it, or None. Under a load every setting keeps up with, that is the smallest
    meeting the SLO (more slots only cost memory); when more of a setting still serves more, the
    largest that does (so a rate sweep's answer stays the highest load sustained)."""
    ok = [pt for pt in points if pt[name]["meets_slo"]]
    if not ok:
        return None
    most = max(pt[name]["goodput_rps"] for pt in ok)
    return min((pt for pt in ok if pt[name]["goodput_rps"] * ENOUGH >= most), key=rank)


def _reasons(pts, name, label, rec, slots):
    """Why `rec`, in words: the setting below it that fails (or serves less), what larger ones
    add, where the SLO breaks above it, and the settings that do not bind (the same run). slots:
    the sweep is of max_num_seqs, where a run whose peak of running requests is N is the run of
    every max_num_seqs >= N (admission is the only place it binds)."""
    top = rank(rec)
    below = [pt for pt in pts if rank(pt) < top]
    above = [pt for pt in pts if rank(pt) > top]
    good = rec[name]["goodput_rps"]
    out = []
    if not below:
        out.append("the smallest tried, and it meets the SLO")
    elif not below[-1][name]["meets_slo"]:
        out.append("at %s, %s" % (shown(below[-1]["value"]), below[-1][name]["slo"]["why"]))
    else:
        out.append("%s meets it too, with %s less goodput" % (
            shown(below[-1]["value"]), _share(1 - below[-1][name]["goodput_rps"] / good)))
    more = [pt[name]["goodput_rps"] for pt in above if pt[name]["meets_slo"]]
    if more:
        gain = max(more) / good - 1 if good else 0.0
        out.append("larger settings that meet it " + (
            "serve no more goodput" if gain <= 0 else
            "add less than 0.01% goodput" if _share(gain) == _share(0.0) else
            "add at most %s goodput" % _share(gain)))
    fail = [pt for pt in above if not pt[name]["meets_slo"]]
    if fail:
        out.append("at %s, %s" % (shown(fail[0]["value"]), fail[0][name]["slo"]["why"]))
    same = _same_from(pts, name)
    if same is not pts[-1] and all(pt[name]["meets_slo"] for pt in pts if rank(pt) >= rank(same)):
        peak = same[name].get("peak_running")
        out.append("peak concurrency was %d running requests: any %s ≥ %d is the same" % (
            peak, label, peak) if slots and peak is not None else
            "every setting from %s up gives the same run" % shown(same["value"]))
    return ": " + "; ".join(out)


def _share(x):
    """A share in words: 1.01% (two decimals under 10%, so one just over 1% does not read 1.0%)."""
    return "%.*f%%" % (2 if x < 0.1 else 1, 100 * x)


# utilization is per slot: more idle slots lower it while every request's run stays the same
NOT_THE_RUN = ("utilization",)


def _same_from(pts, name):
    """The smallest-ranked point from which every larger one has the very same metrics as the
    largest (pts sorted by rank): beyond it the setting does not bind."""
    def run(pt):
        return {k: v for k, v in pt[name].items() if k not in NOT_THE_RUN}
    top = run(pts[-1])
    same = pts[-1]
    for pt in reversed(pts[:-1]):
        if run(pt) != top:
            break
        same = pt
    return same
