"""Calibrate the pass cost to your own measurements: a least-squares fit (numpy, loaded only for
this) of

    pass ms = fixed_ms + per_row_ms x rows + per_prefill_token_ms x prefill tokens
              + per_context_token_ms x context tokens

the `custom` cost model with its context term (context tokens: the KV every row of the pass
reads). The text is a CSV with a header, one measurement a line, in either of two forms:

    rows,prefill_tokens,context_tokens,step_ms      one forward pass each
    batch,prompt,ttft_ms,tpot_ms                     a served model at a batch size: the TTFT is
                                                     a prefill pass of batch x prompt tokens, the
                                                     TPOT a decode pass of batch rows reading
                                                     batch x prompt tokens of context

Coefficients are kept >= 0 (a term the data would make negative is dropped and the rest
re-fitted). The result says how well it fits: the median and worst absolute percentage error
and R^2, over the measurements themselves.
"""

import csv
import statistics

from ..errors import ScenarioError

STEP = ("rows", "prefill_tokens", "context_tokens", "step_ms")
SERVED = ("batch", "prompt", "ttft_ms", "tpot_ms")
TERMS = ("fixed_ms", "per_row_ms", "per_prefill_token_ms", "per_context_token_ms")
MAX_ROWS = 100_000
MAX_CHARS = 5_000_000
MAX_LINE = 10_000           # characters on one line (four numbers need far fewer)


def _number(text, line, col, integer):
    try:
        v = float(text)
    except ValueError:
        v = None
    if v is None or v != v or v in (float("inf"), float("-inf")) or v < 0 or (
            integer and v != int(v)):
        raise ScenarioError("calibration line %d: %s" % (line, col), text,
                            "%s >= 0" % ("an integer" if integer else "a number"))
    return v


