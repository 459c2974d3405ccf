"""Command line: python -m py_engine run | compare | sweep | check | validate | papers | bench | kv
[--json].

Every scenario field is a flag (`--<flag>` from the field table, fields.py; see `run --help`);
`--scenario` takes a JSON object or a path to a JSON file; `--trace` a production trace's name or
a JSONL or CSV file of {arrive, prompt, out[, prefix_id, prefix_len, priority]}. Flags override
the --scenario file. A bad input prints one line and exits 2. A sweep runs its points in
parallel (app/parallel.py: --workers N local processes, one per core by default; --ray ADDRESS a
Ray cluster), with the serial answer.
"""

import argparse
import json
import os
import sys

from .. import api, bench
from ..analysis import validate
from ..api import set_field
from ..model import kv
from ..model.kv import KV_PARAMS
from ..policies import base_schedulers
from ..scenario import fields, tracefile
from ..verify import check
from . import papers, parallel, plan, report
from .figures import FIGURES
from ..errors import ScenarioError
from ..sim.work import WORK_CAP


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


def _json_object(path, text):
    """--prefill-server '{"cost": {"tp": 2}}': a JSON object (the scenario validator checks it)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ScenarioError(path, text[:40], "a JSON object of server fields") from None


def _work_cap(text):
    """--max-work N: a positive integer, or 0 for no cap."""
    try:
        n = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        n = -1
    if n < 0 or len(text) > 30:
        raise argparse.ArgumentTypeError("--max-work = %r: must be an integer >= 0 (0 = no cap)"
                                         % text[:30])
    return n or None


def _workers(text):
    """--workers N: an integer from 1 (in series) to parallel.MAX_WORKERS."""
    try:
        n = int(text)
    except ValueError:
        n = text
    try:
        parallel.processes(n)
    except ScenarioError as e:
        raise argparse.ArgumentTypeError(e.message) from None
    return n


def _flag(text):
    """A boolean flag as the page reads it: 1/true/yes/on or 0/false/no/off, any case."""
    t = text.strip().lower()
    return True if t in ("1", "true", "yes", "on") else False if t in (
        "0", "false", "no", "off") else text


def _read_text(what, path):
    """A UTF-8 text file (a byte-order mark is allowed), or a ScenarioError naming it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ScenarioError(what, path, "a readable file",
                            "%s = %s: cannot read (%s)" % (what, path, e.strerror or e))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ScenarioError(what, path, "UTF-8 text", "%s = %s: not UTF-8 text (byte %d)"
                            % (what, path, e.start)) from None


def _read_trace(path):
    """A trace file's requests, by the parser the page uses too (scenario/tracefile.py)."""
    return tracefile.parse(path, _read_text("trace", path))["items"]


# custom.code comes as a file (--policy-file), not as a flag's text
CLI_FIELDS = [f for f in fields.FIELDS if f.type != "items" and f.path != "custom.code"]


def scenario_from_args(args):
    sc = {}
    if args.scenario:
        src = args.scenario
        text = src if src.lstrip().startswith("{") else _read_text("scenario", src)
        try:
            sc = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise ScenarioError("scenario", src[:40], "a JSON object or a JSON file",
                                "scenario: cannot read %s (%s)" % (src[:40], e)) from None
        if not isinstance(sc, dict):
            raise ScenarioError("scenario", src[:40], "a JSON object",
                                "scenario %s: must hold a JSON object, not %s"
                                % (src[:40], type(sc).__name__ if sc is not None else "null"))
    if getattr(args, "policy_file", None):
        # --policy-file FILE.py: the reader's own scheduler (policies/custom.py)
        path = args.policy_file
        sc["scheduler"] = "custom"
        sc["custom"] = {"name": os.path.splitext(os.path.basename(path))[0][:60],
                        "code": _read_text("policy-file", path)}
    trace = fields.BY_PATH["workload.trace.name"]
    for f in CLI_FIELDS:
        v = getattr(args, f.flag.replace("-", "_"), None)
        if f is trace and v is not None and v not in trace.choices:
            # --trace FILE: the user's own trace (JSONL or CSV), not a named one
            set_field(sc, "workload.items", _read_trace(v))
            continue
        if v is not None:
            v = (_flag(v) if f.type == "bool" else _json_object(f.path, v)
                 if f.type == "overrides" else _value(v))
            if f.type == "cost" and v in f.object_choices:
                v = {"kind": v}       # an object form: its fields come as their own flags
            set_field(sc, f.path, v)  # replaces a non-object on the way (arrival: "burst")
    return sc


