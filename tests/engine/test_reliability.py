"""Reliability at the extremes: each class of failure found by an adversarial pass, as a test
(numbers refer to the findings of the reliability issue), and property tests over any JSON value
and any accepted scenario."""

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from py_engine import ScenarioError, compare, normalize, simulate, sweep
from py_engine.scenario import fields as F
from py_engine.app.protocol import handle, handle_json
from py_engine.sim.work import BLOCKS_PER_UNIT, PROBES, WORK_CAP
from support.cli import one_line, run_cli

HUGE = 10 ** 400




# ------------------------------------------------------------ 2, 3: SLO = the reported numbers

def test_slo_check_uses_the_last_token_like_the_reported_tpot():
    """#2: under static batching a request with out = 1 frees its slot at the group's end; its
    TPOT is 0 and it meets a TPOT limit."""
    r = simulate({"scheduler": "static",
                  "workload": {"items": [{"arrive": 0, "prompt": 10, "out": 1},
                                         {"arrive": 0, "prompt": 10, "out": 50}]},
                  "server": {"slots": 2}, "slo": {"ttft_ms": 1e6, "tpot_ms": 100}})
    reqs = r["requests"]
    assert reqs[0]["tpot"] == 0 and reqs[0]["done"] > reqs[0]["last_token"]
    assert all(q["tpot"] <= 100 for q in reqs)
    assert r["metrics"]["slo_attainment"] == 1.0


@pytest.mark.parametrize("out", [9000, 9300, 20000, 100000])
def test_slo_check_has_no_integer_overflow(out):
    """#3: huge limits are met by any run (the check is in Python ints, not int64)."""
    r = simulate({"scheduler": "continuous",
                  "workload": {"items": [{"arrive": 0, "prompt": 1, "out": out}]},
                  "slo": {"ttft_ms": 1e9, "tpot_ms": 1e9, "e2el_ms": 1e9}})
    assert r["metrics"]["slo_attainment"] == 1.0


# ------------------------------------------------------------ 4: bounded simulated time

@pytest.mark.parametrize("arrival,field", [
    ({"kind": "poisson", "rate": 1e-6}, "workload.arrival.rate"),
    ({"kind": "gap", "every": 1e6}, "workload.arrival.every"),
])
def test_generated_arrivals_are_bounded_like_items(arrival, field):
    for call in (simulate, compare):
        with pytest.raises(ScenarioError) as e:
            call({"workload": {"requests": 20000, "arrival": arrival}})
        assert e.value.field == field
    p = run_cli("compare", "--requests", "20000", "--arrival", "poisson", "--rate", "0.000001")
    one_line(p, "workload.arrival.rate", "higher rate")


def test_sparse_arrivals_within_the_bound_run_in_order():
    r = simulate({"workload": {"requests": 50, "arrival": {"kind": "poisson", "rate": 1e-4}}})
    arrive = [q["arrive"] for q in r["requests"]]
    assert arrive == sorted(arrive) and arrive[0] == 0 and arrive[-1] > 1e7


# ------------------------------------------------------------ 5: bounded work

def test_a_run_beyond_the_work_cap_is_refused_saying_what_to_lower():
    # a tight KV pool: the token budget and the blocks bind, every step walks the running list
    sc = {"scheduler": "vllm", "workload": {"requests": 3000},
          "server": {"slots": 256, "kv_tokens": 20_000}}
    r = simulate(sc, work_cap=None)          # the same run without a cap completes
    assert r["metrics"]["output_tokens"] > 0
    with pytest.raises(ScenarioError) as e:
        simulate(sc, work_cap=100_000)
    msg = e.value.message
    assert e.value.field == "workload.requests"
    assert "work cap of 100,000" in msg and "Lower workload.requests (3,000)" in msg
    assert "--max-work 0" in msg and "of 3,000 requests done" in msg


def test_a_trace_beyond_the_work_cap_names_its_window():
    # a production trace's size is its window (workload.trace.count: the page's "Window size",
    # where the message is shown), and its prompt and output lengths are the trace's own
    sc = {"scheduler": "vllm", "workload": {"trace": {"name": "mooncake-conv-2025", "count": 500}},
          "server": {"slots": 64}}
    with pytest.raises(ScenarioError) as e:
        simulate(sc, work_cap=20_000)
    msg = e.value.message
    assert e.value.field == "workload.trace.count"
    assert "Lower workload.trace.count (500), server.slots (64);" in msg, msg
    assert "workload.requests" not in msg and "prompt_mean" not in msg


