"""The core's policy API under stress: a seeded "chaos" policy admits, evicts (recompute / swap
resumes), pauses, unpauses, re-chunks, adds one-pass costs and cuts runs short at random; every
decision is recorded and replayed by an independent pass-by-pass loop, which must reproduce the
engine's passes, per-request passes and ticks, slot-step tally, TBT gaps and KV peak exactly.
This pins the mechanics the vllm policy builds on, independently of any real policy."""

import random
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from py_engine.analysis.results import result
from py_engine.api import run_sim
from py_engine.errors import PolicyError, ScenarioError
from py_engine.sim.core import Sim
from py_engine.sim.view import as_view
from py_engine.model.cost import Cost
from py_engine.policies.base import Policy


class Chaos(Policy):
    name = "chaos"

    def __init__(self, sim, seed):
        self.sim = as_view(sim)     # the public view, as every policy gets it
        self.rng = random.Random(seed)
        self.log = []          # [(passes, now, [actions...])]
        self.mode = {}         # rid -> ("recompute" | "swap", kv to bring back)

    def schedule(self):
        sim, rng = self.sim, self.rng
        acts = []
        live = [s for s in range(sim.slots) if sim.occupant(s) is not None]
        if live and sim.passes and rng.random() < 0.25:
            slot = rng.choice(live)
            rid = sim.occupant(slot)
            kv = sim.resident_kv(slot)
            sim.evict(slot)
            swap = sim.emitted[rid] > 0 and rng.random() < 0.5
            self.mode[rid] = ("swap", sim.prompt[rid] + sim.emitted[rid]) if swap else (
                "recompute", None)
            sim.waiting.appendleft(rid)
            acts.append(("evict", slot))
            assert kv >= 0
        for slot in [s for s in range(sim.slots) if sim.occupant(s) is not None]:
            phase = sim.phase_of(slot)
            x = rng.random()
            if phase == "paused" and x < 0.5:
                c = rng.randint(1, 40)
                sim.unpause(slot, c)
                acts.append(("unpause", slot, c))
            elif phase != "paused" and x < 0.15:
                sim.pause(slot)
                acts.append(("pause", slot))
            elif phase == "prefill" and x < 0.4:
                c = rng.randint(1, 40)
                sim.set_chunk(slot, c)
                acts.append(("set_chunk", slot, c))
        # second thoughts in the same decision: undo an unpause, or evict right after it
        unpaused = [a[1] for a in acts if a[0] == "unpause"]
        if unpaused and rng.random() < 0.5:
            slot = rng.choice(unpaused)
            if rng.random() < 0.5:
                sim.pause(slot)
                acts.append(("pause", slot))
            else:
                rid = sim.evict(slot)
                self.mode[rid] = ("recompute", None)
                sim.waiting.appendleft(rid)
                acts.append(("evict", slot))
        while sim.free and sim.waiting:
            rid = sim.waiting.popleft()
            c = rng.randint(1, 40)
            mode, kv = self.mode.pop(rid, (None, None))
            if mode == "swap":
                slot = sim.admit(rid, c, prefill=0, kv0=kv)
                acts.append(("admit", rid, c, 0, kv, slot))
            elif mode == "recompute":
                pf = sim.prompt[rid] + sim.emitted[rid]
                slot = sim.admit(rid, c, prefill=pf)
                acts.append(("admit", rid, c, pf, 0, slot))
            else:
                slot = sim.admit(rid, c)
                acts.append(("admit", rid, c, sim.prompt[rid], 0, slot))
        active = [s for s in range(sim.slots) if sim.occupant(s) is not None]
        if active and all(sim.phase_of(s) == "paused" for s in active):
            c = rng.randint(1, 40)
            sim.unpause(active[0], c)
            acts.append(("unpause", active[0], c))
        if active and rng.random() < 0.2:
            extra = rng.randint(1, 5) * 250_000
            sim.add_cost(extra)
            acts.append(("add_cost", extra))
        self.log.append((sim.passes, sim.now, acts))

    def horizon(self):
        return self.rng.choice([None, None, 1, 2, 5])


