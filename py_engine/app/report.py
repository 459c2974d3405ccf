"""Plain-text tables for the command line: results, sweeps, KV capacity, the self-check.

Scenario fields are read from the field table and metrics by their result paths, so this module
names no scenario field itself.
"""

from ..scenario import fields
from ..model.cost import cost_unit
from ..model.kv import kv_bytes_per_token


def fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        return ("{:,.%df}" % digits).format(x)
    return "{:,}".format(x)


def _get(m, dotted):
    for p in dotted.split("."):
        if not isinstance(m, dict) or p not in m:
            return None
        m = m[p]
    return m


def describe(scenario, skip=()):
    """One line: the fields that differ from their defaults (the rest is the default scenario),
    but the paths in `skip`."""
    parts = []
    explicit = _get(scenario, "workload.items") is not None
    for f in fields.FIELDS:
        if f.type == "items" or f.parent == "server.cost":
            continue
        if explicit and f.parent.startswith("workload"):
            continue
        v = _get(scenario, f.path)
        if f.path == "custom.code" or v == {} or f.path in skip:
            continue      # the code is in its file; no pool overrides
        if isinstance(v, dict):
            v = "custom"
        if v is not None and v != f.default:
            parts.append("%s=%s" % (f.url, v))
    head = ("%d explicit requests; " % len(scenario["workload"]["items"])) if explicit else ""
    return "%s%s (times in %s)" % (head, ", ".join(parts) or "the default scenario",
                                   "passes" if cost_unit(scenario) == "pass" else "ms")


ROWS = [("passes", "passes", 0), ("makespan", "makespan", 1), ("utilization", "utilization", 3),
        ("useful share", "shares.useful", 3), ("prefill share", "shares.prefill", 3),
        ("padding share", "shares.padding", 3), ("idle share", "shares.idle", 3),
        ("output tokens", "output_tokens", 0), ("throughput tok/s", "throughput_tok_s", 1),
        ("TTFT p50", "ttft.p50", 1), ("TTFT p95", "ttft.p95", 1), ("TTFT p99", "ttft.p99", 1),
        ("TPOT p50", "tpot.p50", 2), ("TPOT p95", "tpot.p95", 2), ("TPOT mean", "tpot.mean", 2),
        ("ITL p50", "itl.p50", 2), ("ITL p95", "itl.p95", 2), ("ITL p99", "itl.p99", 2),
        ("E2E p50", "e2e.p50", 1), ("E2E p95", "e2e.p95", 1), ("E2E p99", "e2e.p99", 1),
        ("goodput req/s", "goodput_rps", 3), ("SLO attainment", "slo_attainment", 3),
        ("preemptions", "preemptions", 0), ("KV peak tokens", "kv_peak_tokens", 0),
        ("prefix hit rate", "prefix_hit_rate", 3)]
# policy counters (vllm: swap / recompute), shown when a result has them
EXTRA_ROWS = [("recomputed tokens", "recomputed_tokens", 0),
              ("swap blocks out", "swap_out_blocks", 0), ("swap blocks in", "swap_in_blocks", 0),
              ("swap time", "swap_ms", 2)]


def metrics_table(results):
    names = list(results)
    width = max(12, *(len(n) for n in names))
    col = "%" + str(width + 2) + "s"
    lines = ["%-18s" % "" + "".join(col % n for n in names)]
    extra = [row for row in EXTRA_ROWS if any(row[1] in results[n]["metrics"] for n in names)]
    for label, path, digits in ROWS + extra:
        cells = []
        for n in names:
            v = _get(results[n]["metrics"], path)
            cells.append(col % fmt(v, digits if isinstance(v, float) else 0))
        lines.append("%-18s" % label + "".join(cells))
    return "\n".join(lines)


def results(results, speedup=None):
    first = next(iter(results.values()))
    # several schedulers: the columns name them (the first one's run was no setting of the reader's)
    lines = [describe(first["scenario"], ("scheduler",) if len(results) > 1 else ()),
             metrics_table(results),
             "SLO: " + slo_rule(first["scenario"]["slo"])]
    lines += ["  %-12s %s" % (n, slo_line(r["metrics"])) for n, r in results.items()]
    if speedup:
        lines.append("speedup (static / continuous): passes x%.3f, time x%.3f" % (
            speedup["passes"], speedup["time"]))
    for n, r in results.items():
        if "replicas" in r:
            lines.append(fleet_table(n, r))
    return "\n".join(lines)


