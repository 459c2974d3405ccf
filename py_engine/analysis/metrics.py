"""Metrics of a finished simulation, exact in integer ticks until the last step.

Names and definitions follow vLLM's benchmark (vllm/benchmarks/serve.py):
- utilization = useful / (slots * passes); shares useful / prefill / padding / idle of all
  slots * passes slot-steps (idle = slots * passes - occupied rows); they sum to 1.
- Percentiles p50/p95/p99 use the nearest-rank method: the value at rank ceil(p/100 * N) of the
  sorted samples (an actual sample); `mean` is the plain mean.
- ttft = first_token - arrive; e2e = done - arrive (done = when the slot is freed: the last token,
  or a static group's end); tpot = (last_token - first_token) / (out - 1), over requests with
  out > 1 (0 for a one-token request in its record).
- itl: every gap between consecutive tokens of a request, pooled over all requests (a request
  with out tokens gives out - 1 gaps; the first token after a preemption gaps from the last one).
  null when no request has 2+ tokens.
- SLO: a request meets it when it meets every limit given (slo.ttft_ms, slo.tpot_ms,
  slo.e2el_ms; null = no limit; in the cost unit). slo_attainment = share of requests meeting it;
  goodput_rps = those requests per second of makespan; meets_slo = slo_attainment >=
  slo.attainment (one rule everywhere); slo.limits = each limit's own share, slo.failing = the
  limits whose share is below the target (["together"] when each alone is met but not all at once).
- throughput_tok_s = output tokens per second of makespan; offered_rps = requests per second of
  the arrivals' span (null for a burst), served_rps = requests per second of makespan; backlog =
  requests still waiting for a slot when the last one arrives (a queue that only grows: the load
  exceeds the deployment). Under the unit cost
  one pass counts as 1 ms for these per-second rates. makespan = time the last request's slot is
  freed, from t = 0.
"""

import math
from array import array
from bisect import bisect_right
from fractions import Fraction
from itertools import accumulate, compress, repeat
from operator import ge, itemgetter, le, lt, mul, sub, truediv

from ..model.cost import TICKS, to_ticks
from ..sim.exact import SUB, floor_sum

PCTS = (50, 95, 99)