def parse(text):
    """CSV text -> (points [(rows, prefill, context, ms)], form); a bad line is a ScenarioError
    naming its line and column."""
    if not isinstance(text, str) or not text.strip():
        raise ScenarioError("calibration", text, "CSV text with a header: %s, or %s"
                            % (",".join(STEP), ",".join(SERVED)))
    if len(text) > MAX_CHARS:
        raise ScenarioError("calibration", "<%d characters>" % len(text),
                            "at most %d characters" % MAX_CHARS)
    # any line ending (CR-only too); a cell longer than csv's field limit is a bad line, not a crash
    lines = text.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n")
    too_long = next((i for i, t in enumerate(lines, 1) if len(t) > MAX_LINE), None)
    if too_long is not None:
        raise ScenarioError("calibration line %d" % too_long, "<%d characters>"
                            % len(lines[too_long - 1]), "a line of at most %d characters" % MAX_LINE)
    reader = csv.reader(lines)
    header = [h.strip().lower() for h in next(reader)]
    for form in (STEP, SERVED):
        if all(c in header for c in form):
            break
    else:
        raise ScenarioError("calibration line 1", ",".join(header),
                            "a header with the columns %s, or %s"
                            % (",".join(STEP), ",".join(SERVED)))
    idx = [header.index(c) for c in form]
    points = []
    for line, row in enumerate(reader, 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise ScenarioError("calibration line %d" % line, ",".join(row),
                                "%d columns, as the header" % len(header))
        vals = [_number(row[i].strip(), line, form[j], j < 2) for j, i in enumerate(idx)]
        if form is STEP:
            if vals[3] <= 0:
                raise ScenarioError("calibration line %d: step_ms" % line, row[idx[3]],
                                    "a number > 0")
            points.append((vals[0], vals[1], vals[2], vals[3]))
        else:
            b, p, ttft, tpot = vals
            if ttft <= 0 or tpot <= 0 or b < 1:
                raise ScenarioError("calibration line %d" % line, ",".join(row),
                                    "batch >= 1 and times > 0")
            points.append((b, b * p, 0.0, ttft))          # the prefill pass
            points.append((b, 0.0, b * p, tpot))          # a decode pass
        if len(points) > MAX_ROWS:
            raise ScenarioError("calibration", len(points), "at most %d measurements" % MAX_ROWS,
                                "calibration: more than %d measurements; must be at most %d"
                                % (MAX_ROWS, MAX_ROWS))
    if len(points) < 2:
        n = len(points)
        raise ScenarioError("calibration", n, "at least 2 measurements",
                            "calibration: %d measurement%s; must be at least 2" % (
                                n, "" if n == 1 else "s"))
    return points, ("step" if form is STEP else "served")


def fit(text):
    """-> {"cost": the custom cost model, "error": {"median_ape", "worst_ape", "r2"}, "points",
    "form", "dropped": terms the data would make negative or says nothing of (fixed at 0),
    "merged": terms the data cannot tell apart from the others (fixed at 0, the others take
    their share), "usable": bool, "problem": why not, or None}.

    The fit minimises relative errors (each measurement weighted by 1 / its value), so a served
    model's TPOT of 12 ms counts as much as its TTFT of 900 ms (an absolute fit put the fixed
    cost above the measured TPOT). A fit is not usable when the data cannot separate its terms
    (e.g. every row at one batch size: fixed_ms and per_row_ms trade off freely) or when a
    coefficient falls outside the custom cost's range."""
    import numpy as np   # optional extra (pyproject: calibrate), imported only by a fit
    points, form = parse(text)
    X = np.array([[1.0, r, p, c] for r, p, c, _ in points])
    y = np.array([ms for *_, ms in points])
    W = X / y[:, None]                       # relative least squares: rows over their value
    ones = np.ones_like(y)
    keep = [j for j in range(4) if X[:, j].any() or j == 0]     # a column of zeros says nothing
    problem, merged = None, []
    while True:
        while True:
            coef, *_ = np.linalg.lstsq(W[:, keep], ones, rcond=None)
            neg = [j for j, c in zip(keep, coef) if c < 0]
            if not neg or len(keep) == 1:
                break
            keep.remove(min(neg, key=lambda j: coef[keep.index(j)]))
        if _full_rank(X, keep):
            break
        constant = [j for j in keep[1:] if len(set(X[:, j].tolist())) == 1]
        if constant:     # a term the fixed cost can stand in for: the fit is arbitrary
            j = constant[0]
            problem = ("the measurements cannot separate %s from %s: every one has %s = %g; "
                       "measure at other values" % (TERMS[0], TERMS[j], COLUMNS[form][j],
                                                     X[0, j]))
            break
        # terms whose columns are combinations of the others: the others take their share
        j = next(j for j in (1, 3, 2) if j in keep)
        keep.remove(j)
        merged.append(TERMS[j])
    full = [0.0] * 4
    for j, c in zip(keep, coef):
        full[j] = max(0.0, float(c))
    full[0] = max(full[0], 1e-6)      # a pass costs something (the cost model's floor)
    pred = X @ np.array(full)
    ape = [abs(a - b) / b for a, b in zip(pred.tolist(), y.tolist())]
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    cost = {k: float("%.6g" % v) for k, v in zip(TERMS, full)}
    problem = problem or _out_of_range(cost)
    return {"cost": cost, "points": len(points), "form": form,
            "dropped": [TERMS[j] for j in range(4) if j not in keep and TERMS[j] not in merged],
            "merged": merged,
            "usable": problem is None, "problem": problem,
            "error": {"median_ape": statistics.median(ape), "worst_ape": max(ape),
                      "r2": 1 - ss_res / ss_tot if ss_tot > 0 else None}}


COLUMNS = {"step": ("a constant", "rows", "prefill_tokens", "context_tokens"),
           "served": ("a constant", "batch", "batch x prompt", "batch x prompt")}


def _full_rank(X, keep):
    """Can the measurements tell the kept terms apart (the columns independent)?"""
    import numpy as np   # optional extra, as in fit()
    cols = X[:, keep] / np.abs(X[:, keep]).max(axis=0)      # scale: rank is about directions
    return np.linalg.matrix_rank(cols, tol=1e-9) == len(keep)


def _out_of_range(cost):
    """The first coefficient outside the custom cost's range (scenario/fields.py), or None."""
    from ..scenario import fields   # lazy: only a fit needs the field table here (start-up)
    for term in TERMS:
        f = fields.BY_PATH["server.cost." + term]
        if not f.min <= cost[term] <= f.max:
            return ("%s = %g is outside the custom cost's range (%g to %g): these measurements "
                    "do not describe passes the cost model can take" % (term, cost[term], f.min,
                                                                         f.max))
    return None
