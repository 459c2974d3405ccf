"""Command line: python -m py_engine run | compare | sweep | check | bench | kv  [--json].

Scenario flags map to scenario fields (see `python -m py_engine run --help`); `--scenario` takes a
JSON object or a path to a JSON file, `--trace` a JSONL or CSV file of {arrive, prompt, out}.
Flags override the --scenario file. A bad input prints one line and exits 2.
"""

import argparse
import csv
import json
import sys

from .scenario import ScenarioError

FLAGS = [  # flag, dotted scenario path
    ("scheduler", "scheduler"), ("requests", "workload.requests"), ("seed", "workload.seed"),
    ("skew", "workload.skew"), ("output-mean", "workload.output_mean"),
    ("prompt-mean", "workload.prompt_mean"), ("arrival", "workload.arrival.kind"),
    ("rate", "workload.arrival.rate"), ("every", "workload.arrival.every"),
    ("slots", "server.slots"), ("chunk", "server.chunk"), ("cost", "server.cost"),
    ("max-num-batched-tokens", "server.max_num_batched_tokens"),
    ("block-size", "server.block_size"), ("kv-tokens", "server.kv_tokens"),
    ("preemption", "server.preemption"), ("ttft-ms", "slo.ttft_ms"), ("tbt-ms", "slo.tbt_ms"),
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own format is multi-line)
        sys.stderr.write("error: %s\n" % message)
        sys.exit(2)


