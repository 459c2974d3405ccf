"""KV-cache capacity: the article's numbers, exact integer arithmetic, presets, validation."""

import json

import pytest

import py_engine.model.kv as kv
from py_engine.app import cli
from py_engine.app import protocol
from py_engine.errors import ScenarioError


def test_article_numbers():
    # "per_token = kv_bytes_per_token(32, 8, 128)  # Llama-3-8B bf16 -> 128 KiB/token"
    assert kv.kv_bytes_per_token(32, 8, 128) == 131_072 == 128 * 1024
    r = kv.kv_capacity(layers=32, kv_heads=8, head_dim=128, dtype="bf16", gpu_bytes=80e9,
                       gpu_mem_utilization=0.92, weight_bytes=16e9, context_len=2048)
    assert r["bytes_per_token"] == 131_072
    assert r["kv_pool_bytes"] == 57_600_000_000          # 0.92 * 80e9 - 16e9, exactly
    assert r["tokens"] == 439_453                         # 57.6e9 / 131072 = 439,453.125
    assert r["sequences"] == 214                          # 439,453 // 2048
    assert r["fits"] is True


def test_no_args_is_the_article_example():
    r = kv.kv_from_params({})
    assert (r["bytes_per_token"], r["tokens"], r["sequences"]) == (131_072, 439_453, 214)


def test_utilization_is_read_as_the_decimal_written():
    # 0.29 * 24e9 in binary floats is 6,959,999,999.999999; the decimal product is 6.96e9 exactly.
    assert int(0.29 * 24e9) == 6_959_999_999
    r = kv.kv_capacity(layers=1, kv_heads=1, head_dim=1, dtype="fp8", gpu_bytes=24e9,
                       gpu_mem_utilization=0.29, weight_bytes=0)
    assert r["bytes_per_token"] == 2
    assert r["kv_pool_bytes"] == 6_960_000_000
    assert r["tokens"] == 3_480_000_000


@pytest.mark.parametrize("model, published", [
    # Parameter counts as the model cards publish them (safetensors totals).
    ("llama-3-8b", 8_030_261_248),
    ("llama-3-70b", 70_553_706_496),
    ("llama-2-7b", 6_738_415_616),
    ("mistral-7b", 7_241_732_096),
    ("mixtral-8x7b", 46_702_792_704),
    ("qwen2.5-7b", 7_615_616_512),
    ("qwen2.5-72b", 72_706_203_648),
])
def test_param_counts_from_config_match_model_cards(model, published):
    assert kv.param_count(model) == published


@pytest.mark.parametrize("model, per_token", [
    ("llama-3-8b", 131_072), ("llama-3-70b", 327_680), ("llama-2-7b", 524_288),
    ("mistral-7b", 131_072), ("mixtral-8x7b", 131_072), ("qwen2.5-7b", 57_344),
    ("qwen2.5-72b", 327_680),
])
def test_preset_bytes_per_token(model, per_token):
    assert kv.kv_capacity(model, "h100-80gb")["bytes_per_token"] == per_token


def test_presets_and_gpus():
    p = kv.presets()
    assert set(p["models"]) == set(kv.MODELS) and set(p["gpus"]) == set(kv.GPUS)
    assert p["gpus"]["h200-141gb"]["gpu_bytes"] == 141_000_000_000
    assert all(m["source"].startswith("huggingface.co/") for m in p["models"].values())
    for model in kv.MODELS:
        for gpu in kv.GPUS:
            r = kv.kv_capacity(model, gpu)
            assert r["tokens"] >= 0 and r["sequences"] == r["tokens"] // 2048
            assert r["fits"] == (r["kv_pool_bytes"] > 0)
    # 70B bf16 weights (141 GB) do not fit one 80 GB card; four cards hold them and a KV pool
    # (vLLM 0.33.0's default gpu_memory_utilization 0.92 of 4 x 80 GB = 294.4 GB).
    assert kv.kv_capacity("llama-3-70b", "h100-80gb")["fits"] is False
    four = kv.kv_capacity("llama-3-70b", "h100-80gb", gpus=4)
    assert four["fits"] and four["tokens"] == (294_400_000_000 - 141_107_412_992) // 327_680


def test_fp8_kv_doubles_tokens_and_fp8_weights_halve_weight_bytes():
    bf = kv.kv_capacity("llama-3-8b", "h100-80gb", dtype="bf16")
    kv8 = kv.kv_capacity("llama-3-8b", "h100-80gb", dtype="bf16", kv_dtype="fp8")
    w8 = kv.kv_capacity("llama-3-8b", "h100-80gb", dtype="fp8")
    assert kv8["bytes_per_token"] * 2 == bf["bytes_per_token"]
    assert kv8["tokens"] == bf["kv_pool_bytes"] // 65_536
    assert w8["weight_bytes"] * 2 == bf["weight_bytes"] and w8["kv_dtype"] == "fp8"


