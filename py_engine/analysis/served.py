"""A served deployment under a closed-loop benchmark: `concurrency` clients, each sending its next
request (`prompt` tokens in, `output` out) as soon as its last one is done, as `vllm bench serve
--max-concurrency`, genai-perf and aiperf do. The server is the vllm scheduler with the flags
`vllm serve` takes by default on a GPU of >= 70 GiB (SERVE) and the deployment's own KV pool
(kv_tokens auto, vLLM's gpu_memory_utilization 0.9). The answer: mean TTFT and mean TPOT over
every request, as those benchmarks print them.

A closed loop feeds arrivals back from completions, which a trace given in advance cannot: the
loop is found by simulating until the arrivals repeat. All clients start at once; the j-th
request to finish sends request concurrency + j (clients are alike, so which one sends it does not
matter). Arrival ticks are the completions' own ticks, exactly.

Repricing (`Loop.reprice`): the batches a closed loop runs do not depend on what a pass costs (a
request arrives exactly when another is done, at the end of a pass, so it joins the next pass
whatever the clock says; the scheduler decides on tokens and blocks, not on time). The loop's runs
of identical batches are recorded once; their cost under other coefficients is the core's own
arithmetic over them (run_line, floor sums), so a fit can try thousands of coefficient sets
without simulating again. tests/engine/test_served.py holds repricing equal to simulating.
"""

from dataclasses import replace

from ..model.cost import Cost
from ..model.roofline import Deployment
from ..policies.vllm.scheduler import VLLM
from ..scenario.prepared import prepare
from ..sim.core import Sim
from ..sim.exact import SUB, floor_sum
from ..workload.generator import Trace

# `vllm serve`'s defaults for a GPU of >= 70 GiB that is not an A100 (vLLM's EngineArgs,
# usage context OPENAI_API_SERVER): max_num_seqs 1024, max_num_batched_tokens 8192;
# long_prefill_token_threshold 0 (off); gpu_memory_utilization 0.9.
SERVE = {"slots": 1024, "max_num_batched_tokens": 8192, "chunk": 0, "kv_tokens": "auto"}
GPU_MEMORY_UTILIZATION = 0.9
REQUESTS_PER_CLIENT = 4
MAX_ROUNDS = 64


def scenario(cost):
    """The served deployment's scenario (cost: a roofline cost object)."""
    cost = dict({"kind": "roofline", "gpu_memory_utilization": GPU_MEMORY_UTILIZATION}, **cost)
    return prepare({"scheduler": "vllm", "server": dict(SERVE, cost=cost)})


class _Recorder:
    """The deployment as the core sees it, noting every run's batch (its line's arguments) and
    the passes run before it."""

    def __init__(self, deployment):
        self.deployment, self.sim, self.runs = deployment, None, []

    def __getattr__(self, name):
        return getattr(self.deployment, name)

    def run_line(self, *batch):
        self.runs.append((self.sim.passes, batch))
        return self.deployment.run_line(*batch)


def _simulate(sc, arrive, prompt, output, record=False):
    n = len(arrive)
    trace = Trace(list(arrive), [prompt] * n, [output] * n)
    rec = _Recorder(sc.deployment) if record else None
    if rec:
        sc = replace(sc, deployment=rec)
    sim = Sim(trace, sc["server"]["slots"], Cost.from_scenario(sc))
    if rec:
        rec.sim = sim
    sim.run(VLLM(sim, sc, trace))
    return sim, rec


class Loop:
    """A finished closed loop: per request its arrival, first and last token (ticks and passes),
    and the runs it took (for repricing)."""

    def __init__(self, sc, concurrency, prompt, output, per_client=REQUESTS_PER_CLIENT):
        n = concurrency * per_client
        starts = [0] * concurrency          # every client sends its first request at once
        arrive = [0] * n
        for _ in range(MAX_ROUNDS):
            sim, rec = _simulate(sc, arrive, prompt, output, record=True)
            runs = _Runs(rec.runs, sim.passes)
            first = runs.ends(sc.deployment, starts)
            nxt = sorted([first[s] for s in starts] + sorted(sim.done_tick)[:n - concurrency])
            if nxt == arrive:
                break
            arrive = nxt
        else:
            raise RuntimeError("the closed loop did not settle in %d rounds" % MAX_ROUNDS)
        self.output, self.n, self.runs = output, n, runs
        self.first, self.last, self.arrive = list(sim.first_tick), list(sim.last_tick), arrive
        # in passes: a request arrives at the end of a pass (its sender's last, or a start)
        end_pass = dict(zip(sim.done_tick, sim.done_pass))
        end_pass.update((first[s], s) for s in starts)
        self.arrive_pass = [end_pass[t] for t in arrive]
        self.first_pass, self.last_pass = list(sim.first_pass), list(sim.done_pass)
        self.measure = self._means(self.arrive, self.first, self.last)

    def _means(self, arrive, first, last):
        """(mean TTFT ms, mean TPOT ms) of ticks (1e-6 ms)."""
        ttft = sum(f - a for f, a in zip(first, arrive)) / self.n / 1e6
        tpot = (sum(la - f for la, f in zip(last, first)) / (self.output - 1) / self.n / 1e6
                if self.output > 1 else 0.0)
        return ttft, tpot

    def reprice(self, deployment):
        """(mean TTFT ms, mean TPOT ms) of the same batches under another Deployment."""
        want = set(self.arrive_pass) | set(self.first_pass) | set(self.last_pass)
        at = self.runs.ends(deployment, want).__getitem__
        return self._means([at(p) for p in self.arrive_pass], [at(p) for p in self.first_pass],
                           [at(p) for p in self.last_pass])


class _Runs:
    """The runs of identical batches a simulation took: (passes before it, its batch)."""

    def __init__(self, runs, passes):
        self.runs, self.passes = runs, passes

    def ends(self, d, wanted):
        """{pass index: the tick it ends at} for the wanted indices (0: time 0), under Deployment
        d, summed as the core sums them (sim/core.py: run_line, split where it crosses)."""
        wanted = sorted(set(wanted))
        out, now, w, runs = {}, 0, 0, self.runs
        while w < len(wanted) and wanted[w] == 0:
            out[0] = 0
            w += 1
        for i, (start, batch) in enumerate(runs):
            if w == len(wanted):
                break
            k_all = (runs[i + 1][0] if i + 1 < len(runs) else self.passes) - start
            tokens, rows, ctx, att, d_ctx, d_att, ptoks = batch
            done = 0
            while done < k_all:           # split where the roofline's other line takes over
                K, a, b, cross = d.run_line(tokens, rows, ctx + d_ctx * done,
                                            att + d_att * done, d_ctx, d_att, ptoks)
                k = k_all - done if cross is None else min(k_all - done, cross)
                while w < len(wanted) and wanted[w] <= start + done + k:
                    j = wanted[w] - start - done        # passes of this piece up to it
                    out[wanted[w]] = now + j * K + floor_sum(j, SUB, b, a + SUB - 1)
                    w += 1
                now += k * K + floor_sum(k, SUB, b, a + SUB - 1)
                done += k
        return out


def deployment_of(sc):
    """The prepared scenario's Deployment (what Loop.reprice takes) with other tunables."""
    d = sc.deployment

    def with_params(params):
        return Deployment(d.model, d.gpu, d.tp, d.dtype, d.kv_dtype, d.fit, **params)
    return with_params
