"""`python -m py_engine kv` and the worker protocol's "kv" method."""

import json

from py_engine import cli, protocol


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
