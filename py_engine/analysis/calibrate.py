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
import io
import statistics

from ..errors import ScenarioError

STEP = ("rows", "prefill_tokens", "context_tokens", "step_ms")
SERVED = ("batch", "prompt", "ttft_ms", "tpot_ms")
TERMS = ("fixed_ms", "per_row_ms", "per_prefill_token_ms", "per_context_token_ms")
MAX_ROWS = 100_000
MAX_CHARS = 5_000_000


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
    reader = csv.reader(io.StringIO(text.strip()))
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
            raise ScenarioError("calibration", "<more than %d lines>" % MAX_ROWS,
                                "at most %d measurements" % MAX_ROWS)
    if len(points) < 2:
        raise ScenarioError("calibration", "<%d measurements>" % len(points),
                            "at least 2 measurements")
    return points, ("step" if form is STEP else "served")


def fit(text):
    """-> {"cost": the custom cost model, "error": {"median_ape", "worst_ape", "r2"}, "points",
    "form", "dropped": terms fixed at 0}."""
    import numpy as np   # optional extra (pyproject: calibrate), imported only by a fit
    points, form = parse(text)
    X = np.array([[1.0, r, p, c] for r, p, c, _ in points])
    y = np.array([ms for *_, ms in points])
    keep = [0, 1, 2, 3]
    keep = [j for j in keep if X[:, j].any() or j == 0]     # a column of zeros says nothing
    while True:
        coef, *_ = np.linalg.lstsq(X[:, keep], y, rcond=None)
        neg = [j for j, c in zip(keep, coef) if c < 0]
        if not neg or len(keep) == 1:
            break
        keep.remove(min(neg, key=lambda j: coef[keep.index(j)]))
    full = [0.0] * 4
    for j, c in zip(keep, coef):
        full[j] = max(0.0, float(c))
    full[0] = max(full[0], 1e-6)      # a pass costs something (the cost model's floor)
    pred = X @ np.array(full)
    ape = [abs(a - b) / b for a, b in zip(pred.tolist(), y.tolist())]
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    cost = {k: float("%.6g" % v) for k, v in zip(TERMS, full)}
    return {"cost": cost, "points": len(points), "form": form,
            "dropped": [TERMS[j] for j in range(4) if j not in keep],
            "error": {"median_ape": statistics.median(ape), "worst_ape": max(ape),
                      "r2": 1 - ss_res / ss_tot if ss_tot > 0 else None}}