def replay(log, arrive, prompt, out, slots, cost):
    """Pass-by-pass replay of the recorded decisions (no event jumps, no heap)."""
    n = len(arrive)
    fixed, per_row, per_tok = cost
    table = [None] * slots   # dict(rid, pf, chunk, paused, kv)
    emitted, last = [0] * n, [None] * n
    first_pass, done_pass, first_tick, done_tick = [None] * n, [None] * n, [None] * n, [None] * n
    pre = [0] * n
    tally, gaps = Counter(), Counter()
    kv_peak = t = p = done = 0
    admitted = set()
    i = 0
    while done < n:
        extra = 0
        while i < len(log) and log[i][0] == p:   # decisions taken before pass p + 1
            assert log[i][1] == t, "decision time %d != replay time %d" % (log[i][1], t)
            for a in log[i][2]:
                if a[0] == "admit":
                    _, rid, c, pf, kv0, slot = a
                    assert arrive[rid] <= t
                    assert slot == min(s for s in range(slots) if table[s] is None)
                    table[slot] = {"rid": rid, "pf": pf, "chunk": c, "paused": False, "kv": kv0}
                    admitted.add(rid)
                elif a[0] == "evict":
                    pre[table[a[1]]["rid"]] += 1
                    table[a[1]] = None
                elif a[0] == "pause":
                    table[a[1]]["paused"] = True
                elif a[0] == "unpause":
                    table[a[1]].update(paused=False, chunk=a[2])
                elif a[0] == "set_chunk":
                    table[a[1]]["chunk"] = a[2]
                elif a[0] == "add_cost":
                    extra += a[1]
            i += 1
            if not any(table) and len(admitted) < n:  # nothing resident: wait for an arrival
                t = min(arrive[r] for r in range(n) if r not in admitted)
        live = [x for x in table if x is not None and not x["paused"]]
        ptoks = sum(min(x["chunk"], x["pf"]) for x in live)
        p += 1
        t += fixed + per_row * len(live) + per_tok * ptoks + extra
        extra = 0
        tally["idle"] += slots - len(live)
        for s in range(slots):
            x = table[s]
            if x is None or x["paused"]:
                continue
            take = min(x["chunk"], x["pf"])
            x["pf"] -= take
            x["kv"] += take
            if x["pf"] > 0:
                tally["prefill"] += 1
                continue
            rid = x["rid"]
            tally["useful"] += 1
            emitted[rid] += 1
            x["kv"] += 1
            if last[rid] is None:
                first_pass[rid], first_tick[rid] = p, t
            else:
                gaps[t - last[rid]] += 1
            last[rid] = t
        kv_peak = max(kv_peak, sum(x["kv"] for x in table if x is not None))
        for s in range(slots):
            x = table[s]
            if x is not None and emitted[x["rid"]] == out[x["rid"]]:
                done_pass[x["rid"]], done_tick[x["rid"]] = p, t
                table[s] = None
                done += 1
    return dict(passes=p, first_pass=first_pass, done_pass=done_pass, first_tick=first_tick,
                done_tick=done_tick, tally=tally, gaps=gaps, kv_peak=kv_peak, pre=pre)


@settings(max_examples=120)
@given(st.integers(0, 2**32 - 1), st.integers(1, 14), st.integers(1, 5), st.booleans())
def test_chaos_policy_replayed_pass_by_pass(seed, n, slots, staggered):
    rng = random.Random(seed)
    arrive = sorted(rng.randint(0, 40) * 500_000 if staggered else 0 for _ in range(n))
    prompt = [rng.randint(1, 90) for _ in range(n)]
    out = [rng.randint(1, 12) for _ in range(n)]
    cost = (1_000_000, 250_000, 10_000)
    sim = Sim((arrive, prompt, out), slots, Cost(*cost))
    pol = Chaos(sim, seed)
    sim.run(pol)
    ref = replay(pol.log, arrive, prompt, out, slots, cost)
    assert sim.passes == ref["passes"]
    assert list(sim.first_pass) == ref["first_pass"] and list(sim.done_pass) == ref["done_pass"]
    assert list(sim.first_tick) == ref["first_tick"] and list(sim.done_tick) == ref["done_tick"]
    assert sim.t_useful == ref["tally"]["useful"] == sum(out)
    assert sim.t_prefill == ref["tally"]["prefill"]
    assert sim.slots * sim.passes - sim.t_rows == ref["tally"]["idle"]
    assert Counter(sim.rec.gap_weights) == ref["gaps"]
    assert sim.kv_peak == ref["kv_peak"]
    assert list(sim.preemptions) == ref["pre"]
    assert list(sim.emitted) == out
    # segments never overlap and cover exactly the useful + prefill slot-steps
    cover = Counter()
    for slot, rid, phase, a, b in sim.rec.segments:
        for q in range(a, b + 1):
            cover[(slot, q)] += 1
            cover[phase] += 1
    assert all(v == 1 for k, v in cover.items() if isinstance(k, tuple))
    assert cover["useful"] == sum(out) and cover["prefill"] == ref["tally"]["prefill"]


def test_pausing_everyone_is_refused_naming_the_rule():
    class PauseAll(Policy):
        name = "pause-all"

        def schedule(self):
            s = self.sim
            while s.free and s.waiting:
                s.pause(s.admit(s.waiting.popleft(), 4))

    sim = Sim(([0], [5], [3]), 2, Cost(1, 0, 0))
    try:
        sim.run(PauseAll(sim, {"server": {"chunk": 4}}))
    except PolicyError as e:
        assert "paused every resident" in str(e) and e.field == "scheduler"
    else:
        raise AssertionError("no error")


