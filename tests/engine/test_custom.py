"""The policy lab's engine (SPEC §10): a reader's own scheduler as Python source, checked,
located and stopped; the reference policies run unchanged as such code."""

import pathlib
from collections import deque

import pytest

import py_engine
from support.cli import one_line, run_cli

EXAMPLES = pathlib.Path(py_engine.__file__).parent / "policies" / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem != "__init__")
LOAD = {"requests": 150, "arrival": {"kind": "poisson", "rate": 25}, "skew": 0.8,
        "prefix": {"kind": "system", "groups": 4, "tokens": 600}}


def custom(code, **sc):
    return dict({"scheduler": "custom", "custom": {"name": "mine", "code": code}}, **sc)


def code_of(name):
    return (EXAMPLES / ("%s.py" % name)).read_text()


def test_the_examples_are_here_and_short():
    assert {"fcfs", "sjf", "sarathi", "lpm", "tgi", "no_evict"} <= set(NAMES)
    for name in NAMES:
        lines = [ln for ln in code_of(name).splitlines() if ln.strip()]
        assert len(lines) <= 40, name


@pytest.mark.parametrize("name", NAMES)
def test_every_example_runs_unchanged_as_custom_code(name):
    r = py_engine.simulate(custom(code_of(name), workload=LOAD, server={"kv_tokens": 30000}))
    assert r["scheduler"] == "custom"
    assert len(r["requests"]) == 150 and all(q["done"] >= q["first_token"] for q in
                                            r["requests"])


def test_fcfs_on_the_public_hooks_is_the_built_in_continuous():
    for wl in (LOAD, {"requests": 80}, dict(LOAD, skew=0.0, prefix={"kind": "none"})):
        a = py_engine.simulate({"scheduler": "continuous", "workload": wl})
        b = py_engine.simulate(custom(code_of("fcfs"), workload=wl))
        assert a["requests"] == b["requests"]
        assert a["metrics"]["ttft"] == b["metrics"]["ttft"]


def test_sjf_admits_the_shortest_arrived_prompt_first():
    """Recomputed from the result: no request still waiting when another was admitted had a
    shorter prompt (ties: earlier arrival, then lower id)."""
    r = py_engine.simulate(custom(code_of("sjf"), workload=LOAD))
    reqs = r["requests"]
    for a in reqs:
        for b in reqs:
            if b["arrive"] <= a["admit"] < b["admit"]:
                assert (b["prompt"], b["arrive"], b["id"]) > (a["prompt"], a["arrive"], a["id"])
    fcfs = py_engine.simulate({"scheduler": "continuous", "workload": LOAD})
    assert [q["admit"] for q in r["requests"]] != [q["admit"] for q in fcfs["requests"]]


def test_a_custom_lane_beside_the_built_in_ones():
    sc = custom(code_of("sjf"), workload=LOAD)
    r = py_engine.compare(sc, ["static", "continuous", "custom"])
    assert set(r) == {"static", "continuous", "custom", "speedup"}
    assert r["custom"]["metrics"] == py_engine.simulate(sc)["metrics"]


GOOD = '''from py_engine.policies import Policy


class Mine(Policy):
    def schedule(self):
        sim = self.sim
        while sim.free and sim.waiting:
            sim.admit(sim.waiting.popleft(), self.chunk)
'''


@pytest.mark.parametrize("change, words", [
    (("popleft()", "popleft("), ["custom.code line 8", "syntax"]),
    (("self.chunk)", "self.chunk // 0)"), ["custom.code line 8", "ZeroDivisionError"]),
    (("while sim.free and sim.waiting:", "for _ in range(sim.slots + 1):"),
     ["custom.code line 8", "admit: no free slot"]),
    (("sim.waiting.popleft()", "sim.waiting[0]"), ["custom.code", "request 0"]),
    (("class Mine(Policy):", "class Mine:"), ["defines 0 subclasses of Policy"]),
])
def test_a_bad_policy_is_refused_at_its_line(change, words):
    with pytest.raises(py_engine.ScenarioError) as e:
        py_engine.simulate(custom(GOOD.replace(*change), workload={"requests": 20}))
    assert e.value.field == "custom.code"
    for w in words:
        assert w in e.value.message, e.value.message


def test_a_policy_that_never_returns_is_stopped_within_seconds(tmp_path):
    spin = tmp_path / "spin.py"
    spin.write_text(GOOD.replace("        sim = self.sim\n", "        while True:\n"
                                                           "            pass\n"))
    line = one_line(run_cli("run", "--policy-file", str(spin), "--requests", "5"),
                    "custom.code line ", "did not return")
    assert "within 2 s" in line


def test_the_cli_runs_a_policy_file(tmp_path):
    p = run_cli("compare", "--policy-file", str(EXAMPLES / "sjf.py"), "--requests", "40",
                "--json")
    assert p.returncode == 0, p.stderr
    one_line(run_cli("run", "--policy-file", str(tmp_path / "absent.py")), "policy-file")


