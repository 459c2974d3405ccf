"""Command line: python -m py_engine run | compare | sweep | check | validate | bench | kv  [--json].

Every scenario field is a flag (`--<flag>` from the field table, fields.py; see `run --help`);
`--scenario` takes a JSON object or a path to a JSON file; `--trace` a production trace's name or
a JSONL or CSV file of {arrive, prompt, out[, prefix_id, prefix_len, priority]}. Flags override
the --scenario file. A bad input prints one line and exits 2.
"""

import argparse
import csv
import json
import sys

from . import fields, report
from .errors import ScenarioError


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


def _flag(text):
    """A boolean flag as the page reads it: 1/true/yes/on or 0/false/no/off, any case."""
    t = text.strip().lower()
    return True if t in ("1", "true", "yes", "on") else False if t in (
        "0", "false", "no", "off") else text


def _read_trace(path):
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as e:
        raise ScenarioError("trace", path, "a readable JSONL or CSV file",
                            "trace = %s: cannot read (%s)" % (path, e.strerror))
    items = []
    if path.endswith(".csv"):
        for row in csv.DictReader(text.splitlines()):
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


CLI_FIELDS = [f for f in fields.FIELDS if f.type != "items"]


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
    trace = fields.BY_PATH["workload.trace.name"]
    for f in CLI_FIELDS:
        v = getattr(args, f.flag.replace("-", "_"), None)
        if f is trace and v is not None and v not in trace.choices:
            # --trace FILE: the user's own trace (JSONL or CSV), not a named one
            set_field(sc, "workload.items", _read_trace(v))
            continue
        if v is not None:
            v = _flag(v) if f.type == "bool" else _value(v)
            if f.type == "cost" and v in f.object_choices:
                v = {"kind": v}       # an object form: its fields come as their own flags
            set_field(sc, f.path, v)  # replaces a non-object on the way (arrival: "burst")
    return sc


def _kv_cmd(args):
    from . import kv
    if args.presets:
        p = kv.presets()
        print(json.dumps(p, indent=1) if args.json else report.kv_presets(p))
        return 0
    params = {name: _value(getattr(args, flag.replace("-", "_")))
              for name, flag in kv.KV_PARAMS if getattr(args, flag.replace("-", "_")) is not None}
    r = kv.kv_from_params(params)
    print(json.dumps(r, indent=1) if args.json else report.kv_capacity(r, bool(params)))
    return 0


def _parser():
    from .kv import KV_PARAMS
    p = _Parser(prog="python -m py_engine", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    def scenario_cmd(name, help_):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--scenario", help="JSON object or JSON file")
        for f in CLI_FIELDS:
            sp.add_argument("--" + f.flag, *("--" + a.replace("_", "-") for a in f.aliases),
                            dest=f.flag.replace("-", "_"), metavar="V",
                            help="%s (%s)" % (f.path, f.description))
        sp.add_argument("--json", action="store_true", help="print the full JSON result")
        return sp

    scenario_cmd("run", "simulate one scheduler")
    scenario_cmd("compare", "static vs continuous on the same trace")
    sw = scenario_cmd("sweep", "speedup across values of one parameter")
    # default: the page's speedup sweep (the article's skew figure)
    from .figures import FIGURES
    default = FIGURES["skew"]["sweep"]
    sw.add_argument("--param", default=fields.BY_PATH[default["param"]].url,
                    help="one of " + ", ".join(fields.SWEEPS))
    sw.add_argument("--values", default=",".join(map(str, default["values"])))
    vp = sub.add_parser("validate", help="the roofline cost model vs public measurements")
    vp.add_argument("--json", action="store_true")
    ck = sub.add_parser("check", help="self-verification: engine vs the article's references")
    ck.add_argument("--full", action="store_true", help="many more random traces")
    ck.add_argument("--json", action="store_true")
    kvp = sub.add_parser("kv", help="KV-cache capacity: bytes per token, tokens and sequences "
                                    "that fit (no flags: the article's example)")
    for _, flag in KV_PARAMS:
        kvp.add_argument("--" + flag, metavar="V")
    kvp.add_argument("--presets", action="store_true", help="list model and GPU presets")
    kvp.add_argument("--json", action="store_true")
    bn = sub.add_parser("bench", help="event-driven engine vs step loop; 1M requests")
    bn.add_argument("--quick", action="store_true", help="smaller sizes")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    from . import api
    try:
        if args.cmd == "validate":
            from . import validate
            r = validate.run()
            print(json.dumps(r, indent=1) if args.json else validate.report(r))
            return 0
        if args.cmd == "check":
            from .verify import check
            r = check.run(quick=not args.full)
            print(json.dumps(r, indent=1) if args.json else report.checks(r))
            return 1 if r["failed"] else 0
        if args.cmd == "kv":
            return _kv_cmd(args)
        if args.cmd == "bench":
            from . import bench
            bench.main(quick=args.quick)
            return 0
        sc = scenario_from_args(args)
        if args.cmd == "sweep":
            values = [_value(v.strip()) for v in args.values.split(",") if v.strip()]
            name = sc.pop("scheduler", None)  # --scheduler X: sweep X alone, sized to the SLO
            r = api.sweep(sc, args.param, values, (name,) if name else ("static", "continuous"))
            if args.json:
                print(json.dumps(r, indent=1, allow_nan=False))
            else:
                print(report.slo_table(r, name) if name else report.speedup_table(r))
            return 0
        if args.cmd == "run":
            r = api.simulate(sc)
            results = {r["scheduler"]: r}
        else:
            schedulers = ("static", "continuous")
            if sc.get("scheduler") not in (None, "static", "continuous"):
                schedulers = schedulers + (sc["scheduler"],)
            sc.pop("scheduler", None)
            r = api.compare(sc, schedulers)
            results = {k: v for k, v in r.items() if k != "speedup"}
        if args.json:
            print(json.dumps(r, allow_nan=False))
        else:
            print(report.results(results, r.get("speedup") if args.cmd == "compare" else None))
        return 0
    except ScenarioError as e:
        sys.stderr.write("error: %s\n" % e.message)
        return 2


if __name__ == "__main__":
    sys.exit(main())
