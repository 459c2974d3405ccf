"""The page's view of the engine: every field (with its allowed values in words), the groups, the
result record layouts, the schedulers, the routers and the figures. The page builds its controls, URL codec and
messages from this; it names no field itself."""

from ..fleet.routers import describe as routers
from ..policies import CUSTOM, REGISTRY, scheduler_names
from ..scenario import fields as F
from ..scenario.normalize import allowed_text, choices
from ..sim import records
from .figures import FIGURES


# The policy lab's lane: the reader's own code (policies/custom.py), shown while scheduler = custom.
LAB = {"name": CUSTOM, "label": "Your policy", "summary": "your own code (custom.code)",
       "base": False, "lab": True}


def schedulers():
    """[{name, label, summary, base, lab}] of every registered policy, in display order, then the
    policy lab's. The base schedulers are always compared (the speedup is static over continuous);
    the other registered ones are lanes a reader adds (URL `<name>=1`); the lab's lane is on while
    scheduler = custom."""
    return [{"name": n, "label": REGISTRY[n].label, "summary": REGISTRY[n].summary,
             "base": REGISTRY[n].base, "lab": False} for n in scheduler_names()] + [dict(LAB)]


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