def fleet_table(name, r):
    """A fleet's replicas, one line each, and what its router decided."""
    rt = r["router"]
    lines = ["%s: %d replicas behind %s; decisions: %s; prefix tokens held at routing %s, "
             "forgone (held by another replica) %s" % (
                 name, len(r["replicas"]), rt["kind"],
                 ", ".join("%s %d" % kv for kv in rt["decisions"].items()),
                 "{:,}".format(rt["prefix_tokens_held"]),
                 "{:,}".format(rt["prefix_tokens_forgone"])),
             "  %-8s %9s %12s %12s %12s %10s %10s" % ("replica", "requests", "tok/s",
                                                      "TTFT p95", "TPOT p95", "KV peak",
                                                      "hit rate")]
    for rep in r["replicas"]:
        m = rep["metrics"] or {}
        lines.append("  %-8d %9d %12s %12s %12s %10s %10s" % (
            rep["replica"], rep["requests"], fmt(m.get("throughput_tok_s"), 1),
            fmt(_get(m, "ttft.p95"), 1), fmt(_get(m, "tpot.p95"), 2),
            fmt(m.get("kv_peak_tokens"), 0), fmt(m.get("prefix_hit_rate"), 3)))
    return "\n".join(lines)


def speedup_table(r):
    lines = ["%-10s %10s %10s %10s %10s %8s %8s" % (r["param"], "speedup", "time x", "static u",
                                                    "cont. u", "static", "cont.")]
    for pt in r["points"]:
        lines.append("%-10s %10.3f %10.3f %10.3f %10.3f %8d %8d" % (
            pt["value"], pt["speedup"]["passes"], pt["speedup"]["time"],
            pt["static"]["utilization"], pt["continuous"]["utilization"],
            pt["static"]["passes"], pt["continuous"]["passes"]))
    return "\n".join(lines)


def slo_rule(slo):
    """The SLO in words: '>= 90% of requests within TTFT <= 2000 ms and TPOT <= 100 ms'."""
    limits = " and ".join("%s <= %g" % (f.label.replace(" limit", ""), slo[f.leaf])
                          for f in fields.children("slo")
                          if f.leaf.endswith("_ms") and slo.get(f.leaf) is not None)
    return ">= %g%% of requests within %s" % (slo["attainment"] * 100, limits or "no limit")


def slo_line(m):
    """A run's verdict: 'meets' or 'fails: TTFT (62% within)'."""
    v = m["slo"]
    if v["meets"]:
        return "meets (%.1f%%)" % (v["attainment"] * 100)
    label = {f.leaf: f.label.replace(" limit", "") for f in fields.children("slo")}
    why = ["%s (%.1f%% within)" % (label[k], v["limits"][k] * 100) for k in v["failing"]
           if k in label] or ["the limits together (%.1f%%)" % (v["attainment"] * 100)]
    return "fails: " + ", ".join(why)


def slo_table(r, name):
    """One scheduler across a sweep: throughput, tail latency, goodput, and the SLO verdict."""
    lines = ["%-10s %12s %11s %9s %10s %9s %8s  %s" % (
        r["param"], "tok/s", "TTFT p95", "TPOT p95", "goodput/s", "SLO att.", "preempt", "SLO")]
    for pt in r["points"]:
        m = pt[name]
        lines.append("%-10s %12s %11s %9s %10s %9s %8s  %s" % (
            pt["value"], fmt(m["throughput_tok_s"], 1), fmt(m["ttft"]["p95"], 1),
            fmt(m["tpot"]["p95"], 2), fmt(m["goodput_rps"], 3), fmt(m["slo_attainment"], 3),
            fmt(m["preemptions"]), slo_line(m)))
    best, low = r["best"][name], r["lowest"][name]
    if low is not None and low != best:
        lines.append("%s: smallest %s meeting the SLO: %s" % (name, r["param"], low))
    lines.append("%s: largest %s meeting the SLO (%s): %s" % (
        name, r["param"], slo_rule(r["slo"]), "none" if best is None else best))
    rec = (r.get("recommendation") or {}).get(name)
    if rec is not None:       # what the page's sizing panel says: the setting to use, and why
        lines.append("%s: recommended: %s" % (name, rec["text"]))
        if rec["load"]:
            lines.append("%s: %s" % (name, rec["load"]))
    return "\n".join(lines)


def checks(r):
    lines = ["FAIL %s: %s" % (c["name"], c["detail"]) for c in r["checks"] if not c["ok"]]
    lines.append("%d passed, %d failed" % (r["passed"], r["failed"]))
    return "\n".join(lines)


