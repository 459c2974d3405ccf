"""The result's record layouts, declared once and shipped in `schema()` for every reader.

A result carries `requests` (one object per request, keys REQUEST in this order), `segments`
(run-length occupancy rows, positional: SEGMENT names the positions) and `passes_log` (columns,
PASSES_LOG), plus `unit`, the unit every time is in (ms, or passes under the unit cost). Readers
look fields up by these names, never by a position they know themselves.

Units: "time" = the result's unit; "pass" = a 1-based pass index; anything else is literal.
"""

# (name, unit, description)
REQUEST = [
    ("id", None, "request id: its rank in arrival order"),
    ("arrive", "time", "arrival"),
    ("prompt", "tokens", "prompt length"),
    ("out", "tokens", "output length"),
    ("admit", "time", "first admitted to a slot"),
    ("first_token", "time", "first token emitted"),
    ("last_token", "time", "last token emitted"),
    ("done", "time", "slot freed (static: the group's end; otherwise the last token)"),
    ("admit_pass", "pass", "pass of the first admission"),
    ("first_token_pass", "pass", "pass that emitted the first token"),
    ("done_pass", "pass", "pass after which the slot was freed"),
    ("ttft", "time", "first_token - arrive"),
    ("tpot", "time", "(last_token - first_token) / (out - 1); 0 when out = 1"),
    ("e2e", "time", "done - arrive"),
    ("preemptions", None, "times the request lost its slot"),
    ("cached_tokens", "tokens", "prompt tokens served from the prefix cache at first admission"),
]

# segments: [slot, request, phase, first_pass, last_pass]; 1-based inclusive passes; request -1 =
# an empty row of a short static group; a slot with no segment covering a pass is idle then.
SEGMENT = [
    ("slot", None, "0-based slot"),
    ("request", None, "request id, or -1 for an empty row of a static group"),
    ("phase", None, "one of PHASES"),
    ("first_pass", "pass", "first pass of the segment"),
    ("last_pass", "pass", "last pass of the segment (inclusive)"),
]
PHASES = ["prefill", "useful", "padding"]

# passes_log: one entry per run of identical passes, in order; run i covers passes
# sum(count[:i]) + 1 .. sum(count[:i+1]) and starts at start[i].
PASSES_LOG = [
    ("count", "passes", "passes in the run"),
    ("start", "time", "start time of the run's first pass"),
    ("rows", "rows", "rows computed per pass (idle slots excluded)"),
    ("prefill_tokens", "tokens", "prefill tokens per pass"),
    ("cost", "time", "cost of the run's first pass"),
    ("useful", "tokens", "tokens emitted per pass"),
    ("kv_tokens", "tokens", "KV-cache occupancy at the end of the run (its peak)"),
    ("cost_last", "time", "cost of the run's last pass (the roofline cost grows pass by pass "
                          "as contexts grow; otherwise = cost)"),
]


def names(layout):
    return [name for name, _, _ in layout]


def layouts():
    def d(layout):
        return [{"name": n, "unit": u, "description": t} for n, u, t in layout]
    return {"request": d(REQUEST), "segment": d(SEGMENT), "phases": list(PHASES),
            "passes_log": d(PASSES_LOG)}


def schedulers():
    """[{name, label, summary, base}] of every registered policy, in display order. The base
    schedulers are always compared (the speedup is static over continuous); the others are lanes a
    reader adds (URL `<name>=1`)."""
    from .policies import REGISTRY, scheduler_names
    return [{"name": n, "label": REGISTRY[n].label, "summary": REGISTRY[n].summary,
             "base": REGISTRY[n].base} for n in scheduler_names()]
