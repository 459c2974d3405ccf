"""The page's view of the engine: every field (with its allowed values in words), the groups, the
result record layouts, the schedulers, the routers and the figures. The page builds its controls, URL codec and
messages from this; it names no field itself."""

from ..fleet.routers import describe as routers
from ..policies import REGISTRY, scheduler_names
from ..scenario import fields as F
from ..scenario.normalize import allowed_text, choices
from ..sim import records
from .figures import FIGURES


def schedulers():
    """[{name, label, summary, base}] of every registered policy, in display order. The base
    schedulers are always compared (the speedup is static over continuous); the others are lanes a
    reader adds (URL `<name>=1`)."""
    return [{"name": n, "label": REGISTRY[n].label, "summary": REGISTRY[n].summary,
             "base": REGISTRY[n].base} for n in scheduler_names()]


def schema():
    """Every field, the groups, record layouts, schedulers, routers and figures."""
    out = []
    for f in F.FIELDS:
        d = {k: getattr(f, k) for k in F.Field.__slots__}
        d["choices"] = choices(f)
        d["allowed"] = allowed_text(f)
        out.append(d)
    return {"fields": out, "groups": dict(F.GROUPS), "records": records.layouts(),
            "schedulers": schedulers(), "routers": routers(), "figures": FIGURES,
            "items": [{"name": f.path, "type": f.type, "min": f.min, "max": f.max,
                       "description": f.description} for f in F.ITEM_FIELDS]}
