"""The typed scenario the engine runs: the normalised JSON document and what the engine derives
from it once (the cost in integer ticks, a pass cost that grows with context, the KV pool).

`prepare(raw)` validates (normalize.py) and derives; the errors of a derivation are ScenarioErrors
too (kv_tokens "auto" without a deployment, a deployment whose weights leave no KV pool). Readers
index it like the JSON it wraps (`scenario["server"]["slots"]`); results echo `scenario.doc`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from ..errors import ScenarioError
from ..model import roofline
from ..model.cost import coefficients, ticks_of
from . import fields
from .normalize import normalize


class Ticks(NamedTuple):
    """A linear pass cost in integer ticks: fixed + per_row * rows + per_prefill_token * tokens."""
    fixed: int
    per_row: int
    per_prefill_token: int


@dataclass(frozen=True)
class Scenario:
    doc: dict[str, Any]           # the normalised scenario: plain JSON, every default filled in
    ticks: Ticks                  # the linear cost (all 0 under a roofline deployment)
    deployment: Any = None        # roofline.Deployment or ContextCost: a cost that grows, or None
    kv_pool: int | None = None    # usable KV tokens, kv_tokens "auto" resolved (None: unlimited)

    def __getitem__(self, key: str) -> Any:
        return self.doc[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.doc.get(key, default)

    def with_scheduler(self, name: str) -> Scenario:
        """The same scenario run by another scheduler (nothing derived depends on it)."""
        return replace(self, doc=dict(self.doc, scheduler=name))


def prepare(raw: Any) -> Scenario:
    """Untrusted scenario dict (or an already prepared Scenario) -> Scenario, or ScenarioError."""
    if isinstance(raw, Scenario):
        return raw
    doc = normalize(raw)
    sv = doc["server"]
    cost = sv["cost"]
    deployment = None
    if isinstance(cost, dict) and cost.get("kind") == "roofline":
        deployment = roofline.from_cost(cost)
        ticks = Ticks(0, 0, 0)
    else:
        t = ticks_of(coefficients(cost))
        ticks = Ticks(t["fixed"], t["per_row"], t["per_prefill_token"])
        if isinstance(cost, dict):
            deployment = roofline.context_cost(cost, t)
    kv = sv["kv_tokens"]
    pool = _auto_pool(sv) if kv == "auto" else kv
    return Scenario(doc, ticks, deployment, pool)


def _auto_pool(sv: dict) -> int:
    """kv_tokens = auto: the deployment's KV pool (kv.kv_capacity), or a clear error."""
    cost = sv["cost"]
    if not (isinstance(cost, dict) and cost.get("kind") == "roofline"):
        raise ScenarioError("server.kv_tokens", "auto", "an integer, or null; auto needs a "
                            "roofline cost model (a deployment to size the pool from)")
    r = roofline.kv_pool_tokens(cost, cost["gpu_memory_utilization"])
    if r["tokens"] < sv["block_size"]:
        need = -(-r["weight_bytes"] // int(r["gpu_bytes"] * cost["gpu_memory_utilization"]))
        most = fields.BY_PATH["server.cost.tp"].max
        if need + 1 > most:
            raise ScenarioError("server.cost.model", cost["model"],
                                "a model whose weights leave a KV pool on at most %d GPUs"
                                % most, "server.cost.model = %s: its weights (%.0f GB) leave "
                                "no KV pool on %d GPUs or fewer of this kind (tp can be at "
                                "most %d); choose a bigger GPU, fp8 weights or a smaller model"
                                % (cost["model"], r["weight_bytes"] / 1e9, most, most))
        raise ScenarioError("server.cost.tp", cost["tp"],
                            "at least %d: %s's weights (%.0f GB) leave no KV pool on %d GPU%s"
                            % (need + 1, cost["model"], r["weight_bytes"] / 1e9, cost["tp"],
                               "" if cost["tp"] == 1 else "s"))
    return r["tokens"]