@settings(max_examples=60, deadline=None)
@given(scheduler=st.sampled_from(["static", "continuous", "vllm"]), seed=st.integers(0, 10**6),
       requests=st.integers(1, 60), slots=st.integers(1, 12), chunk=st.integers(1, 600),
       skew=st.sampled_from([0.0, 0.5, 0.9]), kv=st.sampled_from([None, 2000, 6000]),
       arrival=st.sampled_from([{"kind": "burst"}, {"kind": "poisson", "rate": 30.0}]))
def test_the_inlined_phase_ends_equal_the_plain_path(scheduler, seed, requests, slots, chunk, skew,
                                                     kv, arrival):
    """Sim._end_phases inlines the two commonest phase ends for speed; with inline_transitions
    off every phase end goes through Phases._transition. Every number must be the same."""
    raw = {"scheduler": scheduler, "workload": {"requests": requests, "seed": seed, "skew": skew,
                                                "arrival": arrival},
           "server": {"slots": slots, "chunk": chunk,
                      "kv_tokens": kv if scheduler == "vllm" else None}}
    answers = []
    for inline in (True, False):     # a kv pool too small for the trace: refused the same way
        mp = pytest.MonkeyPatch()
        mp.setattr(Sim, "inline_transitions", inline)
        try:
            answers.append(result(run_sim(raw, work_cap=None)))
        except ScenarioError as e:
            answers.append((e.field, e.message))
        finally:
            mp.undo()
    assert answers[0] == answers[1]


def test_the_plain_path_is_really_taken(monkeypatch):
    """The switch is live: with it off the inlined code is never reached (every phase end goes
    through _transition), with it on most phase ends skip _transition."""
    from py_engine.sim.phases import Phases
    calls = {"n": 0}
    real = Phases._transition

    def counting(self, r):
        calls["n"] += 1
        return real(self, r)
    monkeypatch.setattr(Phases, "_transition", counting)
    raw = {"workload": {"requests": 50}}
    run_sim(raw)
    on = calls["n"]
    calls["n"] = 0
    monkeypatch.setattr(Sim, "inline_transitions", False)
    run = run_sim(raw)
    assert calls["n"] >= 2 * run.sim.n > on     # a last chunk and a last token per request


@pytest.mark.parametrize("cost", ["article", {"kind": "roofline", "model": "llama-3.1-8b",
                                              "gpu": "h100-80gb"}])
def test_the_fused_loop_is_taken_under_a_linear_cost_only(monkeypatch, cost):
    """inline_transitions also fuses the loop's stages (Sim._run_inline) under a linear cost:
    there no run goes through _execute; under the roofline every run does, and with the switch
    off every run does too."""
    calls = {"n": 0}
    real = Sim._execute

    def counting(self, *args):
        calls["n"] += 1
        return real(self, *args)
    monkeypatch.setattr(Sim, "_execute", counting)
    raw = {"workload": {"requests": 50}, "server": {"cost": cost}}
    run = run_sim(raw)
    fused = cost == "article"
    assert calls["n"] == (0 if fused else run.sim.rec.n_runs)
    calls["n"] = 0
    monkeypatch.setattr(Sim, "inline_transitions", False)
    run = run_sim(raw)
    assert calls["n"] == run.sim.rec.n_runs > 0


ROOFLINE = {"kind": "roofline", "model": "llama-3.1-8b", "gpu": "h100-80gb"}


@pytest.mark.parametrize("scheduler", ["continuous", "static", "vllm"])
def test_the_roofline_sums_moved_on_equal_a_walk(scheduler, monkeypatch):
    """Sim._run_line moves the roofline's sums on without walking the residents when no verb
    and no phase end changed the batch since the last run: at every run they equal a walk."""
    line, walk, moved = Sim._run_line, Sim._line_sums, []

    def checking(self, deployment):
        walks = len(moved)
        out = line(self, deployment)
        if len(moved) == walks:          # no walk: the sums were moved on
            moved.append(None)
            assert self._line_memo[2:] == walk(self)
        return out

    def walking(self):
        moved.append(True)
        return walk(self)

    monkeypatch.setattr(Sim, "_run_line", checking)
    monkeypatch.setattr(Sim, "_line_sums", walking)
    raw = {"scheduler": scheduler, "workload": {"requests": 120, "arrival": {
        "kind": "poisson", "rate": 6}}, "server": {"slots": 16, "cost": ROOFLINE}}
    run_sim(raw)
    if scheduler == "vllm":             # it ends runs where nothing changed
        assert None in moved
