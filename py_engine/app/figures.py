"""What the page's figures ask of the engine, declared here so the page names no field itself.

FIGURES ships in `schema()`: each sweep figure names the field it sweeps (a dotted path), its points,
which schedulers it runs and what it marks. `stall(scenario)` answers the prefill-stall panel (the
article's 268 ms vs 27.6 ms example as a real trace) for the scenario's chunk and cost model.
"""

from ..api import result, run_sim
from ..scenario.prepared import prepare
from .papers import CHECKS

# The lab's challenges. Measured natively (python -m py_engine run --policy-file
# py_engine/policies/examples/sjf.py with these scenarios): the sjf example beats FCFS on both,
# the first by a lower TTFT p95, the second by more requests within the 2 s TTFT limit.
_CHALLENGE_LOAD = {"requests": 200, "seed": 1, "skew": 0.6, "prompt_mean": 1000,
                   "output_mean": 96}
CHALLENGES = [
    {"name": "ttft_p95", "title": "Beat FCFS on TTFT p95",
     "text": "200 requests arriving at 4 per second, long and uneven prompts, 8 slots. Which "
             "request a free slot takes decides how long the unlucky wait: lower the p95 time to "
             "first token below FCFS's (continuous batching).",
     "scenario": {"workload": {**_CHALLENGE_LOAD, "arrival": {"kind": "poisson", "rate": 4}},
                  "server": {"slots": 8, "chunk": 512}, "slo": {"ttft_ms": 2000}},
     "metric": "ttft.p95", "format": "time", "better": "lower", "beat": "continuous",
     "rivals": ["static", "continuous", "vllm"]},
    {"name": "ttft_slo", "title": "Serve more requests within a 2 s TTFT",
     "text": "The same requests at 8 per second: more than the server can keep up with. No "
             "policy meets the SLO; serve the largest share within it.",
     "scenario": {"workload": {**_CHALLENGE_LOAD, "arrival": {"kind": "poisson", "rate": 8}},
                  "server": {"slots": 8, "chunk": 512}, "slo": {"ttft_ms": 2000}},
     "metric": "slo_attainment", "format": "share", "better": "higher", "beat": "continuous",
     "rivals": ["static", "continuous", "vllm"]},
]
from ..fleet.result import TTFT_PARTS
from .plan import MAX_GPUS

# a request's TTFT parts (fleet/result.py TTFT_PARTS) as the fleet figure labels them
PART_LABELS = {"prefill_queue": "prefill queue", "prefill": "prefill", "transfer": "KV transfer",
               "decode_queue": "decode queue", "first_decode": "first decode step"}