def test_vtcs_fairness_bound_holds_on_every_run():
    """The example asserts the bound at each decision; here on random workloads, and a VTC
    that serves the largest counter first breaks it (the check can fail)."""
    import random
    code = code_of("vtc")
    for seed in range(15):
        rng = random.Random(seed)
        wl = {"requests": rng.choice([60, 150]), "seed": seed,
              "arrival": {"kind": "poisson", "rate": rng.choice([5, 20, 80])},
              "skew": rng.choice([0, 0.5, 0.9]),
              "prefix": {"kind": "system", "groups": rng.choice([2, 3, 5]),
                         "tokens": rng.choice([100, 600])}}
        py_engine.simulate(custom(code, workload=wl, server={"slots": rng.choice([2, 8])}))
    unfair = code.replace("key=lambda k: (c[k], k))", "key=lambda k: (-c[k], k))")
    assert unfair != code
    with pytest.raises(py_engine.ScenarioError) as e:
        py_engine.simulate(custom(unfair, workload={"requests": 150, "arrival": {
            "kind": "poisson", "rate": 80}, "prefix": {"kind": "system", "groups": 3}},
            server={"slots": 2}))
    assert "VTC's bound" in e.value.message


def test_the_protocol_offers_every_example_for_the_lab():
    from py_engine.app.protocol import handle
    got = handle({"method": "examples", "params": {}})["result"]
    assert [e["name"] for e in got] == NAMES
    for e in got:
        assert e["code"] == code_of(e["name"]) and e["summary"]


def test_the_custom_lane_without_custom_code_is_a_scenario_error():
    # the page asks compare(..., ["custom"]) only with scheduler = custom; anything else is refused
    # by name, not a KeyError
    from py_engine.app.protocol import handle
    resp = handle({"method": "compare", "params": {"scenario": {"scheduler": "continuous"},
                                                   "schedulers": ["static", "custom"]}})
    assert resp["error"]["type"] == "ScenarioError" and resp["error"]["field"] == "scheduler"


def _v017_reference(items, slots, pool_blocks, budget, cost):
    """vLLM 0.1.7's Scheduler._schedule stepped by hand (vllm/core/scheduler.py lines 126-260,
    block_manager.py can_allocate / can_append_slot, watermark 0.01), one step at a time ->
    {id: (first_token, done)}. A step is prompts only (as many waiting as fit, FCFS) or decodes
    only; a decode that finds no free block preempts the latest running (recompute, first in
    line). Blocks held: ceil(tokens/16) for the tokens whose KV is computed."""
    fixed, per_row, per_token = cost
    n, t, nxt = len(items), 0.0, 0
    waiting, running, held, length, emitted, first, done = deque(), [], {}, {}, [0] * n, {}, {}
    while len(done) < n:
        while nxt < n and items[nxt][0] <= t:
            waiting.append(nxt)
            nxt += 1
        if not waiting and not running:
            t = float(items[nxt][0])
            continue
        free = pool_blocks - sum(held.values())
        batch, tokens = [], 0
        while waiting and len(running) + len(batch) < slots:
            r = waiting[0]
            need = items[r][1] + emitted[r]
            if free - -(-need // 16) < int(0.01 * pool_blocks) or (batch and tokens + need > budget):
                break
            batch.append(waiting.popleft())
            free -= -(-need // 16)
            tokens += need
            held[r], length[r] = -(-need // 16), need
        if batch:
            t += fixed + per_row * len(batch) + per_token * tokens
            stepped = batch
        else:
            running.sort()
            stepped = []
            while running:
                r = running.pop(0)
                while free < 1 and running:
                    v = running.pop()
                    free += held.pop(v)
                    waiting.appendleft(v)
                if free < 1:
                    free += held.pop(r)
                    waiting.appendleft(r)
                    continue
                if -(-(length[r] + 1) // 16) > held[r]:
                    held[r] += 1
                    free -= 1
                stepped.append(r)
            t += fixed + per_row * len(stepped)
        for r in stepped:
            length[r] += 0 if r in batch else 1
            emitted[r] += 1
            first.setdefault(r, t)
            if emitted[r] == items[r][2]:
                done[r] = t
                held.pop(r)
        running = [r for r in running + batch if r not in done] if batch else \
            [r for r in stepped if r not in done]
    return {r: (first[r], done[r]) for r in range(n)}


@pytest.mark.parametrize("pool_blocks", [None, 40])
def test_vllm_v017_matches_a_hand_stepped_reference(pool_blocks):
    """The vllm_v017 example against _v017_reference: the same first-token and finish times for
    every request, with a pool that never fills and with one small enough to preempt."""
    import random
    rng = random.Random(7)
    t, items = 0, []
    for _ in range(60):
        t += rng.randrange(0, 120)
        items.append((t, rng.randrange(20, 200), rng.randrange(2, 60)))
    cost = (20.0, 1.0, 0.5)
    budget = 400
    sc = custom(code_of("vllm_v017"),
                workload={"items": [{"arrive": a, "prompt": p, "out": o} for a, p, o in items]},
                server={"slots": 16, "kv_tokens": None if pool_blocks is None else 16 * pool_blocks,
                        "max_num_batched_tokens": budget, "chunk": 0,
                        "cost": dict(zip(("fixed_ms", "per_row_ms", "per_prefill_token_ms"),
                                         cost))})
    r = py_engine.simulate(sc)
    ref = _v017_reference(items, 16, pool_blocks or 1 << 40, budget, cost)
    got = {q["id"]: (q["first_token"], q["done"]) for q in r["requests"]}
    off = [(i, got[i], ref[i]) for i in ref
           if abs(got[i][0] - ref[i][0]) > 1e-6 or abs(got[i][1] - ref[i][1]) > 1e-6]
    assert not off, off[:5]
    if pool_blocks is not None:
        assert sum(q["preemptions"] for q in r["requests"]) > 0
