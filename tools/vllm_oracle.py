"""Record what the REAL vLLM V1 scheduler decides, as the fixture the `vllm` policy is tested against.

Not part of CI: it needs vLLM 0.33.0 in its own virtualenv (about 9.4 GB, CUDA torch comes along;
on a CPU-only machine VLLM_TARGET_DEVICE=cpu, set here):

    python3 -m venv ~/vllm-venv && ~/vllm-venv/bin/pip install vllm==0.33.0
    ~/vllm-venv/bin/python tools/vllm_oracle.py record tests/fixtures/vllm-0.33.0.json.gz
    ~/vllm-venv/bin/python tools/vllm_oracle.py run '{"items": [[0,2,3],[0,2,3]], "slots": 2, ...}'
    python3 tools/vllm_oracle.py subset      # (no vLLM) the cases `py_engine check` replays

It drives vLLM's own `Scheduler` / `AsyncScheduler` with no model: a fake model runner samples a
token for every scheduled request whose step is not a partial prefill chunk; outputs are exactly
`out` tokens (ignore_eos). A request with a `prefix_id` starts with the first `prefix_len` tokens of
that id's shared token stream; its other prompt tokens are unique. A request whose whole prompt is
its stream's start (prefix_len = prompt) continues the stream: its outputs are the stream's next
tokens (a deterministic model answers the same context the same way, so the next turn of a
conversation, which starts with this prompt and answer, finds them cached); any other request
samples token 7 (its context is unique, so its blocks can match nobody's). Step time is the article's
cost, 22 + 0.35 * rows + 0.06 * prefill tokens (ms): rows = requests scheduled in the step, prefill
tokens = tokens scheduled for requests that are not decoding (a request decodes from the step after
its (re)prefill finished until it is preempted). The engine loop follows vLLM's EngineCore: sync
(`step`: schedule, run, update) or async (`step_with_batch_queue`, a batch queue of 2: step k+1 is
scheduled before step k's output is processed). The usable KV pool is `kv_tokens`; vLLM gets
kv_tokens // block_size + 1 blocks (it reserves one null block). The same loop as
../shared/vllm-oracle/vllm_harness.py, which verified it against hand-worked cases.

The fixture: for each case its config and trace, and what vLLM did: per request the step and time
of its first and last token and its preemptions; per step the tokens scheduled per request, the
preempted requests, the prefix-cache hit (computed tokens at admission) of each request admitted,
the free blocks after scheduling, and the step's start and end (ms).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
from collections import deque
from pathlib import Path

VLLM_VERSION = "0.33.0"
HERE = Path(__file__).resolve().parent
# A 2-layer Llama config lets vLLM's ModelConfig validate offline; no weights are loaded.
TINY_MODEL = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
              "num_hidden_layers": 2, "vocab_size": 32000, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "torch_dtype": "float16", "bos_token_id": 1,
              "eos_token_id": 2}
MAX_MODEL_LEN = 4096


def cost_ms(rows, prefill_tokens):
    return 22.0 + 0.35 * rows + 0.06 * prefill_tokens


def _vllm():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")   # no GPU: vLLM cannot infer a device
    import vllm
    assert vllm.__version__ == VLLM_VERSION, f"vLLM {vllm.__version__}, not {VLLM_VERSION}"
    return vllm


def make_scheduler(cfg, num_blocks, model_dir):
    import torch
    from vllm.config import CacheConfig, ModelConfig, SchedulerConfig, VllmConfig
    from vllm.v1.core.sched.async_scheduler import AsyncScheduler
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
    from vllm.v1.structured_output import StructuredOutputManager

    sc = SchedulerConfig(max_num_seqs=cfg["slots"], max_num_batched_tokens=cfg["budget"],
                         max_model_len=MAX_MODEL_LEN, is_encoder_decoder=False,
                         long_prefill_token_threshold=cfg["chunk"], enable_chunked_prefill=True,
                         async_scheduling=cfg["async_scheduling"],
                         scheduler_reserve_full_isl=cfg["scheduler_reserve_full_isl"],
                         policy=cfg["policy"])
    mc = ModelConfig(model=str(model_dir), dtype="float16", seed=0, skip_tokenizer_init=True,
                     max_model_len=MAX_MODEL_LEN)
    cc = CacheConfig(block_size=cfg["block_size"],
                     enable_prefix_caching=cfg["enable_prefix_caching"])
    vc = VllmConfig(scheduler_config=sc, model_config=mc, cache_config=cc)
    vc.scheduler_config.async_scheduling = cfg["async_scheduling"]  # post-init may resolve it
    kvc = KVCacheConfig(num_blocks=num_blocks, kv_cache_tensors=[], kv_cache_groups=[
        KVCacheGroupSpec(["layer"], FullAttentionSpec(block_size=cfg["block_size"],
                                                      num_kv_heads=1, head_size=1,
                                                      dtype=torch.float32))])
    cc.num_gpu_blocks = num_blocks
    cls = AsyncScheduler if cfg["async_scheduling"] else Scheduler
    return cls(vllm_config=vc, kv_cache_config=kvc, log_stats=False,
               structured_output_manager=StructuredOutputManager(vc),
               block_size=cfg["block_size"])


def stream_token(pid, j):
    """Token j of prefix id pid's shared stream."""
    return 500_000 + 104_729 * pid + j


