"""`python -m py_engine papers`: published numbers of the field, recomputed on the engine (SPEC §11).

Each check is data (CHECKS: its paper, where the number is, the workload as the source describes
it, the published number, the tolerance) and one function that runs the engine and returns what
we got: {"ours", "pass", "detail"} (+ "why" when it fails: a one-line explanation, an honest gap
said, never hidden). One module per paper family holds its checks (its CHECKS), gathered here in
FAMILIES' order. Nothing here is a stored result: every "ours" is computed when asked, so a
change of the engine (the roofline's fit, a policy) moves it. Each check is bounded to run in the
page in about a second or less (the page asks one check at a time: protocol method "papers").

Result: [{"id", "title", "paper", "source", "workload", "claim", "published", "tolerance", "ours", "pass",
"detail", "why"}], in CHECKS' order.
"""

from ... import api
from ...errors import ScenarioError
from ...sim.progress import Progress
from . import article, distserve, llm_d, mlperf, mooncake, orca, sarathi, splitwise, vllm_sosp, vtc

FAMILIES = (article, vllm_sosp, orca, sarathi, distserve, splitwise, mooncake, llm_d, vtc, mlperf)
CHECKS = [c for family in FAMILIES for c in family.CHECKS]
BY_ID = {c["id"]: c for c in CHECKS}


def run_one(check_id):
    """One check, computed now -> its row (a crash is a failed check, said as its reason)."""
    c = BY_ID.get(check_id)
    if c is None:
        raise ScenarioError("ids", check_id, "one of " + ", ".join(BY_ID))
    row = {k: v for k, v in c.items() if k != "fn"}
    try:
        got = c["fn"]()
    except Exception as e:       # reported as data, like the self-check
        got = {"ours": None, "pass": False, "detail": "", "why": "%s: %s" % (type(e).__name__, e)}
    row.update({"ours": got["ours"], "pass": bool(got["pass"]), "detail": got.get("detail", ""),
                "why": None if got["pass"] else got.get("why") or "outside the tolerance"})
    return row


def run_steps(ids=None):
    """A steps generator (the protocol's slices): one check per step -> the rows."""
    if ids is not None and not isinstance(ids, list):
        raise ScenarioError("ids", ids, "a list of check ids")
    rows, todo = [], ids if ids is not None else list(BY_ID)
    for i in todo:
        rows.append(run_one(i))
        yield Progress(len(rows), len(todo), "checks")
    return rows


def run(ids=None):
    return api.drain(run_steps(ids))