# embed_height: the figure's height in px as an 820-px-wide embed: the largest it takes in any state
# (vLLM lane on, every story step, a fleet of 8, the planner's table), which the embed reserves
# (so neither loading nor a story step moves the host page) and the copied iframe snippet carries;
# tests/browser/test_views.py holds every embed's rendered height to it within 2 px, its tallest
# state to within a line of it, and all to 520. The page also posts its height to the host page
# as it changes (README: "Embedding").
FIGURES = {
    # rows: the scenario field that is the number of rows (slots) a timeline draws
    # main: drawn from the main comparison (the other figures make their own engine calls);
    # alone: an embed of it runs no main comparison (it reads nothing of it, and on a fleet's
    # scenario that is a whole trace on one server, in three lanes, that nobody sees)
    "timeline": {"title": "Static vs continuous batching: slot × pass timelines", "main": True,
                 "rows": "server.slots", "kv_budget": "server.kv_tokens", "embed_height": 520},
    "metrics": {"title": "Static vs continuous batching: the numbers", "main": True,
                "embed_height": 490},
    "skew": {"title": "The skew sweep", "embed_height": 370,
             "sweep": {"param": "workload.skew",
                       "values": [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
                       "schedulers": "base"}},
    "slots": {"title": "Sizing the server", "embed_height": 510,
              # the richest scheduler on screen (vllm when its lane is on); `params`: what the
              # figure can sweep instead (the first is the default)
              "sweep": {"param": "server.slots",
                        "values": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                        # vLLM's default max_num_seqs is 256 (1,024 for `vllm serve` on large GPUs)
                        "params": [{"param": "server.slots",
                                    "values": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]},
                                   {"param": "server.max_num_batched_tokens",
                                    "values": [256, 512, 1024, 2048, 4096, 8192, 16384]}],
                        # the SLO rule itself: the share of requests meeting every limit,
                        # against slo.attainment; each point carries the limits that fail
                        # current: the reader's own setting is swept too where the grid misses
                        # it (max_num_seqs 48: its own verdict, and the recommendation may be it)
                        "current": True,
                        "schedulers": "last", "metric": "slo_attainment",
                        "metric_label": "within the SLO", "limit": "slo.attainment",
                        "share": True}},
    "stall": {"title": "The prefill stall", "embed_height": 300},
    # budget: the scenario field the calculator's "use as budget" button sets
    # cost: the field the deployment panel's "run on this deployment" sets to a roofline
    "kv": {"title": "Deployment: KV cache and pass times", "budget": "server.kv_tokens",
           "cost": "server.cost", "embed_height": 476},
    "check": {"title": "Self-check", "embed_height": 180},
    # replicas behind a router (SPEC §8): the one figure whose runs keep the scenario's `owns`
    # key (every other figure runs one server without it); shown when `replicas` > 1. It runs
    # the richest scheduler on screen ("last", as the sizing figure), once as set, then once per
    # choice of `router` on the same trace (the router comparison)
    # With prefill and decode pools (SPEC §9) it shows them as lanes and each request's TTFT in
    # its parts; `open_pools`: the P:D its second opener sets
    "fleet": {"title": "A fleet: replicas behind a router", "owns": "cluster",
              "replicas": "cluster.replicas", "router": "cluster.router.kind",
              "pools": {"prefill": "cluster.prefill.replicas",
                        "decode": "cluster.decode.replicas",
                        "prefill_server": "cluster.prefill.server",
                        "decode_server": "cluster.decode.server"},
              "parts": [[p, PART_LABELS[p]] for p in TTFT_PARTS],
              "schedulers": "last", "open_replicas": 4, "open_pools": [1, 3],
              "embed_height": 520, "alone": True},
    # published numbers recomputed (app/papers/, SPEC §11): the page asks the live engine one
    # check at a time, in this order; `seconds`: about how long all of them take in the page;
    # `names`: each check's paper and title, for its tile before it is computed
    "papers": {"title": "Reproducing the papers", "checks": [c["id"] for c in CHECKS],
               "names": {c["id"]: [c["paper"], c["title"]] for c in CHECKS},
               "seconds": 15, "embed_height": 450},
    # the policy lab (SPEC §10): an editor for the reader's own scheduler (custom.code) and its
    # examples (protocol `examples`); its lane (schema schedulers' `lab` one) joins the others
    # while scheduler = custom. `challenges`: a lecturer's fixed trace and SLO, the built-in
    # policies scored on it (`rivals`), the reader's beside them; `metric` is a path in a result's
    # metrics (shown as a "time" or a "share"), `better` "lower" | "higher", `beat` the rival.
    "lab": {"title": "The policy lab: your own scheduler", "embed_height": 520,
            "code": "custom.code", "name": "custom.name", "example": "fcfs",
            # the fields the lab sets itself (they have no control of their own)
            "fields": ["scheduler", "custom.name", "custom.code"],
            "challenges": CHALLENGES},
    # the planner (app/plan.py): the GPU budget's candidates, one plan_point at a time, on the
    # richest scheduler on screen; it needs a roofline deployment (`cost`, `tp`: the fields a
    # candidate sets; `open_cost`: what its opener sets when the cost is not one)
    "plan": {"title": "Planner: colocated or prefill/decode on a GPU budget",
             "schedulers": "last", "gpus": 8, "max_gpus": MAX_GPUS, "cost": "server.cost",
             "tp": "server.cost.tp", "open_cost": "roofline", "embed_height": 520, "alone": True,
             # what the planner sets itself in each candidate (plan.setup keeps only the
             # router, staleness and link): the page leaves them out of its requests
             "ignores": ["cluster.replicas", "cluster.prefill", "cluster.decode"]},
    # the story's card with the figure its step highlights (presets.STORY; URL story=N)
    "story": {"title": "Story: continuous batching step by step", "embed_height": 520},
}

STALL_STREAMS = 15        # users decoding when the document arrives
STALL_STREAM_OUT = 400
STALL_PROMPT = 4000       # the pasted document
STALL_ARRIVE = 100.0      # cost units after the streams start
NO_CHUNK = 65_536         # the largest chunk: the whole prompt in one pass


def _stall_scenario(chunk, cost):
    items = [{"arrive": 0, "prompt": 16, "out": STALL_STREAM_OUT}] * STALL_STREAMS
    items = items + [{"arrive": STALL_ARRIVE, "prompt": STALL_PROMPT, "out": 20}]
    return {"scheduler": "continuous", "workload": {"items": items},
            "server": {"slots": STALL_STREAMS + 1, "chunk": chunk, "cost": cost}}


def _pass_stats(res):
    log = res["passes_log"]
    rows_full = STALL_STREAMS + 1
    decode = next((c for c, r, p in zip(log["cost"], log["rows"], log["prefill_tokens"])
                   if r == rows_full and p == 0), None)
    chunk_passes = sum(n for n, r, p in zip(log["count"], log["rows"], log["prefill_tokens"])
                       if r == rows_full and p > 0)
    return {"worst": max(log["cost"]), "decode": decode, "chunk_passes": chunk_passes,
            "ttft": res["requests"][-1]["ttft"]}


def stall(scenario=None):
    """The prefill stall under the scenario's chunk and cost model: 15 streams decoding, then one
    4,000-token prompt joins their batch, run unchunked and chunked. The unit cost makes every pass
    cost 1, so there the article's cost model is used (and `article_cost` says so)."""
    s = prepare(scenario)
    sv = s["server"]
    cost = sv["cost"]
    article_cost = cost == "unit"
    if article_cost:
        cost = "article"
    chunk = min(sv["chunk"] or STALL_PROMPT, STALL_PROMPT)   # 0 = off: one chunk
    out = {"prompt": STALL_PROMPT, "streams": STALL_STREAMS, "chunk": chunk,
           "article_cost": article_cost}
    for name, c in (("unchunked", NO_CHUNK), ("chunked", chunk)):
        out[name] = _pass_stats(result(run_sim(_stall_scenario(c, cost))))
    return out
