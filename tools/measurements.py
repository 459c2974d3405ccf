"""Make py_engine/data/measurements.py, the public measurements `python -m py_engine validate` compares
the roofline cost model with, from their published source (verified by sha256).

    python3 tools/measurements.py [PATH_TO_perf_model.csv [PATH_TO_silicon_sample.csv]]
                                                             (default: downloads them)

Source: the Splitwise paper's artifact (Patel et al., "Splitwise: Efficient Generative LLM
Inference Using Phase Splitting", ISCA 2024), github.com/Mutinifni/splitwise-sim, file
data/perf_model.csv at commit 8f99e7dc9b407f4ce2488d03dd44c0b8b946dab0, MIT License, Copyright (c)
2024 Pratyush Patel: measured prompt (prefill) time and per-token (decode) time of Llama-2-70B
(tensor parallel 2, 4, 8) and BLOOM-176B (8) on DGX-A100 and DGX-H100 machines, for batch sizes
1-64, prompts of 128-8,192 tokens and outputs of 128-8,192 tokens, 5 repetitions each.

Second source: NVIDIA AIConfigurator's silicon measurements of served models,
github.com/ai-dynamo/aiconfigurator, file aic-core/src/aiconfigurator_core/systems/silicon_sample.csv
at commit 095f58a51c4ca8e61b66ec108d86f223f8d559ce, Apache License 2.0: mean TTFT and TPOT of a
deployment under a closed-loop benchmark at a concurrency, prompt (isl) and output (osl). Kept: the
vLLM rows (aggregated serving, no pipeline or attention data parallelism) of the models that are
presets here (Qwen3-32B, Llama-3.1-70B, Llama-3.1-8B-Instruct-FP8) on H100 SXM and H200 SXM.

Kept of Splitwise: the median of the repetitions of every configuration. Left out, and why: the power-capped
H100 rows (`h100-80gb-pcap`: not a preset here), and batch 64 at tensor parallel 2 (its prompt time
is 8x below batch 32's and its end-to-end time 20x the sum of its parts: not one batch's
prefill).
"""

import csv
import hashlib
import io
import statistics
import sys
import urllib.request
from collections import defaultdict
from pathlib import Path

COMMIT = "8f99e7dc9b407f4ce2488d03dd44c0b8b946dab0"
URL = ("https://raw.githubusercontent.com/Mutinifni/splitwise-sim/%s/data/perf_model.csv"
       % COMMIT)
OUT = Path(__file__).resolve().parents[1] / "py_engine" / "data" / "measurements.py"
MODELS = {"llama2-70b": "llama-2-70b", "bloom-176b": "bloom-176b"}


def rows(text):
    groups = defaultdict(list)
    for r in csv.DictReader(io.StringIO(text)):
        hw, tp, b = r["hardware"], int(r["tensor_parallel"]), int(r["batch_size"])
        if hw.endswith("-pcap") or (tp == 2 and b == 64):
            continue
        key = (MODELS[r["model"]], hw, tp, int(r["prompt_size"]), b, int(r["token_size"]))
        groups[key].append((float(r["prompt_time"]), float(r["token_time"])))
    return [key + (round(statistics.median(p for p, _ in v), 3),
                   round(statistics.median(t for _, t in v), 3), len(v))
            for key, v in sorted(groups.items())]


AIC_COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
AIC_PATH = "aic-core/src/aiconfigurator_core/systems/silicon_sample.csv"
AIC_URL = "https://raw.githubusercontent.com/ai-dynamo/aiconfigurator/%s/%s" % (AIC_COMMIT, AIC_PATH)
AIC_EXPECTED = "4240bfaf555b6f8b2c62512074e5efbb7791cdbb0344b068408f397588499adb"
AIC_MODELS = {"Qwen/Qwen3-32B": "qwen3-32b", "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
              "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b"}
AIC_GPUS = {"h100_sxm": "h100-80gb", "h200_sxm": "h200-141gb"}
AIC_DTYPES = {"": "bf16", "fp8": "fp8"}