def tokens_of(i, item):
    """The prompt tokens of request i: its prefix id's shared stream, then tokens of its own."""
    arrive, prompt, out, pid, plen, prio = item
    toks = [stream_token(pid, j) for j in range(plen)] if pid is not None else []
    return toks + [1000 + 7919 * i + j for j in range(len(toks), prompt)]


def next_output(item, emitted):
    """The token a request samples after `emitted` outputs (see the module docstring)."""
    arrive, prompt, out, pid, plen, prio = item
    return stream_token(pid, prompt + emitted) if pid is not None and plen == prompt else 7


KEEP_STEPS = 3000   # a case that never finishes (vLLM can livelock) keeps this many steps


def run(cfg, model_dir, max_steps=20_000):
    """Drive vLLM on one case -> {"finished", "requests": [...], "steps": [...]} (see the module
    docstring). A case that has not finished after max_steps is recorded as not finished, with
    its first KEEP_STEPS steps (vLLM livelocks on some tight-KV priority traces)."""
    from vllm.sampling_params import SamplingParams
    from vllm.utils.hashing import sha256
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    from vllm.v1.outputs import ModelRunnerOutput
    from vllm.v1.request import Request

    items = [tuple(x) for x in cfg["items"]]
    assert all(a[0] <= b[0] for a, b in zip(items, items[1:])), "items must be in arrival order"
    bs = cfg["block_size"]
    if cfg["kv_tokens"] is None:   # unlimited: room for every request at once
        num_blocks = sum(-(-(p + o) // bs) for _, p, o, *_ in items) + 8
    else:
        num_blocks = cfg["kv_tokens"] // bs + 1   # + vLLM's null block
    init_none_hash(sha256)
    s = make_scheduler(cfg, num_blocks, model_dir)
    hasher = get_request_block_hasher(bs, sha256)
    # ids in arrival order, zero-padded: vLLM breaks priority ties by request id (a string)
    reqs = [Request(request_id="%06d" % i, prompt_token_ids=tokens_of(i, it),
                    sampling_params=SamplingParams(max_tokens=it[2], ignore_eos=True,
                                                   min_tokens=it[2]),
                    pooling_params=None, arrival_time=it[0], block_hasher=hasher,
                    priority=it[5])
            for i, it in enumerate(items)]
    n = len(items)
    order = sorted(range(n), key=lambda i: (items[i][0], i))
    nxt, clock, gpu_free, finished, step = 0, 0.0, 0.0, 0, 0
    inflight = deque()
    qsize = 2 if cfg["async_scheduling"] else 1
    res = [{"first_step": None, "first_ms": None, "done_step": None, "done_ms": None,
            "tokens": 0} for _ in range(n)]
    steps = []
    decoding = set()
    while finished < n:
        if step > max_steps:
            return {"finished": False, "requests": res, "steps": steps[:KEEP_STEPS]}
        while nxt < n and items[order[nxt]][0] <= clock:
            s.add_request(reqs[order[nxt]])
            nxt += 1
        if s.has_requests():
            so = s.schedule()
            step += 1
            sched = dict(so.num_scheduled_tokens)
            for rid in so.preempted_req_ids:
                decoding.discard(rid)
            prefill, samples = 0, {}
            for rid, k in sched.items():
                samples[rid] = not s.requests[rid].is_prefill_chunk
                if rid not in decoding:
                    prefill += k
                if samples[rid]:
                    decoding.add(rid)
            start = max(gpu_free, clock)
            end = start + cost_ms(len(sched), prefill) if sched else start
            gpu_free = end
            # prefix-cache hits: computed tokens of the requests admitted in this step
            cached = {int(r.req_id): r.num_computed_tokens for r in so.scheduled_new_reqs}
            cr = so.scheduled_cached_reqs
            cached.update({int(r): c for r, c in zip(cr.req_ids, cr.num_computed_tokens)
                           if r in cr.resumed_req_ids})
            steps.append({"tokens": {int(r): k for r, k in sched.items()},
                          "preempted": sorted(int(r) for r in so.preempted_req_ids),
                          "cached": cached,
                          "free_blocks": s.kv_cache_manager.block_pool.get_num_free_blocks(),
                          "start": start, "end": end})
            inflight.appendleft((so, samples, end, step))
            if len(inflight) < qsize and (sched or s.has_requests()):
                continue
        elif not inflight:
            clock = max(clock, items[order[nxt]][0])
            continue
        so, samples, end, at = inflight.pop()
        clock = max(clock, end)
        ids = list(so.num_scheduled_tokens)
        mro = ModelRunnerOutput(req_ids=ids, req_id_to_index={r: i for i, r in enumerate(ids)},
                                sampled_token_ids=[[next_output(items[int(r)],
                                                                res[int(r)]["tokens"])]
                                                   if samples[r] else [] for r in ids])
        for eco in s.update_from_output(so, mro).values():
            for o in eco.outputs:
                i = int(o.request_id)
                if o.new_token_ids:
                    res[i]["tokens"] += len(o.new_token_ids)
                    if res[i]["first_step"] is None:
                        res[i]["first_step"], res[i]["first_ms"] = at, end
                if o.finish_reason is not None:
                    res[i]["done_step"], res[i]["done_ms"] = at, end
                    finished += 1
    for i, r in enumerate(reqs):
        res[i]["preemptions"] = r.num_preemptions
    return {"finished": True, "requests": res, "steps": steps}


# ------------------------------------------------------------------ the recorded cases

KNOBS = ("enable_prefix_caching", "async_scheduling", "scheduler_reserve_full_isl")


def _item(rng, arrive_spread, with_prefix, n_prefixes):
    prompt, out = rng.randint(1, 160), rng.randint(1, 40)
    pid, plen = None, 0
    if with_prefix and rng.random() < 0.7:
        pid = rng.randrange(n_prefixes)
        plen = min(prompt, rng.choice([8, 16, 32, 48, 64]))
    return [round(rng.uniform(0, arrive_spread), 3), prompt, out, pid, plen, rng.randint(0, 3)]


def random_case(rng, knobs, kv_limited, with_prefix, policy):
    bs = rng.choice([1, 4, 8, 16])
    items = [_item(rng, rng.choice([0, 60, 400]), with_prefix, rng.randint(1, 3))
             for _ in range(rng.randint(2, 14))]
    if with_prefix and rng.random() < 0.4:   # a conversation: a later turn extends an earlier one
        a = rng.randrange(len(items))
        base = items[a]
        base[3], base[4] = 100 + a, base[1]   # the earlier turn is the stream's start
        context = base[1] + base[2]           # its prompt and its answer
        items.append([round(base[0] + rng.uniform(0, 300), 3), context + rng.randint(1, 40),
                      rng.randint(1, 30), 100 + a, context, rng.randint(0, 3)])
    cfg = {"items": items, "slots": rng.randint(1, 8), "chunk": rng.choice([4, 16, 32, 64, 128, 256]),
           "budget": rng.choice([16, 48, 64, 128, 512]), "block_size": bs, "policy": policy,
           **knobs}
    cfg["budget"] = max(cfg["budget"], cfg["chunk"]) if rng.random() < 0.7 else cfg["budget"]
    if kv_limited:
        need = max(-(-(p + o - 1) // bs) for _, p, o, *_ in items) * bs
        cfg["kv_tokens"] = need + bs * rng.randint(0, 12)
    else:
        cfg["kv_tokens"] = None
    items.sort(key=lambda it: it[0])   # request i = the i-th arrival (stable), as in py_engine
    return cfg


HAND = [  # the three cases of the issue that found the differences
    {"name": "block accounting", "items": [[0, 2, 3, None, 0, 0], [0, 2, 3, None, 0, 0]],
     "slots": 2, "chunk": 10, "budget": 100, "kv_tokens": 6, "block_size": 1,
     "enable_prefix_caching": False, "async_scheduling": False,
     "scheduler_reserve_full_isl": False, "policy": "fcfs"},
    {"name": "full-prompt admission", "items": [[0, 100, 50, None, 0, 0], [0, 140, 4, None, 0, 0]],
     "slots": 2, "chunk": 32, "budget": 64, "kv_tokens": 160, "block_size": 16,
     "enable_prefix_caching": False, "async_scheduling": False,
     "scheduler_reserve_full_isl": True, "policy": "fcfs"},
    {"name": "async scheduling", "items": [[0, 10, 3, None, 0, 0], [0, 10, 8, None, 0, 0],
                                           [0, 10, 3, None, 0, 0]],
     "slots": 2, "chunk": 64, "budget": 128, "kv_tokens": None, "block_size": 16,
     "enable_prefix_caching": False, "async_scheduling": True,
     "scheduler_reserve_full_isl": True, "policy": "fcfs"},
]


def cases(per_cell=5, seed=20261201):
    """The hand cases, then per_cell random traces in every cell of the knob grid."""
    rng = random.Random(seed)
    out = [dict(c) for c in HAND]
    for bits in range(2 ** len(KNOBS)):
        knobs = {k: bool(bits >> j & 1) for j, k in enumerate(KNOBS)}
        for policy in ("fcfs", "priority"):
            for kv_limited in (False, True):
                for with_prefix in (False, True):
                    for _ in range(per_cell):
                        out.append(random_case(rng, knobs, kv_limited, with_prefix, policy))
    return out


def record(path, per_cell=5):
    import tempfile
    _vllm()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "config.json").write_text(json.dumps(TINY_MODEL))
        recorded = []
        for i, cfg in enumerate(cases(per_cell)):
            got = run(cfg, tmp)
            recorded.append({"config": cfg, "vllm": got})
            if i % 25 == 0:
                print(f"  {i} cases", file=sys.stderr)
    doc = {"recorded_by": "tools/vllm_oracle.py record (the real vLLM %s V1 scheduler, CPU, no "
                          "model)" % VLLM_VERSION,
           "vllm_version": VLLM_VERSION, "cost": "22 + 0.35 * rows + 0.06 * prefill_tokens ms",
           "cases": recorded}
    with gzip.open(path, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(f"wrote {path}: {len(recorded)} cases")


# A Python module, not a data file: the page restores the engine from a memory snapshot, which
# holds what was imported at build time but not the files beside it.
KEEP = "py_engine/verify/vllm_recorded.py"


def subset(fixture, out):
    """The cases `python -m py_engine check` replays (natively and in the page): the hand cases
    and, in every cell of the knob grid, its shortest finishing trace; compact (no vLLM needed)."""
    doc = json.loads(gzip.open(fixture).read())
    cells = {}
    for i, c in enumerate(doc["cases"][len(HAND):], len(HAND)):
        cfg = c["config"]
        if not c["vllm"]["finished"]:
            continue
        key = (tuple(cfg[k] for k in KNOBS), cfg["policy"], cfg["kv_tokens"] is None,
               any(it[3] is not None for it in cfg["items"]))
        if key not in cells or len(c["vllm"]["steps"]) < cells[key][1]:
            cells[key] = (i, len(c["vllm"]["steps"]))
    chosen = list(range(len(HAND))) + sorted(i for i, _ in cells.values())
    cases = []
    for i in chosen:
        c = doc["cases"][i]
        passes = [s for s in c["vllm"]["steps"] if s["tokens"]]   # empty steps run no pass
        runs = []
        for s in passes:
            if runs and runs[-1][1] == s["tokens"] and not s["cached"]:
                runs[-1][0] += 1
            else:
                runs.append([1, s["tokens"]])
        cases.append({"index": i, "config": c["config"], "runs": runs,
                      "cached": [[p, s["cached"]] for p, s in enumerate(passes, 1) if s["cached"]],
                      "requests": [[r["first_ms"], r["done_ms"], r["preemptions"]]
                                   for r in c["vllm"]["requests"]]})
    kept = {"recorded_by": doc["recorded_by"], "vllm_version": doc["vllm_version"],
            "cost": doc["cost"], "made_by": "tools/vllm_oracle.py subset %s" % fixture,
            "about": "per case: its config; the passes (vLLM's non-empty steps) as [count, tokens "
                     "per request] runs; [pass, prefix hit per admitted request]; per request "
                     "[first token ms, last token ms, preemptions]",
            "cases": cases}
    import base64
    import textwrap
    blob = base64.b64encode(gzip.compress(
        json.dumps(kept, separators=(",", ":"), sort_keys=True).encode(), mtime=0)).decode()
    Path(out).write_text(
        '"""Decisions of the real vLLM %s scheduler on %d traces, for `python -m py_engine check`.\n\n'
        'Made by `tools/vllm_oracle.py subset` from %s\n(recorded by `tools/vllm_oracle.py '
        'record`); do not edit. CASES: gzip-compressed JSON,\nbase64 (read by verify/vllm_cases.py).'
        '\n"""\n\n'
        "CASES = (\n%s\n)\n" % (doc["vllm_version"], len(cases), fixture, "\n".join(
            "    %r" % line for line in textwrap.wrap(blob, 92))))
    print("wrote %s: %d cases" % (out, len(cases)))


def main(argv):
    if argv[:1] == ["subset"]:
        subset(argv[1] if len(argv) > 1 else "tests/fixtures/vllm-0.33.0.json.gz",
               argv[2] if len(argv) > 2 else KEEP)
    elif argv[:1] == ["record"]:
        record(Path(argv[1]), per_cell=int(argv[2]) if len(argv) > 2 else 5)
    elif argv[:1] == ["run"]:
        import tempfile
        _vllm()
        cfg = json.loads(argv[1])
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "config.json").write_text(json.dumps(TINY_MODEL))
            print(json.dumps(run(cfg, tmp), indent=1))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