def nearest_rank(sorted_vals, p):
    """Nearest-rank percentile of an ascending sequence (p integer in 1..100).

    >>> nearest_rank([10, 20, 30, 40], 50), nearest_rank([10, 20, 30, 40], 95)
    (20, 40)
    """
    n = len(sorted_vals)
    return sorted_vals[max(1, (p * n + 99) // 100) - 1]


def percentiles(ticks):
    """ticks: a sequence of numbers -> {"p50", "p95", "p99", "mean"} in the cost unit (None if
    empty)."""
    s = sorted(ticks)
    return _sorted_pcts(s, all(type(v) is int for v in s))


def _sorted_pcts(s, ints=False):
    """percentiles of an ascending list (sorted once by the caller); ints: every value is an int."""
    if not s:
        return {"p%d" % p: None for p in PCTS} | {"mean": None}
    out = {"p%d" % p: nearest_rank(s, p) / TICKS for p in PCTS}
    # fsum: correctly rounded, so the same natively and in Pyodide (sum() of floats is
    # compensated from Python 3.12 on, plain before). Integer ticks within +-2^53 are exact as
    # floats, so fsum's correctly rounded sum is float() of their exact integer sum, which sum()
    # adds in C without fsum's float partials (int -> float rounds to nearest, ties even, as
    # fsum does)
    if ints and -EXACT <= s[0] and s[-1] <= EXACT:
        total = float(sum(s))
    else:
        total = math.fsum(s)
    out["mean"] = total / len(s) / TICKS
    return out


EXACT = 2 ** 53         # every int of at most this size is a float exactly


def _weighted_pcts(weights, lines=(), lines_sum=None):
    """weights: {value_ticks: count}; lines: (K, a, b, count, weight) runs of growing gaps
    K + ceil((a + b i) / SUB), i < count (recorder.gap_line), whose gaps add up to lines_sum
    (None: added up here) -> nearest-rank percentiles and mean of the pooled samples, exact (a
    binary search over the value, counting each line in O(1))."""
    total = sum(weights.values()) + sum(n * w for _, _, _, n, w in lines)
    if total == 0:
        return {"p%d" % p: None for p in PCTS} | {"mean": None}
    sub = SUB
    if lines_sum is None:
        lines_sum = sum(w * (n * K + floor_sum(n, sub, b, a + sub - 1)) for K, a, b, n, w in lines)
    span = sum(v * c for v, c in weights.items()) + lines_sum
    out = {"mean": span / total / TICKS}
    vals = sorted(weights)
    if not lines:
        for p in PCTS:
            rank = max(1, (p * total + 99) // 100)
            acc = 0
            for v in vals:
                acc += weights[v]
                if acc >= rank:
                    out["p%d" % p] = v / TICKS
                    break
        return out
    cum, acc = [], 0
    for v in vals:
        acc += weights[v]
        cum.append(acc)
    # each line's lowest and highest gap; a bisection drops the lines that lie wholly below or
    # above what is left of its interval, so each step looks at fewer
    spans = [(K + -(-a // sub), K + -(-(a + b * (n - 1)) // sub), K, a, b, n, w)
             for K, a, b, n, w in lines]

    def partial(active, v):
        got = 0
        for _, _, K, a, b, n, w in active:
            x = (v - K) * sub - a         # a + b i <= x  <=>  the gap of pass i is <= v
            if x >= 0:
                got += w * (n if b == 0 else min(n, x // b + 1))
        return got

    lo = min(vals[:1] + [sp[0] for sp in spans])
    hi = max(vals[-1:] + [sp[1] for sp in spans])
    # Bounds on the samples <= v in O(log) each, from the lines sorted by their lowest and by
    # their highest gap: at least the lines wholly <= v, at most the lines starting <= v (plus
    # the single values). They narrow each percentile's interval before the exact bisection,
    # which then counts only the lines that straddle it: the same answer (the least v with
    # rank samples <= v), without the first bisection steps' pass over every line.
    by_lo = sorted(spans, key=itemgetter(0))
    lo_at = [sp[0] for sp in by_lo]
    lo_cum = list(accumulate(sp[6] * sp[5] for sp in by_lo))
    by_hi = sorted(spans, key=itemgetter(1))
    hi_at = [sp[1] for sp in by_hi]
    hi_cum = list(accumulate(sp[6] * sp[5] for sp in by_hi))

    def single(v):
        j = bisect_right(vals, v)
        return cum[j - 1] if j else 0

    def at_most(v):
        i = bisect_right(lo_at, v)
        return (lo_cum[i - 1] if i else 0) + single(v)

    def at_least(v):
        i = bisect_right(hi_at, v)
        return (hi_cum[i - 1] if i else 0) + single(v)

    for p in PCTS:
        rank = max(1, (p * total + 99) // 100)
        a_, b_ = lo - 1, hi       # at_most(a_) < rank <= at_least(b_)
        while b_ - a_ > 1:
            mid = (a_ + b_) // 2
            if at_least(mid) >= rank:
                b_ = mid
            else:
                a_ = mid
        top = b_                  # rank <= samples <= top
        a_ = lo - 1
        while b_ - a_ > 1:
            mid = (a_ + b_) // 2
            if at_most(mid) < rank:
                a_ = mid
            else:
                b_ = mid
        b_ = top                  # samples <= a_ < rank <= samples <= b_
        i = bisect_right(hi_at, a_)
        below = hi_cum[i - 1] if i else 0   # below: weight of lines wholly <= a_
        active = [sp for sp in by_hi[i:] if sp[0] <= b_]
        while b_ - a_ > 1:
            mid = (a_ + b_) // 2
            j = bisect_right(vals, mid)
            if below + partial(active, mid) + (cum[j - 1] if j else 0) >= rank:
                b_ = mid
            else:
                a_ = mid
            keep = []
            for sp in active:
                if sp[1] <= a_:
                    below += sp[6] * sp[5]
                elif sp[0] <= b_:
                    keep.append(sp)
            active = keep
        out["p%d" % p] = b_ / TICKS
    return out


def slo_verdict(counts, n, slo, p95):
    """counts: {limit: requests meeting it alone, "all": meeting every one}; p95: {limit: the p95
    of its metric} -> the slo block, with `why` in words when it is not met."""
    target = Fraction(repr(slo["attainment"]))
    limits = {k: (None if counts[k] is None else counts[k] / n) for k in LIMITS}
    meets = counts["all"] >= target * n
    failing = [k for k in LIMITS if counts[k] is not None and counts[k] < target * n]
    if not meets and not failing:
        failing = ["together"]
    why = None
    if failing == ["together"]:
        why = "only %s of requests meet every limit at once" % _pct(counts["all"] / n)
    elif failing:
        # every limit that fails, and the share the verdict counts (every limit at once: the
        # sizing table's "within SLO"), so the words and the table say the same
        within, needed = _pct(counts["all"] / n), _pct(slo["attainment"])
        if within == needed:          # 99.6% of a 99.9% target: not "100% within; 100% needed"
            within, needed = ("%.1f%%" % (100 * x) for x in (counts["all"] / n, slo["attainment"]))
        why = "%s (%s within the SLO; %s needed)" % (
            " and ".join(_over(k, p95[k], slo[k], limits[k]) for k in failing), within, needed)
    return {"attainment": counts["all"] / n, "target": slo["attainment"], "meets": meets,
            "limits": limits, "failing": failing, "why": why}


LIMITS = ("ttft_ms", "tpot_ms", "e2el_ms")
P95_WORDS = {"ttft_ms": "p95 TTFT", "tpot_ms": "p95 TPOT", "e2el_ms": "p95 E2E latency"}


def _over(k, p95, limit, share):
    """A failing limit in words: its p95 over the limit, or, when the p95 is within it (a target
    above 95%), the share of requests over it."""
    if p95 is not None and p95 > limit:
        return "%s is %s > %s" % (P95_WORDS[k], _time(p95), _time(limit))
    return "%s > %s for %s of requests" % (P95_WORDS[k][4:], _time(limit), _pct(1 - share))


def _pct(x):
    """A share as the page's table rounds it (Math.round(100 * x): halves up)."""
    return "%d%%" % math.floor(100 * x + 0.5)


def _time(ms):
    """A time in words as the page's tables show it (web/draw/format.js fmtTime and fmt): 58.3 ms,
    547.6 ms, then seconds (4.76 s, 25.3 s, 165.0 s, 2 s), so prose and tables read alike."""
    return _num(ms / 1000) + " s" if abs(ms) >= 1000 else _num(ms) + " ms"


def _num(n):
    a = abs(n)
    if float(n).is_integer() or a >= 1000:
        return "{:,.0f}".format(n)
    return "%.1f" % n if a >= 10 else "%.2f" % n if a >= 1 else "0" if a == 0 else "%#.3g" % n


def peak_in_flight(arrive, done):
    """The most requests arrived and not yet done at one time (a request done at the tick
    another arrives is gone). It can only rise at an arrival; `arrive` is in arrival order.

    >>> peak_in_flight([0, 0, 5, 9], [5, 7, 9, 12])
    2
    """
    n = len(arrive)
    if not n:
        return 0
    if arrive.count(arrive[0]) == n:
        # one arrival time (a burst): the last arrival's count, all arrived less all done by then
        return n - sum(map(le, done, repeat(arrive[0])))
    gone = sorted(done)
    if not all(map(le, arrive, arrive[1:])):
        # not in arrival order: max of i + 1 - bisect_right(gone, arrive[i]) over every i
        return max(map(sub, range(1, n + 1), map(bisect_right, repeat(gone), arrive)))
    # In arrival order, request i's count i + 1 - G(arrive[i]) (G(t) = requests done by t, which
    # only grows with t) is at most e - G(arrive[s]) over a block s <= i < e. The blocks are
    # counted in full highest bound first, until no bound left beats the best count.
    size = PEAK_BLOCK
    starts = range(0, n, size)
    bounds = list(map(sub, [min(s + size, n) for s in starts],
                      map(bisect_right, repeat(gone), [arrive[s] for s in starts])))
    best = None
    for k in sorted(range(len(bounds)), key=bounds.__getitem__, reverse=True):
        if best is not None and bounds[k] <= best:
            break
        s = k * size
        e = min(s + size, n)
        got = max(map(sub, range(s + 1, e + 1), map(bisect_right, repeat(gone), arrive[s:e])))
        if best is None or got > best:
            best = got
    return best


PEAK_BLOCK = 64         # arrivals a block of peak_in_flight's bound


def _count_all(masks, n):
    """masks: bytearrays of 0/1, one byte per request -> requests with 1 in every mask. The masks
    become integers of n bytes and are ANDed bytewise at once (no loop over requests)."""
    if not masks:
        return n
    if len(masks) == 1:
        return masks[0].count(1)
    both = int.from_bytes(masks[0], "little")
    for m in masks[1:]:
        both &= int.from_bytes(m, "little")
    return both.to_bytes(n, "little").count(1)


def gpus(scenario):
    """The GPUs one server of the scenario takes: its roofline deployment's tp, else 1."""
    cost = scenario["server"]["cost"]
    return cost["tp"] if isinstance(cost, dict) and cost.get("kind") == "roofline" else 1


def _limits(slo):
    """Each limit of the SLO in ticks (None: no limit)."""
    return {k: None if slo[k] is None else to_ticks(slo[k]) for k in LIMITS}


def _within(column, limit):
    """0/1 a request: its latency (ticks) is within the limit."""
    return bytearray(map(ge, repeat(limit), column))


def _tpot_within(span, gaps, limit):
    """0/1 a request: tpot <= limit, as last - first <= limit * (out - 1) in integers."""
    return bytearray(map(le, span, map(mul, repeat(limit), gaps)))


def _limit(counts, masks, key, mask, n):
    counts[key] = ok = mask.count(1)
    if ok < n:                    # a limit every request meets needs no AND
        masks.append(mask)


def _scored(counts, masks, n, slo, p95, seconds):
    """The metrics the SLO decides, from each limit's count and mask."""
    good = _count_all(masks, n)
    verdict = slo_verdict({k: counts.get(k) for k in LIMITS} | {"all": good}, n, slo, p95)
    return {"goodput_rps": good / seconds, "slo_attainment": good / n,
            "meets_slo": verdict["meets"], "slo": verdict}


def _kept(keep, key, column):
    """keep[key] = the column as 8-byte integers (a third of a list's memory), or keep["whole"] =
    False when a value does not fit (ticks of a run longer than a lifetime)."""
    try:
        keep[key] = array("q", column)
    except OverflowError:
        keep["whole"] = False


def slo_columns_scored(kept, slo):
    """compute()'s SLO metrics (goodput_rps, slo_attainment, meets_slo, slo) for another SLO,
    from what compute(keep=...) kept of a run: the same numbers the run would give."""
    n, lim = kept["n"], _limits(slo)
    counts, masks = {}, []
    for key in ("ttft_ms", "e2el_ms"):
        if lim[key] is not None:
            _limit(counts, masks, key, _within(kept[key], lim[key]), n)
    if lim["tpot_ms"] is not None:
        _limit(counts, masks, "tpot_ms", _tpot_within(kept["span"], kept["gaps"], lim["tpot_ms"]), n)
    return _scored(counts, masks, n, slo, kept["p95"], kept["seconds"])


def compute(sim, scenario, itl=True, keep=None):
    """A finished core's metrics (itl False: without the pooled inter-token latency, the one
    costly metric a fleet's per-replica rows do not show). keep: a dict to fill with what the
    SLO's metrics are made of (slo_columns), so that another SLO is scored without the run."""
    n, slots, passes = sim.n, sim.slots, sim.passes
    arrive, out, first, done, last = (sim.arrive, sim.out, sim.first_tick, sim.done_tick,
                                      sim.last_tick)
    # A column at a time, each loop in C (map over the operator functions; lists, which build
    # faster than arrays from an iterator). Each column is dropped once used, so only one or two
    # per-request columns are alive at a time. SLO, exactly in integers (Python ints never
    # overflow): tpot <= lim  <=>  last - first <= lim * (out - 1). Each limit gives a 0/1 byte a
    # request; its count is the limit's own, and the masks ANDed count the requests meeting
    # every limit at once.
    slo = scenario["slo"]
    lim = _limits(slo)
    counts, masks = {}, []

    def latency(column, key):
        """A latency column (ticks, freed on return): its limit's mask, then its percentiles."""
        if keep is not None:
            _kept(keep, key, column)
        if lim[key] is not None:
            _limit(counts, masks, key, _within(column, lim[key]), n)
        column.sort()
        return _sorted_pcts(column, ints=True)

    tt = latency(list(map(sub, first, arrive)), "ttft_ms")
    te = latency(list(map(sub, done, arrive)), "e2el_ms")
    span_tok = list(map(sub, last, first))               # last - first
    gaps = list(map(sub, out, repeat(1)))                # out - 1
    if keep is not None:
        _kept(keep, "span", span_tok)
        _kept(keep, "gaps", gaps)
    if lim["tpot_ms"] is not None:
        _limit(counts, masks, "tpot_ms", _tpot_within(span_tok, gaps, lim["tpot_ms"]), n)
    # tpot = (last - first) / (out - 1) over the requests with out > 1 (the same int / int)
    if min(out, default=2) > 1:
        tpot = list(map(truediv, span_tok, gaps))
    else:
        two_plus = bytearray(map(lt, repeat(1), out))
        tpot = list(map(truediv, compress(span_tok, two_plus), compress(gaps, two_plus)))
    del span_tok, gaps
    tpot.sort()
    tp = _sorted_pcts(tpot)
    del tpot
    makespan = max(done)
    total = slots * passes
    t_idle = total - sim.t_rows
    seconds = makespan / TICKS / 1000.0
    p95 = {"ttft_ms": tt["p95"], "tpot_ms": tp["p95"], "e2el_ms": te["p95"]}
    scored = _scored(counts, masks, n, slo, p95, seconds)
    if keep is not None:
        keep.update(n=n, seconds=seconds, p95=p95)
    output_tokens = sum(out)
    prompt_tokens = sum(sim.prompt)
    last_arrival = max(arrive)
    span = last_arrival / TICKS / 1000.0         # arrivals' span (0: a burst)
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
        # as vllm bench serve prints them (its request throughput is served_rps): (prompt +
        # output) tokens / s, the most requests in flight (arrived, not done) at once, and the
        # most holding a slot at once
        "total_token_throughput_tok_s": (prompt_tokens + output_tokens) / seconds,
        # vLLM's logged "prompt throughput": what a prefill-only replica (P/D) does
        "prompt_throughput_tok_s": prompt_tokens / seconds,
        "peak_concurrency": peak_in_flight(arrive, done),
        "peak_running": sim.peak_in_slot,
        "ttft": tt,
        "tpot": tp,
        "itl": (_weighted_pcts(sim.rec.gap_weights, sim.rec.gap_lines, sim.rec.gap_lines_sum)
                if itl else None),
        "e2e": te,
        "goodput_rps": scored["goodput_rps"],
        "offered_rps": n / span if span > 0 else None,
        "served_rps": n / seconds,
        "backlog": sum(map(lt, repeat(last_arrival), sim.admit_tick)) if span > 0 else 0,
        "slo_attainment": scored["slo_attainment"],
        "meets_slo": scored["meets_slo"],
        "slo": scored["slo"],
        "preemptions": int(sum(sim.preemptions)),
        "kv_peak_tokens": int(sim.kv_peak),
        # the KV budget the run had, kv_tokens "auto" resolved (None: unlimited)
        "kv_pool_tokens": scenario.kv_pool,
        # GPUs the run took: a deployment's tensor-parallel group (1 without one); a fleet's
        # replicas add theirs (fleet/result.py); goodput_per_gpu = goodput_rps / gpus
        "gpus": gpus(scenario),
        "prefix_hit_rate": None,
        "makespan_ticks": makespan,
    }
