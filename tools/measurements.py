"""Make py_engine/data/measurements.py, the public measurements `python -m py_engine validate` compares
the roofline cost model with, from their published source (verified by sha256).

    python3 tools/measurements.py [PATH_TO_perf_model.csv]   (default: downloads it)

Source: the Splitwise paper's artifact (Patel et al., "Splitwise: Efficient Generative LLM
Inference Using Phase Splitting", ISCA 2024), github.com/Mutinifni/splitwise-sim, file
data/perf_model.csv at commit 8f99e7dc9b407f4ce2488d03dd44c0b8b946dab0, MIT License, Copyright (c)
2024 Pratyush Patel: measured prompt (prefill) time and per-token (decode) time of Llama-2-70B
(tensor parallel 2, 4, 8) and BLOOM-176B (8) on DGX-A100 and DGX-H100 machines, for batch sizes
1-64, prompts of 128-8,192 tokens and outputs of 128-8,192 tokens, 5 repetitions each.

Kept: the median of the repetitions of every configuration. Left out, and why: the power-capped
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


def main(argv):
    if argv:
        data = Path(argv[0]).read_bytes()
    else:
        data = urllib.request.urlopen(URL, timeout=60).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != EXPECTED:
        print("perf_model.csv: sha256 %s, expected %s" % (digest, EXPECTED), file=sys.stderr)
        return 1
    table = rows(data.decode())
    lines = ["    %r," % (r,) for r in table]
    OUT.write_text(
        '"""Public measurements the roofline cost model is validated against (py_engine.analysis.validate).\n\n'
        "Made by tools/measurements.py from the Splitwise artifact (Patel et al., ISCA 2024),\n"
        "github.com/Mutinifni/splitwise-sim data/perf_model.csv at commit\n%s\n(sha256 %s),\n"
        "MIT License, Copyright (c) 2024 Pratyush Patel. Do not edit.\n\n"
        "SPLITWISE: (model, gpu, tensor parallel, prompt tokens, batch, output tokens, prompt ms,\n"
        "per-token ms, repetitions): the medians of the measured repetitions.\n"
        '"""\n\nSOURCE = %r\nLICENSE = %r\n\nSPLITWISE = [\n%s\n]\n' % (
            COMMIT, digest,
            "Splitwise (Patel et al., ISCA 2024) artifact: github.com/Mutinifni/splitwise-sim "
            "data/perf_model.csv @ %s; DGX-A100 and DGX-H100" % COMMIT[:7],
            "MIT License, Copyright (c) 2024 Pratyush Patel", "\n".join(lines)))
    print("wrote %s: %d configurations" % (OUT.relative_to(OUT.parents[1]), len(table)))
    return 0


EXPECTED = "dbbe505d1d64fc4bd1ec03c50edf944643586de4f68a81e94cbd55dd5bdfbf41"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
