"""The cost unit, its integer ticks, and the article's closed forms: pass cost and prefill steps.

Simulated time is kept in integer *ticks*, 1 tick = 1e-6 of the cost unit (1 ns when the unit is
ms), so every run is exact and platform independent. Floats (`step_cost_ms`) are for people; the
engine uses `Cost`, the same model in ticks.

>>> round(step_cost_ms(1, 0), 2), round(step_cost_ms(32, 0), 2)
(22.35, 33.2)
>>> round(step_cost_ms(16, 4000), 2), round(step_cost_ms(16, 0), 2)
(267.6, 27.6)
>>> prefill_steps(1, 512), prefill_steps(512, 512), prefill_steps(513, 512), prefill_steps(0, 512)
(1, 1, 2, 1)
>>> Cost(22_000_000, 350_000, 60_000).pass_ticks(16, 4000)
267600000
"""

from ..errors import ScenarioError

TICKS = 1_000_000  # ticks per cost unit

ARTICLE_COST = {"fixed_ms": 22.0, "per_row_ms": 0.35, "per_prefill_token_ms": 0.06}
UNIT_COST = {"fixed_ms": 1.0, "per_row_ms": 0.0, "per_prefill_token_ms": 0.0}
NAMED = {"article": ARTICLE_COST, "unit": UNIT_COST}


def to_ticks(x):
    """Cost-unit float -> integer ticks (rounded once; IEEE multiply is exact-rounded everywhere)."""
    return int(round(x * TICKS))


def step_cost_ms(rows, prefill_tokens, fixed_ms=22.0, per_row_ms=0.35, per_prefill_token_ms=0.06):
    """Cost of one forward pass in ms (the article: 22.0 + 0.35*rows + 60.0*prefill_tokens/1000)."""
    return fixed_ms + per_row_ms * rows + per_prefill_token_ms * prefill_tokens


def prefill_steps(prompt, chunk):
    """Passes a prompt needs under chunked prefill: max(1, ceil(prompt / chunk))."""
    return max(1, -(-prompt // chunk))


def coefficients(cost):
    """A normalised server.cost (a name or a custom object) -> {fixed_ms, per_row_ms,
    per_prefill_token_ms} (a roofline cost has none: roofline.py; a custom cost's context term
    is roofline.ContextCost's)."""
    return NAMED[cost] if isinstance(cost, str) else cost


def ticks_of(coeffs):
    """Coefficients in the cost unit -> the same in integer ticks (a pass costs at least 1 tick)."""
    t = {"fixed": to_ticks(coeffs["fixed_ms"]), "per_row": to_ticks(coeffs["per_row_ms"]),
         "per_prefill_token": to_ticks(coeffs["per_prefill_token_ms"])}
    if t["fixed"] < 1:
        raise ScenarioError("server.cost.fixed_ms", coeffs["fixed_ms"], "a number >= 0.000001")
    return t


def cost_unit(scenario):
    """The unit every time in a result is in: ms, or passes under the unit cost."""
    return "pass" if scenario["server"]["cost"] == "unit" else "ms"


class Cost:
    """Pass cost in integer ticks: fixed + per_row * rows + per_token * prefill_tokens, or, with
    a roofline `deployment` (roofline.py), a function of every row's context that grows within a
    run (the core asks the deployment)."""

    __slots__ = ("fixed", "per_row", "per_token", "deployment")

    def __init__(self, fixed, per_row, per_token, deployment=None):
        self.fixed, self.per_row, self.per_token = fixed, per_row, per_token
        self.deployment = deployment

    @classmethod
    def from_scenario(cls, scenario):
        """From a prepared scenario (scenario/prepared.py)."""
        t = scenario.ticks
        return cls(t.fixed, t.per_row, t.per_prefill_token, scenario.deployment)

    def pass_ticks(self, rows, prefill_tokens):
        return self.fixed + self.per_row * rows + self.per_token * prefill_tokens