def test_explicit_numbers_override_presets():
    r = kv.kv_capacity("llama-3-8b", "h100-80gb", weight_bytes=16e9, gpu_mem_utilization=0.92)
    assert r["tokens"] == 439_453
    r = kv.kv_capacity("llama-3-8b", gpu_bytes=80e9, kv_heads=32)
    assert r["bytes_per_token"] == 524_288


@pytest.mark.parametrize("params, field", [
    ({"layers": 0, "kv_heads": 8, "head_dim": 128, "gpu_bytes": 1e9, "weight_bytes": 0}, "layers"),
    ({"layers": 32, "kv_heads": 2.5, "head_dim": 128, "gpu_bytes": 1e9, "weight_bytes": 0},
     "kv_heads"),
    ({"layers": 32, "kv_heads": 8, "head_dim": "x", "gpu_bytes": 1e9, "weight_bytes": 0},
     "head_dim"),
    ({"layers": 32, "kv_heads": 8, "head_dim": 128, "weight_bytes": 0}, "gpu_bytes"),
    ({"layers": 32, "kv_heads": 8, "head_dim": 128, "gpu_bytes": 1e9}, "weight_bytes"),
    ({"model": "gpt-5"}, "model"),
    ({"model": "llama-3-8b", "gpu": "tpu"}, "gpu"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "dtype": "int3"}, "dtype"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "gpu_mem_utilization": 1.5}, "gpu_mem_utilization"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "gpu_mem_utilization": float("nan")},
     "gpu_mem_utilization"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "context_len": 0}, "context_len"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "gpus": True}, "gpus"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "gpu_bytes": float("inf")}, "gpu_bytes"),
    ({"model": "llama-3-8b", "gpu": "l4-24gb", "colour": "red"}, "colour"),
])
def test_bad_input_names_the_field(params, field):
    with pytest.raises(ScenarioError) as e:
        kv.kv_from_params(params)
    assert e.value.field == field
    assert e.value.message.startswith(field)


def test_package_exports_kv_capacity():
    import py_engine
    assert py_engine.kv_capacity is kv.kv_capacity
    assert py_engine.kv_bytes_per_token(32, 8, 128) == 131_072



def test_cli_kv_defaults_to_the_article(capsys):
    assert cli.main(["kv"]) == 0
    out = capsys.readouterr().out
    assert "131,072 B (128.0 KiB)" in out
    assert "439,453" in out and "sequences of 2,048     214" in out


def test_cli_kv_presets_and_json(capsys):
    assert cli.main(["kv", "--model", "qwen2.5-7b", "--gpu", "l4-24gb", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["bytes_per_token"] == 57_344 and r["gpu_bytes"] == 24_000_000_000
    assert r["tokens"] == r["kv_pool_bytes"] // 57_344
    assert cli.main(["kv", "--presets"]) == 0
    out = capsys.readouterr().out
    assert "mixtral-8x7b" in out and "h200-141gb" in out


def test_cli_kv_bad_input_is_one_line_and_exit_2(capsys):
    assert cli.main(["kv", "--model", "llama-3-8b", "--gpu", "h100-80gb", "--util", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gpu_mem_utilization = 2" in err


def test_protocol_kv():
    r = protocol.handle({"method": "kv", "params": {}})
    assert r["ok"] and (r["result"]["tokens"], r["result"]["sequences"]) == (439_453, 214)
    r = protocol.handle({"method": "kv", "params": {"presets": True}})
    assert r["ok"] and "llama-3-8b" in r["result"]["models"]
    r = protocol.handle({"method": "kv", "params": {"model": "llama-3-8b", "gpu": "h100-80gb",
                                                    "gpu_mem_utilization": 0.92,
                                                    "weight_bytes": 16e9}})
    assert r["ok"] and r["result"]["tokens"] == 439_453
    r = protocol.handle({"method": "kv", "params": {"model": "llama-3-8b", "kv_heads": -1}})
    assert not r["ok"] and r["error"]["field"] == "kv_heads"
    assert r["error"]["type"] == "ScenarioError"
    r = protocol.handle({"method": "kv", "params": {"model": "llama-3-8b", "gpu": "h100-80gb",
                                                    "context_len": float("nan")}})
    assert not r["ok"] and r["error"]["field"] == "context_len"
    json.dumps(r, allow_nan=False)  # pure JSON: no NaN leaves the protocol