def served_rows(text):
    """(model, gpu, tp, dtype, prompt, output, concurrency, ttft ms, tpot ms, vllm version)."""
    out = []
    for r in csv.DictReader(io.StringIO(text)):
        if (r["backend"] != "vllm" or r["mode"] != "agg" or r["model_path"] not in AIC_MODELS
                or r["system"] not in AIC_GPUS or r["pp_size"] != "1"
                or r["attention_dp_size"] not in ("", "1")):
            continue
        out.append((AIC_MODELS[r["model_path"]], AIC_GPUS[r["system"]], int(r["tp_size"]),
                    AIC_DTYPES[r["precision"]], int(r["isl"]), int(r["osl"]),
                    int(r["batch_size"]), round(float(r["silicon_ttft_ms"]), 3),
                    round(float(r["silicon_tpot_ms"]), 3), r["backend_version"] or "unrecorded"))
    return sorted(out)


def _read(path, url, expected, name):
    data = Path(path).read_bytes() if path else urllib.request.urlopen(url, timeout=60).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise SystemExit("%s: sha256 %s, expected %s" % (name, digest, expected))
    return data, digest


def main(argv):
    data, digest = _read(argv[0] if argv else None, URL, EXPECTED, "perf_model.csv")
    aic, aic_digest = _read(argv[1] if len(argv) > 1 else None, AIC_URL, AIC_EXPECTED,
                            "silicon_sample.csv")
    table = rows(data.decode())
    served = served_rows(aic.decode())
    lines = ["    %r," % (r,) for r in table]
    OUT.write_text(
        '"""Public measurements the roofline cost model is validated against (py_engine.analysis.validate).\n\n'
        "Made by tools/measurements.py from the Splitwise artifact (Patel et al., ISCA 2024),\n"
        "github.com/Mutinifni/splitwise-sim data/perf_model.csv at commit\n%s\n(sha256 %s),\n"
        "MIT License, Copyright (c) 2024 Pratyush Patel. Do not edit.\n\n"
        "SPLITWISE: (model, gpu, tensor parallel, prompt tokens, batch, output tokens, prompt ms,\n"
        "per-token ms, repetitions): the medians of the measured repetitions.\n\n"
        "SERVED: from NVIDIA AIConfigurator, github.com/ai-dynamo/aiconfigurator\n%s at commit\n"
        "%s\n(sha256 %s), Apache License 2.0\n"
        "(py_engine/data/LICENSE-APACHE-2.0.txt): (model, gpu, tensor parallel, dtype, prompt\n"
        "tokens, output tokens, concurrency, mean TTFT ms, mean TPOT ms, vLLM version) of vLLM\n"
        "deployments under a closed-loop benchmark (tools/measurements.py says which rows).\n"
        '"""\n\nSOURCE = %r\nLICENSE = %r\nSERVED_SOURCE = %r\nSERVED_LICENSE = %r\n\n'
        'SPLITWISE = [\n%s\n]\n\nSERVED = [\n%s\n]\n' % (
            COMMIT, digest, AIC_PATH, AIC_COMMIT, aic_digest,
            "Splitwise (Patel et al., ISCA 2024) artifact: github.com/Mutinifni/splitwise-sim "
            "data/perf_model.csv @ %s; DGX-A100 and DGX-H100" % COMMIT[:7],
            "MIT License, Copyright (c) 2024 Pratyush Patel",
            "NVIDIA AIConfigurator silicon measurements: github.com/ai-dynamo/aiconfigurator "
            "%s @ %s; vLLM on H100 SXM and H200 SXM" % (AIC_PATH, AIC_COMMIT[:7]),
            "Apache License 2.0", "\n".join(lines),
            "\n".join("    %r," % (r,) for r in served)))
    print("wrote %s: %d configurations, %d served" % (OUT.relative_to(OUT.parents[1]),
                                                      len(table), len(served)))
    return 0


EXPECTED = "dbbe505d1d64fc4bd1ec03c50edf944643586de4f68a81e94cbd55dd5bdfbf41"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