def test_the_probe_refuses_a_hopeless_run_early(monkeypatch):
    """The estimate from the first PROBE of the cap stops a run far beyond it before the cap."""
    from py_engine.sim import core
    seen = []
    real = core.Sim.run

    def run(self, policy, until=None):
        seen.append(self.work_cap)
        return real(self, policy, until)
    monkeypatch.setattr(core.Sim, "run", run)
    with pytest.raises(ScenarioError) as e:
        simulate({"scheduler": "vllm", "workload": {"requests": 20000},
                  "server": {"slots": 256}}, work_cap=60_000)   # it needs ~2,000,000
    assert seen == [3_000]                   # refused at the probe, never ran to the cap
    assert "x the cap" in e.value.message


@pytest.mark.parametrize("cluster", [{"replicas": 8}, {"replicas": 32, "router": "llm_d"},
                                     {"prefill": {"replicas": 2}, "decode": {"replicas": 4}}],
                         ids=["fleet", "llm_d", "p/d"])
def test_a_hopeless_fleet_is_refused_at_its_first_probe(cluster):
    """A fleet was held to the cap alone (no probe, its routing not counted): a 1M-request vLLM
    fleet of 64 replicas ran 21 s natively before its refusal (43 s behind llm_d), 'about 20 s'
    by the message. Now its estimate at the first probe, 5% of the cap, refuses it."""
    cap = 2_000_000
    sc = {"scheduler": "vllm", "cluster": cluster,
          "workload": {"requests": 100_000, "arrival": {"kind": "poisson", "rate": 50}}}
    with pytest.raises(ScenarioError) as e:
        simulate(sc, work_cap=cap)
    m = re.search(r"([\d,]+) of 100,000 requests done after ([\d,]+) units; it needs about "
                  r"([\d,]+) units", e.value.message)
    assert m, e.value.message
    done, units, needs = (int(x.replace(",", "")) for x in m.groups())
    assert done > 0 and units <= 0.06 * cap and needs > 2 * cap      # the probe's verdict


def test_a_fleet_counts_its_routing_as_work():
    """Routing a request costs ~1.5 us, and per replica more when the router scores them (llm_d)
    or asks their prefix caches: counted, as a replica counts its own events."""
    from py_engine.api import drain
    from py_engine.fleet.run import run_fleet_steps
    from py_engine.scenario.prepared import prepare
    from py_engine.workload.generator import generate

    def routing(router):
        sc = prepare({"scheduler": "vllm", "workload": {"requests": 200},
                      "cluster": {"replicas": 16, "router": router}})
        return drain(run_fleet_steps(sc, generate(sc["workload"]))).work
    assert 0 < routing("round_robin") < routing("llm_d")


def test_a_run_within_the_estimate_goes_on_to_the_cap_and_equals_the_uncapped_run():
    sc = {"scheduler": "vllm", "workload": {"requests": 400}, "server": {"slots": 16}}
    assert simulate(sc, work_cap=2_000_000) == simulate(sc, work_cap=None)


def test_cli_max_work():
    p = run_cli("run", "--scheduler", "vllm", "--requests", "3000", "--slots", "256",
             "--kv-tokens", "20000", "--max-work", "100000")
    one_line(p, "work cap of 100,000", "--max-work 0")
    one_line(run_cli("run", "--max-work", "-3"), "--max-work")
    assert run_cli("run", "--requests", "30", "--max-work", "0").returncode == 0


def test_the_protocol_caps_work_by_default():
    out = handle({"method": "simulate", "params": {"scenario": {
        "scheduler": "vllm", "workload": {"requests": 1_000_000},
        "server": {"slots": 256, "kv_tokens": 20_000}}}})
    assert not out["ok"] and out["error"]["type"] == "ScenarioError"
    assert "work cap of {:,}".format(WORK_CAP) in out["error"]["message"]


# ------------------------------------------------------------ 6: sweeps over null / words

def test_a_sweep_over_null_ranks_it_as_no_limit():
    r = sweep({"workload": {"requests": 40}, "slo": {"ttft_ms": 1e7, "tpot_ms": 1e7}},
              "kv_tokens", [None, 3000], ["vllm"])
    assert r["best"]["vllm"] is None and r["lowest"]["vllm"] == 3000   # null = the largest
    assert "no limit" in r["recommendation"]["vllm"]["text"]
    assert all("rank" not in pt for pt in r["points"])
    out = handle({"method": "sweep", "params": {"scenario": {"workload": {"requests": 20}},
                                                "param": "kv_tokens", "values": [None, 3000],
                                                "schedulers": ["vllm"]}})
    assert out["ok"], out


