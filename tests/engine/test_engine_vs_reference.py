"""Hypothesis: the event-driven engine equals the brute-force step loop, pass for pass."""

from collections import Counter

from hypothesis import given, strategies as st

from py_engine.api import run_sim, simulate
from py_engine.scenario.prepared import prepare
from references.batching import brute_force, static_closed_form

COSTS = st.sampled_from(["unit", "article",
                         {"fixed_ms": 1.5, "per_row_ms": 0.25, "per_prefill_token_ms": 0.125},
                         {"fixed_ms": 7.0, "per_row_ms": 3.0, "per_prefill_token_ms": 0.0}])


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 25))
    items = []
    staggered = draw(st.booleans())
    for _ in range(n):
        arrive = draw(st.integers(0, 400)) / 4 if staggered else 0.0
        items.append({"arrive": arrive, "prompt": draw(st.integers(1, 300)),
                      "out": draw(st.integers(1, 40))})
    return {"workload": {"items": items},
            "server": {"slots": draw(st.integers(1, 6)), "chunk": draw(st.integers(1, 128)),
                       "cost": draw(COSTS)}}


def _engine_vs_brute(raw, scheduler):
    raw = dict(raw, scheduler=scheduler)
    sc = prepare(raw)
    sim = run_sim(sc).sim
    t = sc.ticks
    ref = brute_force(scheduler, list(sim.arrive), list(sim.prompt), list(sim.out),
                      sc["server"]["slots"], sc["server"]["chunk"],
                      tuple(t))
    assert sim.passes == ref["passes"]
    assert list(sim.first_pass) == ref["first_pass"]
    assert list(sim.done_pass) == ref["done_pass"]
    assert list(sim.admit_pass) == ref["admit_pass"]
    assert list(sim.first_tick) == ref["first_tick"]
    assert list(sim.done_tick) == ref["done_tick"]
    tally = ref["tally"]
    assert sim.t_useful == tally.get("useful", 0)
    assert sim.t_prefill == tally.get("prefill", 0)
    assert sim.t_pad == tally.get("padding", 0)
    assert sim.slots * sim.passes - sim.t_rows == tally.get("idle", 0)
    assert Counter(sim.rec.gap_weights) == ref["gaps"]
    assert sim.kv_peak == ref["kv_peak"]
    res = simulate(raw)
    m = res["metrics"]
    assert m["passes"] == ref["passes"]
    assert m["makespan_ticks"] == ref["makespan"]
    assert m["utilization"] == tally.get("useful", 0) / (sim.slots * ref["passes"])
    assert abs(sum(m["shares"].values()) - 1.0) < 1e-12
    assert m["slot_steps"]["useful"] == sum(sim.out) == m["output_tokens"]
    # segments cover exactly the non-idle slot-steps, without overlap
    cover = Counter()
    for slot, rid, phase, a, b in res["segments"]:
        assert 1 <= a <= b <= ref["passes"]
        for p in range(a, b + 1):
            cover[(slot, p)] += 1
            cover[phase] += 1
    assert all(v == 1 for k, v in cover.items() if isinstance(k, tuple))
    assert cover["useful"] == tally.get("useful", 0)
    assert cover["prefill"] == tally.get("prefill", 0)
    assert cover["padding"] == tally.get("padding", 0)
    log = res["passes_log"]
    assert sum(log["count"]) == ref["passes"]
    assert sum(c * u for c, u in zip(log["count"], log["useful"])) == tally.get("useful", 0)
    return sim, res


@given(scenarios())
def test_continuous_equals_brute_force(raw):
    _engine_vs_brute(raw, "continuous")


@given(scenarios())
def test_static_equals_brute_force_and_closed_form(raw):
    sim, res = _engine_vs_brute(raw, "static")
    # the article's closed form, in passes under the unit cost
    unit = dict(raw, scheduler="static")
    unit["server"] = dict(raw["server"], cost="unit")
    usim = run_sim(prepare(unit)).sim
    reqs = [{"arrive": a / 1_000_000, "prompt": p, "out": o}
            for a, p, o in zip(usim.arrive, usim.prompt, usim.out)]
    assert max(usim.done_tick) == round(
        static_closed_form(reqs, raw["server"]["slots"], raw["server"]["chunk"]) * 1_000_000)
