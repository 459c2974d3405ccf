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
    ("replica", None, "the fleet's replica that served it (0: a single server)"),
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

# kv_blocks (the vllm policy's paged pool, for the block view; None for the other policies):
# {block_size, total (usable blocks, None = unlimited), stride (passes between samples at most),
#  samples: columns KV_SAMPLE, holders: columns KV_HOLDER}; sample i owns the next holders[i]
# holder rows. At most blocks.SAMPLE_CAP samples (and HOLDER_CAP holders), so the document stays small at any run length.
KV_SAMPLE = [
    ("pass", "pass", "the pass sampled: the pool right after its step was scheduled"),
    ("used", "blocks", "blocks in use (a block shared by several requests counts once)"),
    ("cached_free", "blocks", "free blocks that still hold a cached prefix (a hit reuses them)"),
    ("free", "blocks", "free blocks, the cached ones included (null: an unlimited pool)"),
    ("holders", None, "holder rows of this sample"),
]
KV_HOLDER = [
    ("request", None, "a running request"),
    ("slot", None, "its slot (the timeline's row)"),
    ("blocks", "blocks", "its block table's length (a shared prefix block is in every table "
                         "holding it)"),
]


def names(layout):
    return [name for name, _, _ in layout]


def layouts():
    def d(layout):
        return [{"name": n, "unit": u, "description": t} for n, u, t in layout]
    return {"request": d(REQUEST), "segment": d(SEGMENT), "phases": list(PHASES),
            "passes_log": d(PASSES_LOG), "kv_sample": d(KV_SAMPLE), "kv_holder": d(KV_HOLDER)}