# ------------------------------------------------------------ 7: every bad input a message

@pytest.mark.parametrize("raw,field", [
    ({"workload": {"skew": HUGE}}, "workload.skew"),
    ({"workload": {"requests": 10 ** 5000}}, "workload.requests"),
    ({"workload": {"arrival": {"kind": "poisson", "rate": HUGE}}}, "workload.arrival.rate"),
    ({"workload": {"arrival": {"kind": "gap", "every": -HUGE}}}, "workload.arrival.every"),
    ({"slo": {"ttft_ms": HUGE}}, "slo.ttft_ms"),
    ({"slo": {"tpot_ms": HUGE}}, "slo.tpot_ms"),
    ({"workload": {"items": [{"arrive": HUGE, "prompt": 1, "out": 1}]}},
     "workload.items[0].arrive"),
    ({"server": {"cost": {"fixed_ms": HUGE}}}, "server.cost.fixed_ms"),
])
def test_huge_integers_are_range_errors(raw, field):
    with pytest.raises(ScenarioError) as e:
        normalize(raw)
    assert e.value.field == field and "digits" in e.value.message
    out = handle({"method": "simulate", "params": {"scenario": raw}})
    assert out["error"]["type"] == "ScenarioError" and out["error"]["field"] == field
    json.dumps(out, allow_nan=False)


def test_protocol_odd_methods_and_huge_numbers_are_scenario_errors():
    for text in ('{"method": ["x"]}', '{"method": {"a": 1}}',
                 '{"method": "simulate", "params": {"scenario": {"workload": {"skew": 1%s}}}}'
                 % ("0" * 400),
                 '{"method": "kv", "params": {"gpu_mem_utilization": 1%s}}' % ("0" * 400),
                 '{"method": "simulate", "params": {"scenario": {"workload": {"requests": 1%s}}}}'
                 % ("0" * 5000)):
        out = json.loads(handle_json(text))
        assert not out["ok"] and out["error"]["type"] == "ScenarioError", (text[:60], out)


@pytest.fixture
def files(tmp_path):
    def write(name, data):
        p = tmp_path / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return str(p)
    return write


def test_cli_scenario_files_that_are_not_objects(files):
    one_line(run_cli("run", "--scenario", files("list.json", "[1, 2]")), "must hold a JSON object")
    one_line(run_cli("run", "--scenario", files("null.json", "null")), "not null")
    one_line(run_cli("run", "--scenario", files("deep.json", "[" * 100000 + "]" * 100000)),
              "scenario")
    one_line(run_cli("run", "--scenario", files("bin.json", bytes(range(128, 256)))), "not UTF-8")


def test_cli_trace_files(files):
    one_line(run_cli("run", "--trace", files("bin.csv", bytes(range(128, 256)) * 4)), "not UTF-8")
    one_line(run_cli("run", "--trace", files("short.csv", "arrive,prompt,out\n0,10\n")),
              "line 2", "2 values, the header has 3")
    one_line(run_cli("run", "--trace", files("long.csv", "arrive,prompt,out\n0,10,5,9\n")),
              "line 2", "4 values")
    one_line(run_cli("run", "--trace", files("col.csv", "arrive,prompt,out,foo\n0,10,5,7\n")),
              "line 1", "unknown column foo")
    one_line(run_cli("run", "--trace", files("deep.jsonl", "[" * 100000 + "\n")), "line 1")
    bom = files("bom.csv", b"\xef\xbb\xbfarrive,prompt,out\n0,10,5\n3,4,2\n")
    p = run_cli("run", "--trace", bom, "--json")
    assert p.returncode == 0, p.stderr
    assert [q["out"] for q in json.loads(p.stdout)["requests"]] == [5, 2]


@pytest.mark.parametrize("args,field", [
    (["run", "--skew", "1" + "0" * 400], "workload.skew"),
    (["run", "--requests", "1" + "0" * 5000], "workload.requests"),
    (["run", "--arrival", "poisson", "--rate", "1" + "0" * 400], "workload.arrival.rate"),
    (["kv", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--util", "1" + "0" * 400],
     "gpu_mem_utilization"),
    (["run", "--requests", "2,0000"], "workload.requests"),
    (["sweep", "--scheduler", "vllm", "--param", "kv_tokens", "--values", "1" + "0" * 400],
     "server.kv_tokens"),
])
def test_cli_huge_or_odd_numbers_one_line(args, field):
    one_line(run_cli(*args), field)


# ------------------------------------------------------------ property tests

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 3000)
    | st.sampled_from([10 ** 12, -10 ** 12, 2 ** 63, HUGE, -HUGE, 10 ** 4000])
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=12)
KEYS = sorted({f.path.split(".")[-1] for f in F.FIELDS} | {"scenario", "items", "kind"})