def papers(rows):
    """python -m py_engine papers: one block per check, the verdict first, then the tally."""
    lines = []
    for c in rows:
        lines.append("%s  %s  (%s)" % ("PASS" if c["pass"] else "FAIL", c["id"], c["paper"]))
        lines.append("      source     %s" % c["source"])
        lines.append("      workload   %s" % c["workload"])
        lines.append("      claim      %s" % c["claim"])
        lines.append("      published  %s" % c["published"])
        lines.append("      ours       %s" % c["ours"])
        lines.append("      tolerance  %s" % c["tolerance"])
        if c["why"]:
            lines.append("      why        %s" % c["why"])
    lines.append("%d of %d checks pass" % (sum(c["pass"] for c in rows), len(rows)))
    return "\n".join(lines)


def kv_presets(p):
    lines = ["%-14s %-18s %7s %8s %8s %16s %12s" % ("model", "", "layers", "kv_heads", "head_dim",
                                                     "params", "KV B/token")]
    for k, m in p["models"].items():
        lines.append("%-14s %-18s %7d %8d %8d %16s %12s" % (
            k, m["label"], m["layers"], m["kv_heads"], m["head_dim"], fmt(m["params"]),
            fmt(kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"]))))
    lines.append("")
    for k, g in p["gpus"].items():
        lines.append("%-14s %-18s %18s B" % (k, g["label"], fmt(g["gpu_bytes"])))
    lines.append("\ndtypes: " + ", ".join("%s = %d B" % kv_ for kv_ in p["dtypes"].items()))
    return "\n".join(lines)


def kv_capacity(r, asked):
    name = r["model"] or ("custom model" if asked else "the article's example")
    lines = ["%s: %d layers x %d KV heads x head dim %d, KV in %s" % (
        name, r["layers"], r["kv_heads"], r["head_dim"], r["kv_dtype"])]
    rows = [("KV bytes per token", "%s B (%.1f KiB) = 2 x %d x %d x %d x %d" % (
                fmt(r["bytes_per_token"]), r["bytes_per_token"] / 1024, r["layers"],
                r["kv_heads"], r["head_dim"], r["kv_dtype_bytes"])),
            ("GPU memory", "%s B x %d GPU(s) (%s)" % (fmt(r["gpu_bytes"]), r["gpus"],
                                                     r["gpu"] or "given")),
            ("memory utilization", repr(r["gpu_mem_utilization"])),
            ("weights", "%s B%s" % (fmt(r["weight_bytes"]), "" if r["params"] is None else
                                    " (%s params in %s)" % (fmt(r["params"]), r["dtype"]))),
            ("KV pool", "%s B" % fmt(r["kv_pool_bytes"])),
            ("tokens that fit", fmt(r["tokens"])),
            ("sequences of %s" % fmt(r["context_len"]), fmt(r["sequences"]))]
    lines += ["  %-22s %s" % row for row in rows]
    if not r["fits"]:
        lines.append("  the weights alone do not fit: add GPUs (--gpus) or use a smaller dtype")
    return "\n".join(lines)


def plan(r):
    """The planner's candidates, best first, and its verdict."""
    cap = r["capacity"]
    lines = ["%d GPUs, %d candidates, ranked by goodput per GPU %s" % (
        r["gpus"], len(r["candidates"]), "at each one's capacity (the highest load meeting the "
        "SLO)" if cap else "at the scenario's load"),
        "  %-34s %5s %10s %8s %9s %9s %9s%s" % ("candidate", "GPUs", "good/GPU", "SLO",
                                               "TTFT p95", "TPOT p95", "ITL p99",
                                               " %10s" % "capacity" if cap else "")]
    for c in r["candidates"]:
        if c["kind"] == "colocated":
            name = "colocated %d x TP%d" % (c["replicas"], c["tp"])
        else:
            name = "P/D %d x TP%d : %d x TP%d" % (c["prefill"]["replicas"], c["prefill"]["tp"],
                                                 c["decode"]["replicas"], c["decode"]["tp"])
        lines.append("  %-34s %5d %10.3f %8s %9s %9s %9s%s" % (
            name, c["gpus"], c["goodput_per_gpu"], "meets" if c["meets_slo"] else "fails",
            fmt(c["ttft_p95"], 0), fmt(c["tpot_p95"], 1), fmt(c["itl_p99"], 1),
            " %10s" % fmt(c.get("capacity_rps"), 2) if cap else ""))
    lines.append("recommended: " + r["reason"])
    return "\n".join(lines)