def _value(text):
    """Numbers as numbers, everything else as text: the scenario validator names bad values."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"null": None, "true": True, "false": False}.get(text, text)


def _read_trace(path):
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as e:
        raise ScenarioError("trace", path, "a readable JSONL or CSV file",
                            "trace = %s: cannot read (%s)" % (path, e.strerror))
    items = []
    if path.endswith(".csv"):
        for i, row in enumerate(csv.DictReader(text.splitlines())):
            items.append({k: _value(v.strip()) for k, v in row.items() if k is not None})
    else:
        for i, line in enumerate(text.splitlines()):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except ValueError:
                    raise ScenarioError("trace", "%s line %d" % (path, i + 1),
                                        "one JSON object per line",
                                        "trace %s line %d: not JSON" % (path, i + 1))
    return items


def scenario_from_args(args):
    sc = {}
    if args.scenario:
        src = args.scenario
        try:
            if src.lstrip().startswith("{"):
                sc = json.loads(src)
            else:
                with open(src) as f:
                    sc = json.load(f)
        except (OSError, ValueError) as e:
            raise ScenarioError("scenario", src[:40], "a JSON object or a JSON file",
                                "scenario: cannot read %s (%s)" % (src[:40], e))
    from .api import set_field
    for flag, path in FLAGS:
        v = getattr(args, flag.replace("-", "_"), None)
        if v is not None:
            set_field(sc, path, _value(v))  # replaces a non-object on the way (e.g. arrival: "burst")
    if args.trace:
        set_field(sc, "workload.items", _read_trace(args.trace))
    return sc


def _fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        return ("{:,.%df}" % digits).format(x)
    return "{:,}".format(x)


ROWS = [("passes", "passes", 0), ("makespan", "makespan", 1), ("utilization", "utilization", 3),
        ("useful share", "shares.useful", 3), ("prefill share", "shares.prefill", 3),
        ("padding share", "shares.padding", 3), ("idle share", "shares.idle", 3),
        ("output tokens", "output_tokens", 0), ("throughput tok/s", "throughput_tok_s", 1),
        ("TTFT p50", "ttft.p50", 1), ("TTFT p95", "ttft.p95", 1), ("TTFT p99", "ttft.p99", 1),
        ("TBT p50", "tbt.p50", 2), ("TBT p95", "tbt.p95", 2), ("TBT p99", "tbt.p99", 2),
        ("E2E p50", "e2e.p50", 1), ("E2E p95", "e2e.p95", 1), ("E2E p99", "e2e.p99", 1),
        ("goodput req/s", "goodput_rps", 3), ("SLO attainment", "slo_attainment", 3),
        ("preemptions", "preemptions", 0), ("KV peak tokens", "kv_peak_tokens", 0)]


def _get(m, dotted):
    for p in dotted.split("."):
        m = m[p]
    return m


# vllm's additive counters, shown when a result has them
EXTRA_ROWS = [("recomputed tokens", "recomputed_tokens", 0),
              ("swap blocks out", "swap_out_blocks", 0), ("swap blocks in", "swap_in_blocks", 0),
              ("swap time", "swap_ms", 2)]


def metrics_table(results):
    names = list(results)
    width = max(12, *(len(n) for n in names))
    lines = ["%-18s" % "" + "".join(("%" + str(width + 2) + "s") % n for n in names)]
    extra = [row for row in EXTRA_ROWS if any(row[1] in results[n]["metrics"] for n in names)]
    for label, path, digits in ROWS + extra:
        cells = []
        for n in names:
            m = results[n]["metrics"]
            v = m.get(path) if (label, path, digits) in extra else _get(m, path)
            cells.append(("%" + str(width + 2) + "s") % _fmt(v, digits if isinstance(v, float)
                                                             else 0))
        lines.append("%-18s" % label + "".join(cells))
    return "\n".join(lines)


def _describe(sc):
    w, s = sc["workload"], sc["server"]
    src = ("%d explicit requests" % w["requests"] if w["items"] is not None else
           "%d requests, seed %d, skew %s, arrival %s" % (w["requests"], w["seed"], w["skew"],
                                                          w["arrival"]["kind"]))
    cost = s["cost"] if isinstance(s["cost"], str) else "custom"
    unit = "passes" if s["cost"] == "unit" else "ms"
    return "%s; %d slots, chunk %d, cost %s (times in %s)" % (src, s["slots"], s["chunk"], cost,
                                                               unit)


KV_FLAGS = [("model", "model"), ("gpu", "gpu"), ("dtype", "dtype"), ("kv-dtype", "kv_dtype"),
            ("layers", "layers"), ("kv-heads", "kv_heads"), ("head-dim", "head_dim"),
            ("params", "params"), ("weight-bytes", "weight_bytes"), ("gpu-bytes", "gpu_bytes"),
            ("gpus", "gpus"), ("util", "gpu_mem_utilization"), ("context", "context_len")]


def _kv_cmd(args):
    from . import kv
    if args.presets:
        p = kv.presets()
        if args.json:
            print(json.dumps(p, indent=1))
            return 0
        print("%-14s %-18s %7s %8s %8s %16s %12s" % ("model", "", "layers", "kv_heads", "head_dim",
                                                   "params", "KV B/token"))
        for k, m in p["models"].items():
            print("%-14s %-18s %7d %8d %8d %16s %12s" % (
                k, m["label"], m["layers"], m["kv_heads"], m["head_dim"], _fmt(m["params"]),
                _fmt(kv.kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"]))))
        print()
        for k, g in p["gpus"].items():
            print("%-14s %-18s %18s B" % (k, g["label"], _fmt(g["gpu_bytes"])))
        print("\ndtypes: " + ", ".join("%s = %d B" % kv_ for kv_ in p["dtypes"].items()))
        return 0
    params = {key: _value(getattr(args, flag.replace("-", "_")))
              for flag, key in KV_FLAGS if getattr(args, flag.replace("-", "_")) is not None}
    r = kv.kv_from_params(params)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    name = r["model"] or ("the article's example" if not params else "custom model")
    print("%s: %d layers x %d KV heads x head dim %d, KV in %s" % (
        name, r["layers"], r["kv_heads"], r["head_dim"], r["kv_dtype"]))
    rows = [("KV bytes per token", "%s B (%.1f KiB) = 2 x %d x %d x %d x %d" % (
                _fmt(r["bytes_per_token"]), r["bytes_per_token"] / 1024, r["layers"],
                r["kv_heads"], r["head_dim"], r["kv_dtype_bytes"])),
            ("GPU memory", "%s B x %d GPU(s) (%s)" % (_fmt(r["gpu_bytes"]), r["gpus"],
                                                     r["gpu"] or "given")),
            ("memory utilization", repr(r["gpu_mem_utilization"])),
            ("weights", "%s B%s" % (_fmt(r["weight_bytes"]), "" if r["params"] is None else
                                    " (%s params in %s)" % (_fmt(r["params"]), r["dtype"]))),
            ("KV pool", "%s B" % _fmt(r["kv_pool_bytes"])),
            ("tokens that fit", _fmt(r["tokens"])),
            ("sequences of %s" % _fmt(r["context_len"]), _fmt(r["sequences"]))]
    for label, text in rows:
        print("  %-22s %s" % (label, text))
    if not r["fits"]:
        print("  the weights alone do not fit: add GPUs (--gpus) or use a smaller dtype")
    return 0


def slo_table(r, name):
    """One scheduler across a sweep: throughput, tail latency, goodput, and the SLO verdict."""
    slo = r["slo"]
    lines = ["%-10s %12s %11s %9s %10s %9s %8s %6s" % (
        r["param"], "tok/s", "TTFT p95", "TBT p95", "goodput/s", "SLO att.", "preempt", "SLO")]
    for pt in r["points"]:
        m = pt[name]
        lines.append("%-10s %12s %11s %9s %10s %9s %8s %6s" % (
            pt["value"], _fmt(m["throughput_tok_s"], 1), _fmt(m["ttft"]["p95"], 1),
            _fmt(m["tbt"]["p95"], 2), _fmt(m["goodput_rps"], 3), _fmt(m["slo_attainment"], 3),
            _fmt(m["preemptions"]), "meets" if m["meets_slo"] else "-"))
    best, low = r["best"][name], r["lowest"][name]
    if low is not None and low != best:
        lines.append("%s: smallest %s meeting the SLO: %s" % (name, r["param"], low))
    lines.append("%s: largest %s meeting p95 TTFT <= %g and p95 TBT <= %g: %s" % (
        name, r["param"], slo["ttft_ms"], slo["tbt_ms"], "none" if best is None else best))
    return "\n".join(lines)


def main(argv=None):
    p = _Parser(prog="python -m py_engine", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    def scenario_cmd(name, help_):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--scenario", help="JSON object or JSON file")
        sp.add_argument("--trace", help="JSONL or CSV file of {arrive, prompt, out}")
        for flag, path in FLAGS:
            sp.add_argument("--" + flag, metavar="V", help=path)
        sp.add_argument("--json", action="store_true", help="print the full JSON result")
        return sp

    scenario_cmd("run", "simulate one scheduler")
    scenario_cmd("compare", "static vs continuous on the same trace")
    sw = scenario_cmd("sweep", "speedup across values of one parameter")
    sw.add_argument("--param", default="skew")
    sw.add_argument("--values", default="0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    ck = sub.add_parser("check", help="self-verification: engine vs the article's references")
    ck.add_argument("--full", action="store_true", help="many more random traces")
    ck.add_argument("--json", action="store_true")
    kvp = sub.add_parser("kv", help="KV-cache capacity: bytes per token, tokens and sequences "
                                    "that fit (no flags: the article's example)")
    for flag, _ in KV_FLAGS:
        kvp.add_argument("--" + flag, metavar="V")
    kvp.add_argument("--presets", action="store_true", help="list model and GPU presets")
    kvp.add_argument("--json", action="store_true")
    bn = sub.add_parser("bench", help="event-driven engine vs step loop; 1M requests")
    bn.add_argument("--quick", action="store_true", help="smaller sizes")
    args = p.parse_args(argv)

    from . import api
    try:
        if args.cmd == "check":
            from . import check
            r = check.run(quick=not args.full)
            if args.json:
                print(json.dumps(r, indent=1))
            else:
                for c in r["checks"]:
                    if not c["ok"]:
                        print("FAIL %s: %s" % (c["name"], c["detail"]))
                print("%d passed, %d failed" % (r["passed"], r["failed"]))
            return 1 if r["failed"] else 0
        if args.cmd == "kv":
            return _kv_cmd(args)
        if args.cmd == "bench":
            from . import bench
            bench.main(quick=args.quick)
            return 0
        sc = scenario_from_args(args)
        if args.cmd == "run":
            r = api.simulate(sc)
            results = {r["scheduler"]: r}
            extra = ""
        elif args.cmd == "compare":
            schedulers = ("static", "continuous")
            if sc.get("scheduler") not in (None, "static", "continuous"):
                schedulers = schedulers + (sc["scheduler"],)
            sc.pop("scheduler", None)
            r = api.compare(sc, schedulers)
            results = {k: v for k, v in r.items() if k != "speedup"}
            extra = "speedup (static / continuous): passes x%.3f, time x%.3f" % (
                r["speedup"]["passes"], r["speedup"]["time"])
        else:
            values = [_value(v.strip()) for v in args.values.split(",") if v.strip()]
            name = sc.pop("scheduler", None)  # --scheduler X: sweep X alone, sized to the SLO
            r = api.sweep(sc, args.param, values, (name,) if name else ("static", "continuous"))
            if args.json:
                print(json.dumps(r, indent=1, allow_nan=False))
                return 0
            if name:
                print(slo_table(r, name))
                return 0
            print("%-10s %10s %10s %10s %10s %8s %8s" % (args.param, "speedup", "time x",
                                                         "static u", "cont. u", "static",
                                                         "cont."))
            for pt in r["points"]:
                print("%-10s %10.3f %10.3f %10.3f %10.3f %8d %8d" % (
                    pt["value"], pt["speedup"]["passes"], pt["speedup"]["time"],
                    pt["static"]["utilization"], pt["continuous"]["utilization"],
                    pt["static"]["passes"], pt["continuous"]["passes"]))
            return 0
        if args.json:
            print(json.dumps(r, allow_nan=False))
            return 0
        first = next(iter(results.values()))
        print(_describe(first["scenario"]))
        print(metrics_table(results))
        if extra:
            print(extra)
        return 0
    except ScenarioError as e:
        sys.stderr.write("error: %s\n" % e.message)
        return 2


if __name__ == "__main__":
    sys.exit(main())