def _scenario_like():
    leaf = JSON
    obj = st.dictionaries(st.sampled_from(KEYS), leaf | st.dictionaries(
        st.sampled_from(KEYS), leaf, max_size=3), max_size=4)
    return st.dictionaries(st.sampled_from(["workload", "server", "slo", "scheduler"]),
                           obj | JSON, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["simulate", "compare", "sweep", "stall", "kv", "calibrate", "story",
                        "schema", ["x"], None, 3, {"a": 1}]),
       st.dictionaries(st.sampled_from(["scenario", "schedulers", "param", "values", "csv",
                                        "model", "gpu", "zzz"]),
                       _scenario_like() | JSON, max_size=3) | JSON)
def test_any_json_value_gets_ok_or_a_scenario_error(method, params):
    out = handle({"method": method, "params": params})
    text = json.dumps(out, allow_nan=False)
    assert out["ok"] or out["error"]["type"] == "ScenarioError", out
    assert len(text) < 50_000_000


def _values(f):
    """A strategy for one accepted value of field f, kept small enough for a unit test."""
    if f.type == "bool":
        return st.booleans()
    if f.type == "choice":
        from py_engine.scenario.normalize import choices
        return st.sampled_from(choices(f))
    small = {"workload.requests": 120, "workload.output_mean": 300, "workload.prompt_mean": 2000,
             "server.slots": 64, "workload.seed": 10 ** 6}
    hi = small.get(f.path, f.max)
    if f.type == "int":
        base = st.integers(f.min, min(hi, f.min + 100_000))
    else:
        base = st.floats(f.min, min(hi, 1e7), allow_nan=False)
    return (st.none() | base) if f.nullable else base


SIMPLE = [f for f in F.FIELDS if f.type in ("int", "float", "bool", "choice")
          and f.path.count(".") == 1 and f.path.split(".")[0] in ("workload", "server", "slo")
          and f.path != "workload.trace.name"]


@st.composite
def accepted(draw):
    sc = {"workload": {}, "server": {}, "slo": {}}
    for f in draw(st.lists(st.sampled_from(SIMPLE), max_size=6, unique_by=lambda f: f.path)):
        top, leaf = f.path.split(".")
        sc[top][leaf] = draw(_values(f))
    sc["scheduler"] = draw(st.sampled_from(["static", "continuous", "vllm"]))
    sc["workload"]["arrival"] = draw(st.sampled_from(
        [{"kind": "burst"}, {"kind": "poisson", "rate": 50.0}, {"kind": "gap", "every": 7.0}]))
    return sc


def _quantiles_ordered(d):
    return d["p50"] <= d["p95"] <= d["p99"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accepted())
def test_any_accepted_scenario_completes_within_the_cap_with_every_invariant(sc):
    try:
        norm = normalize(sc)
    except ScenarioError:
        assume(False)
    try:
        r = simulate(norm, work_cap=2_000_000)
    except ScenarioError as e:     # a pre-flight refusal (a request larger than the pool) or cap
        assert e.field in ("server.kv_tokens", "workload.requests"), e.message
        return
    m, reqs = r["metrics"], r["requests"]
    assert m["passes"] >= 1
    assert abs(sum(m["shares"].values()) - 1.0) < 1e-9
    assert m["output_tokens"] == m["slot_steps"]["useful"] == sum(q["out"] for q in reqs)
    for q in reqs:
        assert q["arrive"] <= q["admit"] <= q["first_token"] <= q["last_token"] <= q["done"]
        assert q["tpot"] >= 0 and q["ttft"] >= 0
    for key in ("ttft", "tpot", "e2e"):
        if key == "tpot" and all(q["out"] == 1 for q in reqs):
            assert m[key]["p50"] is None       # no request has a time per output token
            continue
        assert _quantiles_ordered(m[key]), m[key]
    kv = norm["server"]["kv_tokens"]
    if norm["scheduler"] == "vllm" and isinstance(kv, int):
        assert m["kv_peak_tokens"] <= kv
    assert 0.0 <= m["slo_attainment"] <= 1.0


