"""The field table is the one declaration: every consumer derives from it and agrees with it.

URL names and CLI flags are unique; every field round-trips through the URL map and the CLI; the
schema the page receives says what normalize() enforces; the README lists exactly these fields."""

import json
import re
from pathlib import Path

import pytest

from py_engine import normalize, schema
from py_engine.app import cli
from py_engine.scenario import fields
from py_engine.errors import ScenarioError
from py_engine.scenario.normalize import allowed_text, choices
from support.urls import scenario_from_query

README = Path(__file__).resolve().parents[2] / "README.md"
CONTROLS = [f for f in fields.FIELDS if f.control]


def sample(f):
    """A valid value of `f` that is not its default."""
    if f.type == "choice":
        return next(c for c in choices(f) if c != f.default)
    if f.type == "cost":
        return next(c for c in f.choices if c not in [f.default] + f.object_choices)
    if f.type == "bool":
        return not f.default
    if f.type == "int":
        v = 1000 if f.default is None else f.default + 1
        return v if v <= f.max else f.default - 1
    if f.type == "float":
        v = round((f.default or 0) * 0.5 + (f.max - f.min) * 1e-4 + f.min, 6)
        return v if v != f.default else v * 0.5
    if f.type == "overrides":
        return {"slots": 4}
    raise AssertionError(f.type)


# A disaggregated fleet has both pools: a pool's field exists in a valid scenario with both.
POOLS = ("cluster.prefill.replicas", "cluster.decode.replicas")


def needs(f):
    """The other fields' values that make `f` exist (its `when`, or its object form), as
    (field, value) pairs."""
    form = [(fields.BY_PATH[f.parent], f.form)] if f.form else []
    pools = [(fields.BY_PATH[p], 1) for p in POOLS
             if p != f.path and f.path.startswith(("cluster.prefill.", "cluster.decode."))]
    return form + pools + [(fields.BY_PATH[p], vals[0]) for p, vals in f.when.items()]


def get(scenario, path):
    for p in path.split("."):
        scenario = scenario[p]
    return scenario


def test_url_names_and_flags_are_unique():
    urls = [f.url for f in fields.FIELDS]
    flags = [f.flag for f in fields.FIELDS]
    assert len(set(urls)) == len(urls), sorted(u for u in urls if urls.count(u) > 1)
    assert len(set(flags)) == len(flags)
    reserved = {"vllm", "preset", "embed", "lecture", "theme", "pass", "step"}  # the page's view
    assert not reserved & set(urls)


@pytest.mark.parametrize("f", CONTROLS, ids=[f.path for f in CONTROLS])
def test_every_field_round_trips_through_the_url_and_the_cli(f):
    v = sample(f)
    pairs = needs(f) + [(f, v)]
    text = lambda x: json.dumps(x) if isinstance(x, dict) else str(x)   # noqa: E731
    query = "&".join("%s=%s" % (g.url, text(x)) for g, x in pairs)
    assert get(normalize(scenario_from_query(query)), f.path) == v
    argv = ["run"] + [a for g, x in pairs for a in ("--" + g.flag, text(x))]
    args = cli._parser().parse_args(argv)
    assert get(normalize(cli.scenario_from_args(args)), f.path) == v


def test_schema_says_what_normalize_enforces():
    sch = schema()
    json.dumps(sch, allow_nan=False)
    by_path = {f["path"]: f for f in sch["fields"]}
    assert list(by_path) == [f.path for f in fields.FIELDS]
    norm = normalize({})
    for f in fields.FIELDS:
        d = by_path[f.path]
        assert d["allowed"] == allowed_text(f)
        if f.when or f.type in ("items", "cost", "overrides") or f.parent in fields.BY_PATH:
            continue  # a variant's field, part of a cost model's object form, pool overrides
        assert get(norm, f.path) == f.default
        if f.type in ("int", "float"):
            lo, hi = f.min, f.max
            parent, _, leaf = f.path.rpartition(".")
            def at(x):
                sc = {}
                node = sc
                for p in parent.split(".") if parent else []:
                    node = node.setdefault(p, {})
                node[leaf] = x
                return sc
            assert get(normalize(at(lo)), f.path) == lo
            step = 1 if f.type == "int" else max(abs(hi), 1) * 1e-6
            for bad in (lo - step, hi + step):
                with pytest.raises(ScenarioError) as e:
                    normalize(at(bad))
                assert e.value.field == f.path and e.value.allowed == d["allowed"]
    # the page's lanes: the registered schedulers, then the policy lab's own ("custom")
    assert [s["name"] for s in sch["schedulers"]] == choices(fields.BY_PATH["scheduler"])
    assert [s["name"] for s in sch["schedulers"] if s["lab"]] == ["custom"]
    assert [r["name"] for r in sch["records"]["segment"]] == [
        "slot", "request", "phase", "first_pass", "last_pass"]


def test_readme_lists_every_field():
    """README's parameter table is generated from the field table (tools/readme_fields.py)."""
    from tools import readme_fields
    text = README.read_text()
    assert readme_fields.block() in text, "README's field table is stale: run " \
        "`.venv/bin/python -m tools.readme_fields` to regenerate it"
    names = re.findall(r"^\| `([a-z0-9_]+)` \|", readme_fields.block(), re.M)
    assert names == [f.url for f in CONTROLS]
