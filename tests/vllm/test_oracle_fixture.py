"""The `vllm` policy against the real vLLM 0.33.0 scheduler's recorded decisions.

tests/fixtures/vllm-0.33.0.json.gz was recorded by `tools/vllm_oracle.py record` (the real
`Scheduler` / `AsyncScheduler`, CPU, no model; see that script): 3 hand cases and 320 random traces,
5 in every cell of the grid enable_prefix_caching x async_scheduling x scheduler_reserve_full_isl
x policy (fcfs, priority) x KV (limited, unlimited) x shared prefixes (with, without). No vLLM is
needed here.

For each case the engine must give, exactly: every step's tokens per request, the preempted
requests and the prefix-cache hit of every admitted request; per request the step and time of
its first and last token and its preemptions; and the free blocks after every planned step.
vLLM's steps with nothing scheduled (async: every running request waiting for its last output;
or nothing left) run no pass, so the engine's passes are vLLM's non-empty steps, numbered in
order. The brute-force model in references/vllm.py is held to the same record, step for step
(empty steps included), and then checks the engine on traces the fixture does not have.
"""

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from py_engine.sim.core import Sim
from py_engine.model.cost import TICKS, Cost
from py_engine.errors import ScenarioError
from py_engine.policies.vllm.scheduler import VLLM
from py_engine.scenario.prepared import prepare
from py_engine.verify.vllm_cases import KNOBS, scenario  # the fixture's config -> a scenario
from py_engine.workload.generator import generate
from references import vllm as reference

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vllm-0.33.0.json.gz"
DOC = json.loads(gzip.open(FIXTURE).read())
CASES = DOC["cases"]
ARTICLE = (22_000_000, 350_000, 60_000)      # the fixture's cost, in ticks


def engine(cfg, stepped=False, cost="article"):
    """Run the policy on a case -> (sim, per pass: {request: tokens}, admitted, free blocks)."""
    sc = prepare(scenario(cfg, cost))
    trace = generate(sc["workload"])
    sim = Sim(trace, sc["server"]["slots"], Cost.from_scenario(sc))
    policy = VLLM(sim, sc, trace)
    if stepped:
        policy.horizon = lambda: 1
    policy.plan_log = []
    error = None
    try:
        sim.run(policy)
    except ScenarioError as e:
        error = e
    tokens, admitted, free = [], [], []
    log = policy.plan_log
    for j, e in enumerate(log):
        end = log[j + 1]["pass"] if j + 1 < len(log) else sim.passes + 1
        for q in range(end - e["pass"]):    # (a step planned when an error stops the run
                                             # never runs)
            tokens.append(e["tokens"])
            admitted.append(e["admitted"] if q == 0 else {})
            free.append(e["free"] if q == 0 else None)
    return sim, tokens, admitted, free, error


def recorded_passes(case):
    """vLLM's non-empty steps, and the pass number of every step."""
    steps, number, c = [], {}, 0
    for i, s in enumerate(case["vllm"]["steps"], 1):
        if s["tokens"]:
            c += 1
            steps.append(s)
        number[i] = c
    return steps, number


def ints(d):
    return {int(k): v for k, v in d.items()}


def check_engine(case, stepped):
    cfg, rec = case["config"], case["vllm"]
    sim, tokens, admitted, free, error = engine(cfg, stepped)
    assert error is None, error
    steps, number = recorded_passes(case)
    assert len(tokens) == len(steps) == sim.passes
    for p, (ours, theirs) in enumerate(zip(tokens, steps), 1):
        assert ours == ints(theirs["tokens"]), "pass %d" % p
        assert admitted[p - 1] == ints(theirs["cached"]), "pass %d" % p
        if cfg["kv_tokens"] is not None and free[p - 1] is not None:
            assert free[p - 1] == theirs["free_blocks"], "pass %d" % p
    for i, r in enumerate(rec["requests"]):
        assert sim.first_pass[i] == number[r["first_step"]], i
        assert sim.done_pass[i] == number[r["done_step"]], i
        assert abs(sim.first_tick[i] / TICKS - r["first_ms"]) < 1e-6, i
        assert abs(sim.done_tick[i] / TICKS - r["done_ms"]) < 1e-6, i
        assert sim.preemptions[i] == r["preemptions"], i


FINISHED = [i for i, c in enumerate(CASES) if c["vllm"]["finished"]]


def test_the_fixture_covers_the_grid():
    assert len(CASES) >= 300 and DOC["vllm_version"] == "0.33.0"
    assert "tools/vllm_oracle.py" in DOC["recorded_by"]
    cells = {(tuple(c["config"][k] for k in KNOBS), c["config"]["policy"],
              c["config"]["kv_tokens"] is None,
              any(it[3] is not None for it in c["config"]["items"])) for c in CASES}
    assert len(cells) == 2 ** 3 * 2 * 2 * 2
    hits = sum(v for c in CASES for s in c["vllm"]["steps"] for v in s["cached"].values())
    preemptions = sum(len(s["preempted"]) for c in CASES for s in c["vllm"]["steps"])
    assert hits > 1000 and preemptions > 1000   # the cases exercise both


@pytest.mark.parametrize("index", FINISHED)
def test_engine_makes_vllms_decisions(index):
    check_engine(CASES[index], stepped=False)


def test_engine_makes_vllms_decisions_stepped_pass_by_pass():
    # The same policy planning every single pass (no runs): the free blocks of every pass too.
    for index in FINISHED:
        check_engine(CASES[index], stepped=True)