def test_the_kv_pools_block_work_counts_toward_the_cap():
    """Million-token prompts in a finite pool touch ~10^6 blocks while the core sees a handful of
    events: the blocks count (once, a 2,000-request variant ran 176 s under the cap)."""
    sc = {"scheduler": "vllm", "workload": {"requests": 20, "prompt_mean": 1_000_000,
                                            "output_mean": 10, "skew": 0},
          "server": {"slots": 256, "kv_tokens": 4_000_000}}
    from py_engine import api
    run = api.run_sim(sc, work_cap=None)
    blocks = sum(p for p in run.sim.prompt) // 16
    # each block taken and given back at least (BLOCKS_PER_UNIT blocks a unit)
    assert run.sim.work >= 2 * blocks // BLOCKS_PER_UNIT
    with pytest.raises(ScenarioError) as e:
        simulate(sc, work_cap=blocks // BLOCKS_PER_UNIT)
    assert "work cap" in e.value.message


def test_the_livelock_detector_keeps_digests_not_states(monkeypatch):
    """A chunk-1 run samples nothing for thousands of passes while its prefills move: every
    preemption then records the scheduler's state (once kept whole: 540 MB)."""
    from py_engine import api
    from py_engine.policies.vllm import scheduler
    kept = []
    real = scheduler.check_livelock

    def livelock(policy, version):
        real(policy, version)
        kept.extend(policy.seen)
    monkeypatch.setattr(scheduler, "check_livelock", livelock)
    sc = {"scheduler": "vllm", "workload": {"requests": 300, "prompt_mean": 1000,
                                            "output_mean": 100, "skew": 0.95},
          "server": {"slots": 512, "chunk": 1, "kv_tokens": 60_000}}
    api.run_sim(sc, work_cap=None)
    assert len(kept) > 100                       # the detector did record states
    assert all(isinstance(k, bytes) and len(k) == 16 for k in kept)


def test_a_livelock_digest_past_the_cap_is_not_built(monkeypatch):
    """A digest walks the scheduler's whole state, the prefix cache's blocks too (one was 3.26M
    units): its work was counted after it was built, so a run went that far past its cap. A cap
    that falls inside a digest's count now stops the run before that digest is built."""
    from py_engine.policies.vllm import livelock
    built = []
    real = livelock._state

    def state(policy):
        built.append(policy.sim._sim.work)       # the work counted so far, this digest's too
        return real(policy)
    monkeypatch.setattr(livelock, "_state", state)
    # chunk 1: prefills sample nothing for hundreds of passes while a shared prefix is cached
    sc = {"scheduler": "vllm",
          "workload": {"requests": 300, "prompt_mean": 1000, "output_mean": 100, "skew": 0.95,
                       "prefix": {"kind": "conversation", "turns": 4, "think": 100}},
          "server": {"slots": 512, "chunk": 1, "kv_tokens": 60_000}}
    whole = simulate(sc, work_cap=None)
    k = 3
    assert len(built) > k and built[k] - built[k - 1] > 10_000   # big digests, far apart
    cap = built[k] - 1          # past the cap with the 4th digest's count, not before it
    built.clear()
    with pytest.raises(ScenarioError) as e:
        simulate(sc, work_cap=cap)
    assert "work cap" in e.value.message
    assert len(built) == k      # the 4th was not built (counted after it, it was)
    # a probe's share of a cap (sim/work.py PROBES) inside that count: the run goes on from
    # there, so it must not stop inside the step (it did once: a step half planned, planned
    # again, and the core refused a chunk of 0)
    share = PROBES[0][0]
    assert simulate(sc, work_cap=int(cap / share)) == whole


@pytest.mark.parametrize("cluster", [{"replicas": 2},
                                     {"prefill": {"replicas": 1}, "decode": {"replicas": 1}}],
                         ids=["fleet", "p/d"])
def test_a_fleet_stops_at_its_cap_inside_a_replicas_tail(cluster):
    """Four requests are routed at once, so a replica's work is all in its tail (million-token
    conversation prompts in chunks of 16 on one slot). The cap was looked at between routed
    requests and after each tail only: this P/D fleet ran to 782,170 units under a cap of
    50,000. A replica now has the fleet look every CHECK_WORK units of its work."""
    from py_engine.api import drain
    from py_engine.fleet.disagg import run_disagg_steps
    from py_engine.fleet.run import run_fleet_steps
    from py_engine.scenario.prepared import prepare
    from py_engine.workload.generator import generate
    cap = 50_000
    sc = {"scheduler": "vllm", "cluster": cluster,
          "workload": {"requests": 4, "prompt_mean": 1_000_000, "output_mean": 200, "skew": 0,
                       "prefix": {"kind": "conversation", "turns": 4, "think": 100}},
          "server": {"slots": 1, "chunk": 16, "cost": {"kind": "roofline",
                                                       "model": "llama-3.1-8b",
                                                       "gpu": "h100-80gb"}}}
    prepared = prepare(sc)
    steps = run_disagg_steps if "prefill" in cluster else run_fleet_steps
    whole = drain(steps(prepared, generate(prepared["workload"]))).work_done()[0]
    assert whole > 5 * cap                  # uncapped, it is far beyond the cap
    with pytest.raises(ScenarioError) as e:
        simulate(sc, work_cap=cap)
    m = re.search(r"of 4 requests done after ([\d,]+) units", e.value.message)
    assert m, e.value.message
    assert int(m.group(1).replace(",", "")) <= 2 * cap


def test_a_fleets_shared_blocks_are_made_for_a_prefix_aware_router_and_counted():
    """fleet.blocks (a prompt's shared-content block nodes) were computed up front for every
    fleet: a thousand conversation prompts of a million tokens took 1.7 s before the first check
    of the cap, for routers that never read them. Now they are made as a router asks, each
    node a unit of the fleet's work, numbered as before (the result_hash fleets)."""
    from py_engine.api import drain
    from py_engine.fleet.run import run_fleet_steps
    from py_engine.scenario.prepared import prepare
    from py_engine.workload.blocks import stream_chains
    from py_engine.workload.generator import generate

    def fleet(router):
        sc = prepare({"scheduler": "vllm", "cluster": {"replicas": 2, "router": router},
                      "workload": {"requests": 200, "prompt_mean": 20_000, "output_mean": 8,
                                   "prefix": {"kind": "conversation", "turns": 4,
                                              "think": 100}}})
        trace = generate(sc["workload"])
        return drain(run_fleet_steps(sc, trace)), trace

    rr, _ = fleet("round_robin")
    assert rr.blocks.made == []
    aware, trace = fleet("cache_aware")
    every = list(stream_chains(trace))
    nodes = sum(map(len, every))
    assert nodes > 5_000 and aware.blocks.made == every
    assert aware.work >= nodes + 200 * 3       # every node, and each routing's own (ROUTE_WORK)


def sliced_and_whole(scenario):
    """(slices, the document) of a fleet run in slices that every check finds due, and the
    document of the same run in one piece (timings aside)."""
    import json
    from py_engine.api import drain, result, run_steps
    from py_engine.scenario.prepared import prepare

    def doc(run):
        def strip(x):
            if isinstance(x, dict):
                return {k: strip(v) for k, v in x.items() if k != "seconds"}
            return [strip(v) for v in x] if isinstance(x, list) else x
        return json.dumps(strip(result(run)))
    sc = prepare(scenario)
    steps = run_steps(sc, None, 0.0, None)
    slices = 0
    while True:
        try:
            next(steps)
            slices += 1
        except StopIteration as done:
            return slices, doc(done.value), doc(drain(run_steps(sc, None, None, None)))


def test_a_fleets_tails_are_sliced_and_give_the_same_answer():
    """A burst is routed at once, so the fleet's work is its replicas' tails, and each tail was
    one slice: the page could neither show progress nor cancel inside it. A replica's check of
    the cap now also ends a slice that is due, and its advance goes on where it stopped."""
    slices, sliced, whole = sliced_and_whole({"scheduler": "vllm", "workload": {"requests": 1000},
                                              "cluster": {"replicas": 2}})
    # (it was a slice each 64 routed requests and one a tail: 17; the tails are most of it)
    assert slices > 2 * (1000 // 64 + 2)
    assert sliced == whole


def test_a_pd_fleets_stretches_are_sliced_and_give_the_same_answer():
    """As a colocated fleet's (above): a P/D burst's work is its drain after the last arrival
    (prefill tails, each request's transfer and admission on its decode replica) and the decode
    tails, which were three slices; drain and arrive are stopped between two steps and go on."""
    slices, sliced, whole = sliced_and_whole(
        {"scheduler": "vllm", "workload": {"requests": 1000},
         "server": {"cost": {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}},
         "cluster": {"prefill": {"replicas": 1}, "decode": {"replicas": 2}}})
    assert slices > 2 * (1000 // 64 + 4)
    assert sliced == whole
