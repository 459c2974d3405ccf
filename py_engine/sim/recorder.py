"""What a run leaves behind: occupancy segments, the run-length passes log and the TBT gaps.

The core (`core.Sim`) calls these as events happen; results are read from here (api.py, metrics.py).
Output is capped (seg_cap, log_cap) so a huge run cannot produce a huge document; the metrics always
cover the whole run because they come from the core's counters, not from these lists.

    segments: (slot, request_id, phase, first_pass, last_pass) rows, layout records.SEGMENT.
        Consecutive passes of one request in one phase form one segment.
    runs: (count, start, rows, prefill_tokens, cost, useful, kv_tokens, cost_last) per run of
        passes, layout records.PASSES_LOG, in integer ticks (api.py converts start/cost). Idle time
        between runs (waiting for an arrival or for a static group to fill) is no pass:
        start[i+1] > start[i] + count[i] * cost[i] there. kv_tokens is the occupancy at the end of
        the run (its peak, since KV only grows inside a run).
    gap_weights: {gap in ticks: number of token gaps}, every gap between two consecutive tokens of
        one request (the pooled inter-token latency samples); gap_lines holds the gaps of runs
        whose passes grow (the roofline cost) as lines (metrics.py counts them exactly).
"""

from . import records

LOG_COLUMNS = tuple(records.names(records.PASSES_LOG))


class Recorder:
    __slots__ = ("segments", "seg_cap", "seg_truncated", "runs", "log_cap", "log_truncated",
                 "n_runs", "gap_weights", "gap_lines", "gap_lines_sum")

    def __init__(self, seg_cap=None, log_cap=None):
        self.segments, self.seg_cap, self.seg_truncated = [], seg_cap, False
        self.runs, self.log_cap, self.log_truncated, self.n_runs = [], log_cap, False, 0
        self.gap_weights = {}
        self.gap_lines = []     # (K, a, b, count, weight): gaps K + ceil((a + b i) / SUB), i < count
        self.gap_lines_sum = 0  # every line's gaps added up (ticks): the core priced each run

    def segment(self, slot, rid, label, first, last):
        if self.seg_cap is not None and len(self.segments) >= self.seg_cap:
            self.seg_truncated = True
            return
        self.segments.append((slot, rid, label, first, last))

    def run(self, count, start, rows, prefill_tokens, cost, useful, kv, cost_last):
        self.n_runs += 1
        if self.log_cap is None or len(self.runs) < self.log_cap:
            self.runs.append((count, start, rows, prefill_tokens, cost, useful, kv, cost_last))
        else:
            self.log_truncated = True

    def gaps(self, gap, count):
        gw = self.gap_weights
        gw[gap] = gw.get(gap, 0) + count

    def gap_line(self, K, a, b, count, weight, span):
        """`weight` gaps of each of the costs K + ceil((a + b i) / SUB), i < count (a run whose
        passes grow: the roofline cost), which add up to `span` ticks."""
        self.gap_lines.append((K, a, b, count, weight))
        self.gap_lines_sum += weight * span

    @property
    def log(self):
        """The passes log as columns (ticks), built from the recorded runs."""
        cols = list(zip(*self.runs)) if self.runs else [()] * len(LOG_COLUMNS)
        return {name: list(col) for name, col in zip(LOG_COLUMNS, cols)}