def test_all_finishing_cases_identical():
    """The count the README quotes: N of N."""
    same = 0
    for index in FINISHED:
        check_engine(CASES[index], stepped=False)
        same += 1
    assert same == len(FINISHED) == 322


@pytest.mark.parametrize("index", [i for i, c in enumerate(CASES) if not c["vllm"]["finished"]])
def test_a_trace_vllm_never_finishes_is_proven_and_reported(index):
    # vLLM ran 20,000 steps of this one without finishing (the fixture keeps the first 3,000).
    case = CASES[index]
    sim, tokens, _, _, error = engine(case["config"])
    assert error is not None and error.field == "server.kv_tokens"
    assert "never finishes" in error.message
    first, cycle = [int(x) for x in
                    error.message.split("from pass ")[1].split(" passes")[0].split(
                        " its scheduler repeats a cycle of ")]
    steps, _ = recorded_passes(case)
    recorded = [ints(s["tokens"]) for s in steps]
    assert tokens == recorded[:len(tokens)]
    # ... and what vLLM did from there is that cycle, over and over, to the end of the record
    assert len(recorded) > first + 10 * cycle
    assert all(recorded[p] == recorded[p - cycle] for p in range(first - 1 + cycle, len(recorded)))


def ticks_config(cfg):
    return dict(cfg, items=[[round(it[0] * TICKS)] + list(it[1:]) for it in cfg["items"]])


@pytest.mark.parametrize("index", range(len(CASES)))
def test_the_reference_model_is_vllm(index):
    case = CASES[index]
    rec = case["vllm"]
    got = reference.run(ticks_config(case["config"]), ARTICLE,
                        max_steps=len(rec["steps"]) - 1 if not rec["finished"] else 20_000)
    assert got["finished"] == rec["finished"]
    n = len(rec["steps"])
    for ours, theirs in zip(got["steps"][:n], rec["steps"]):
        assert ours["tokens"] == ints(theirs["tokens"])
        assert ours["preempted"] == theirs["preempted"]
        assert ours["cached"] == ints(theirs["cached"])
        if case["config"]["kv_tokens"] is not None:
            assert ours["free_blocks"] == theirs["free_blocks"]
        assert abs(ours["end"] / TICKS - theirs["end"]) < 1e-6
    if rec["finished"]:
        assert len(got["steps"]) == n
        for a, b in zip(got["requests"], rec["requests"]):
            assert (a["first_step"], a["done_step"], a["preemptions"]) == (
                b["first_step"], b["done_step"], b["preemptions"])


# ---------------------------------------------------------------- beyond the fixture

@st.composite
def traces(draw):
    n = draw(st.integers(1, 16))
    bs = draw(st.sampled_from([1, 2, 4, 16]))
    items = []
    for i in range(n):
        prompt, out = draw(st.integers(1, 120)), draw(st.integers(1, 30))
        pid, plen = None, 0
        if draw(st.booleans()):
            pid = draw(st.integers(0, 2))
            plen = draw(st.sampled_from([prompt, min(prompt, 8), min(prompt, 33)]))
        items.append([draw(st.integers(0, 400)) / 4, prompt, out, pid, plen,
                      draw(st.integers(0, 2))])
    items.sort(key=lambda it: it[0])
    need = max(-(-(p + o - 1) // bs) for _, p, o, *_ in items) * bs
    cfg = {"items": items, "slots": draw(st.integers(1, 6)),
           "chunk": draw(st.sampled_from([1, 4, 16, 64])),
           "budget": draw(st.sampled_from([1, 8, 32, 128])), "block_size": bs,
           "policy": draw(st.sampled_from(["fcfs", "priority"])),
           "kv_tokens": draw(st.sampled_from([None, need, need + bs, need + 4 * bs, 3 * need]))}
    cfg.update({k: draw(st.booleans()) for k in KNOBS})
    return cfg


@settings(max_examples=400, deadline=None)
@given(traces())
def test_engine_equals_the_reference_model_on_random_traces(cfg):
    ref = reference.run(ticks_config(cfg), (7_000_000, 250_000, 30_000), max_steps=5_000)
    sc = scenario(cfg, {"fixed_ms": 7.0, "per_row_ms": 0.25, "per_prefill_token_ms": 0.03})
    case = {"config": cfg, "vllm": {}}
    sim, tokens, admitted, free, error = engine(cfg, cost=sc["server"]["cost"])
    if not ref["finished"]:
        assert error is not None and "never finishes" in error.message
        return
    assert error is None
    steps = [s for s in ref["steps"] if s["tokens"]]
    assert tokens == [s["tokens"] for s in steps]
    assert admitted == [s["cached"] for s in steps]
    number, c = {}, 0
    for i, s in enumerate(ref["steps"], 1):
        c += bool(s["tokens"])
        number[i] = c
    for i, r in enumerate(ref["requests"]):
        assert (sim.first_pass[i], sim.done_pass[i], sim.first_tick[i], sim.done_tick[i],
                sim.preemptions[i]) == (number[r["first_step"]], number[r["done_step"]],
                                        r["first"], r["done"], r["preemptions"]), (i, case)


def test_the_cases_check_replays_are_the_fixtures(tmp_path, monkeypatch):
    # py_engine/verify/vllm_recorded.py is made from the fixture by the oracle script; it must not
    # drift from it (the page's self-check replays it).
    from tools import vllm_oracle
    root = FIXTURE.parents[2]
    monkeypatch.chdir(root)          # the module names the fixture by its path in the repo
    out = tmp_path / "recorded.py"
    vllm_oracle.subset(str(FIXTURE.relative_to(root)), str(out))
    shipped = root / vllm_oracle.KEEP
    assert out.read_text() == shipped.read_text()