def _kv_cmd(args):
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
    p = _Parser(prog="python -m py_engine", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    def scenario_cmd(name, help_):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--scenario", help="JSON object or JSON file")
        for f in CLI_FIELDS:
            sp.add_argument("--" + f.flag, *("--" + a.replace("_", "-") for a in f.aliases),
                            dest=f.flag.replace("-", "_"), metavar="V",
                            help="%s (%s)" % (f.path, f.description))
        sp.add_argument("--policy-file", metavar="FILE.py",
                        help="your own scheduler: Python defining one subclass of Policy "
                             "(examples: py_engine/policies/examples/); scheduler = custom")
        sp.add_argument("--json", action="store_true", help="print the full JSON result")
        sp.add_argument("--max-work", type=_work_cap, default=WORK_CAP, metavar="N",
                        help="stop a run after N units of work (py_engine/sim/work.py; default "
                             "{:,}, about 20 s of CPU; 0 = no cap)".format(WORK_CAP))
        return sp

    scenario_cmd("run", "simulate one scheduler")
    scenario_cmd("compare", "static vs continuous on the same trace")
    sw = scenario_cmd("sweep", "speedup across values of one parameter")
    # default: the page's speedup sweep (the article's skew figure)
    default = FIGURES["skew"]["sweep"]
    sw.add_argument("--param", default=fields.BY_PATH[default["param"]].url,
                    help="one of " + ", ".join(fields.SWEEPS))
    sw.add_argument("--values", default=",".join(map(str, default["values"])))
    _where(sw)
    pl = scenario_cmd("plan", "the best way to spend a GPU budget: colocated or "
                              "prefill/decode, ranked by goodput per GPU")
    pl.add_argument("--gpus", type=int, required=True, metavar="N", help="the GPU budget")
    pl.add_argument("--capacity", action="store_true",
                    help="rank each candidate at the highest load meeting the SLO (DistServe's "
                         "goodput), not at the scenario's load")
    _where(pl)
    vp = sub.add_parser("validate", help="the roofline cost model vs public measurements")
    vp.add_argument("--json", action="store_true")
    pp = sub.add_parser("papers", help="published numbers of the field recomputed on the engine, "
                                       "each beside its source, with pass or fail")
    pp.add_argument("--id", action="append", metavar="ID", help="only this check (repeatable): "
                    + ", ".join(papers.BY_ID))
    pp.add_argument("--json", action="store_true")
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


def _where(sp):
    """--workers / --ray: where a command's independent points run."""
    where = sp.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_workers, default=None, metavar="N",
                       help="run the points in N local processes (default: one per core, %d "
                            "here; 1 = in series); the answer is the same"
                            % parallel.default_workers())
    where.add_argument("--ray", metavar="ADDRESS",
                       help="run the points as tasks on a running Ray cluster: auto or host:port "
                            "(needs pip install 'py_engine[ray]'); the answer is the same")


def _executor(args):
    return (parallel.ray(args.ray) if args.ray is not None
            else parallel.processes(args.workers or parallel.default_workers()))


def _one_name_per_field(argv):
    """A field given under its old and its new flag (--tbt-ms and --tpot-ms): refused, as a
    scenario giving both keys is, instead of the last one winning."""
    given = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
    for f in CLI_FIELDS:
        old = [a for a in f.aliases if "--" + a.replace("_", "-") in given]
        if old and "--" + f.flag in given:
            raise ScenarioError(f.path, None, "given once",
                                "--%s and --%s: the same field (%s) under its old and new name; "
                                "give --%s" % (old[0].replace("_", "-"), f.flag, f.path, f.flag))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    try:
        _one_name_per_field(argv)
        if args.cmd == "validate":
            r = validate.run()
            r["served"] = validate.served_run()
            print(json.dumps(r, indent=1) if args.json else
                  validate.report(r) + "\n\n" + validate.served_report(r["served"]))
            return 0
        if args.cmd == "papers":
            r = papers.run(args.id)
            print(json.dumps(r, indent=1, allow_nan=False) if args.json else report.papers(r))
            return 0
        if args.cmd == "check":
            r = check.run(quick=not args.full)
            print(json.dumps(r, indent=1) if args.json else report.checks(r))
            return 1 if r["failed"] else 0
        if args.cmd == "kv":
            return _kv_cmd(args)
        if args.cmd == "bench":
            bench.main(quick=args.quick)
            return 0
        sc = scenario_from_args(args)
        if args.cmd == "sweep":
            values = [_value(v.strip()) for v in args.values.split(",") if v.strip()]
            name = sc.pop("scheduler", None)  # --scheduler X: sweep X alone, sized to the SLO
            r = api.sweep(sc, args.param, values, (name,) if name else None, args.max_work,
                          _executor(args))
            if args.json:
                print(json.dumps(r, indent=1, allow_nan=False))
            else:
                print(report.slo_table(r, name) if name else report.speedup_table(r))
            return 0
        if args.cmd == "plan":
            cost = sc.setdefault("server", {}).get("cost")
            if cost is None or isinstance(cost, dict) and "kind" not in cost:
                # --model / --gpu alone: a plan is about a real deployment
                sc["server"]["cost"] = dict(cost or {}, kind="roofline")
            r = plan.plan(sc, args.gpus, args.max_work, _executor(args), args.capacity)
            print(json.dumps(r, indent=1, allow_nan=False) if args.json else report.plan(r))
            return 0
        if args.cmd == "run":
            r = api.simulate(sc, args.max_work)
            results = {r["scheduler"]: r}
        else:
            schedulers = base_schedulers()
            if sc.get("scheduler") not in (None,) + schedulers:
                schedulers = schedulers + (sc["scheduler"],)
            if sc.get("scheduler") != "custom":   # a reader's code stays with its scheduler
                sc.pop("scheduler", None)
            r = api.compare(sc, schedulers, args.max_work)
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
