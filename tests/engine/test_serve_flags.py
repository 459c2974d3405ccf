"""The scenario as `vllm serve` flags (py_engine/app/serve_flags.py, protocol method serve_flags),
and vLLM's knob names in the field labels the page, README and recommendations derive from."""

import shlex

import pytest

from py_engine.api import _words
from py_engine.app.protocol import handle
from py_engine.data.deployments import MODELS
from py_engine.scenario import fields


def command(scenario):
    r = handle({"method": "serve_flags", "params": {"scenario": scenario}})
    assert r["ok"], r
    return r["result"]["command"]


def parsed(scenario):
    """{flag: value or True} of the command, and its first three words."""
    words = shlex.split(command(scenario))
    head, out, i = words[:3], {}, 3
    while i < len(words):
        assert words[i].startswith("--"), words[i]
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[words[i]] = words[i + 1]
            i += 2
        else:
            out[words[i]] = True
            i += 1
    return head, out


def test_defaults_name_every_scheduler_knob():
    head, f = parsed({})
    assert head == ["vllm", "serve", "<model>"]     # the article's cost names no model
    assert f == {"--max-num-seqs": "8", "--max-num-batched-tokens": "2048",
                 "--long-prefill-token-threshold": "512", "--block-size": "16",
                 "--enable-prefix-caching": True, "--async-scheduling": True,
                 "--scheduling-policy": "fcfs"}


def test_roofline_deployment_and_a_kv_pool():
    head, f = parsed({"server": {"slots": 32, "max_num_batched_tokens": 4096, "chunk": 256,
                                 "block_size": 32, "kv_tokens": 16_000,
                                 "enable_prefix_caching": False, "async_scheduling": False,
                                 "policy": "priority",
                                 "cost": {"kind": "roofline", "model": "llama-3.1-70b",
                                          "gpu": "h100-80gb", "tp": 4, "kv_dtype": "fp8",
                                          "gpu_memory_utilization": 0.85}}})
    assert head == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]
    assert f == {"--tensor-parallel-size": "4", "--dtype": "bfloat16", "--kv-cache-dtype": "fp8",
                 "--gpu-memory-utilization": "0.85", "--max-num-seqs": "32",
                 "--max-num-batched-tokens": "4096", "--long-prefill-token-threshold": "256",
                 "--block-size": "32",
                 "--num-gpu-blocks-override": str(16_000 // 32 + 1),   # + vLLM's null block
                 "--no-enable-prefix-caching": True, "--no-async-scheduling": True,
                 "--scheduling-policy": "priority"}


def test_each_model_has_its_hugging_face_id_and_fp8_weights_quantize():
    head, f = parsed({"server": {"cost": {"kind": "roofline", "model": "qwen2.5-7b",
                                          "dtype": "fp8", "kv_dtype": "bf16"}}})
    assert head[2] == "Qwen/Qwen2.5-7B"
    assert f["--quantization"] == "fp8" and "--dtype" not in f
    assert f["--kv-cache-dtype"] == "bfloat16"
    for model, m in MODELS.items():
        name = parsed({"server": {"cost": {"kind": "roofline", "model": model}}})[0][2]
        assert m["source"] == "huggingface.co/%s/blob/main/config.json" % name


def test_auto_and_unlimited_pools_give_no_override():
    for kv in (None, "auto"):
        _, f = parsed({"server": {"kv_tokens": kv, "cost": {"kind": "roofline"}}})
        assert "--num-gpu-blocks-override" not in f


def test_a_bad_scenario_is_an_answer_not_a_crash():
    r = handle({"method": "serve_flags", "params": {"scenario": {"server": {"slots": 0}}}})
    assert not r["ok"] and r["error"]["field"] == "server.slots"


@pytest.mark.parametrize("path, name", [
    ("server.slots", "max_num_seqs"),
    ("server.max_num_batched_tokens", "max_num_batched_tokens"),
    ("server.chunk", "long_prefill_token_threshold"),
    ("server.block_size", "block_size"),
    ("server.enable_prefix_caching", "enable_prefix_caching"),
    ("server.async_scheduling", "async_scheduling"),
])
def test_labels_carry_vllms_knob_names(path, name):
    label = fields.BY_PATH[path].label
    assert label.endswith("(%s)" % name), label
    assert _words(fields.BY_PATH[path]) == name


# vLLM's table, read in vllm/engine/arg_utils.py EngineArgs.get_batch_defaults for
# UsageContext.OPENAI_API_SERVER, per GPU preset: (max_num_seqs, max_num_batched_tokens)
VLLM_SERVE = {"a100-80gb": (256, 2048), "a100-40gb": (256, 2048), "h100-80gb": (1024, 8192),
              "h200-141gb": (1024, 8192), "l40s-48gb": (256, 2048), "b200-180gb": (1024, 8192),
              "l4-24gb": (256, 2048), "rtx-4090-24gb": (256, 2048)}


def test_vllm_serve_defaults_per_gpu():
    from py_engine.data.deployments import GPUS, vllm_serve_defaults
    assert set(VLLM_SERVE) == set(GPUS)
    for gpu, (seqs, tokens) in VLLM_SERVE.items():
        d = vllm_serve_defaults(gpu)
        assert (d["max_num_seqs"], d["max_num_batched_tokens"]) == (seqs, tokens), gpu
        assert d["long_prefill_token_threshold"] == 0


def test_run_on_this_deployment_gets_the_defaults_as_scenario_fields():
    """The kv answer (the deployment panel) carries the fields "Run on this deployment" sets: the
    page applies them, it does not know the rule."""
    from py_engine.app import protocol
    from py_engine.app.serve_flags import flags
    for gpu, (seqs, tokens) in VLLM_SERVE.items():
        out = protocol.handle({"method": "kv", "params": {"model": "llama-3.1-8b", "gpu": gpu}})
        assert out["ok"], out
        got = out["result"]["roofline"]["serve_defaults"]
        assert got["values"] == {"server.slots": seqs, "server.max_num_batched_tokens": tokens,
                                 "server.chunk": 0}
        # a scenario with those values is the command vllm serve runs without these flags
        sc = {"scheduler": "vllm", "server": {"slots": seqs, "max_num_batched_tokens": tokens,
                                              "chunk": 0}}
        words = flags(sc)
        for knob, v in got["knobs"].items():
            assert words[words.index("--" + knob.replace("_", "-")) + 1] == str(v)
