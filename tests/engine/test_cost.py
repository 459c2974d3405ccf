"""The article's cost model and chunked-prefill closed forms, and the unit-cost step clock."""

from py_engine import simulate
from py_engine.model import cost
from py_engine.scenario.prepared import prepare


def test_step_cost_article_values():
    assert round(cost.step_cost_ms(1, 0), 2) == 22.35       # article rounds to 22.4
    assert round(cost.step_cost_ms(32, 0), 2) == 33.2
    assert round(cost.step_cost_ms(16, 4000), 2) == 267.6   # ~268 ms prefill stall
    assert round(cost.step_cost_ms(16, 0), 2) == 27.6
    t = prepare({}).ticks
    assert tuple(t) == (22_000_000, 350_000, 60_000)
    c = cost.Cost.from_scenario(prepare({}))
    assert [c.pass_ticks(*a) for a in ((1, 0), (32, 0), (16, 4000), (16, 0))] == [
        22_350_000, 33_200_000, 267_600_000, 27_600_000]


def test_prefill_steps_article():
    assert [cost.prefill_steps(p, 512) for p in (0, 1, 511, 512, 513, 1024, 1025, 4000)] == [
        1, 1, 1, 1, 2, 2, 3, 8]


def test_unit_cost_is_the_step_counter():
    r = simulate({"scheduler": "continuous", "server": {"cost": "unit"}})
    assert r["metrics"]["makespan"] == r["metrics"]["passes"]
    assert r["unit"] == "pass"
