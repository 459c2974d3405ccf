"""The worst valid scenarios we know, natively and in the page: time to an answer (a result or the
work cap's refusal), peak memory, and what the page says.

    .venv/bin/python bench/extremes.py            # builds dist/, serves it, measures (needs the venv)

Natively: `python -m py_engine compare` in a child process (its wall time and peak RSS, as the CLI
user sees them). In the page: navigation to the link -> the page idle with an answer, and the peak
resident memory of the Chromium processes this run started, sampled every 0.2 s (a bound on the
page's cost, not a per-tab figure). Printed from one run; nothing is asserted.
"""

import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_engine.scenario import fields  # noqa: E402
from tools.browser import launch  # noqa: E402
from tools.measure import serve_dist  # noqa: E402
from tools.site import build  # noqa: E402

CASES = [   # page links; the same scenario runs natively
    "requests=20000&output_mean=1000&prompt_mean=1000&skew=0.95&slots=4096&vllm=1",
    "requests=20000&prompt_mean=1000&output_mean=100&skew=0.95&slots=4096&chunk=1"
    "&kv_tokens=500000&vllm=1",
    "requests=20000&slots=4096&output_mean=100000&prompt_mean=1000000&skew=0.95&chunk=1&vllm=1",
]


def _start_tick(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19])


def _chromium_mb(since):
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if _start_tick(pid) < since or b"chrom" not in open(f"/proc/{pid}/cmdline", "rb").read():
                continue
            total += next(int(l.split()[1]) for l in open(f"/proc/{pid}/status")
                          if l.startswith("VmRSS"))
        except (OSError, StopIteration, ValueError):
            pass
    return total // 1024


def native(query):
    args = ["compare", "--scheduler", "vllm"]
    for part in query.split("&"):
        k, v = part.split("=")
        if k != "vllm":
            args += ["--" + fields.BY_URL[k].flag, v]
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "py_engine", *args], capture_output=True, text=True,
                       cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    dt = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    said = p.stderr.strip() or "a result"
    return dt, rss, said


def main():
    build()
    url, server = serve_dist()
    since = _start_tick("self")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = launch(p)
        for q in CASES:
            dt, rss, said = native(q)
            print(q)
            print("  native: %.1f s, peak RSS %d MB (the largest child so far); %s" % (dt, rss, said[:200]))
            page = browser.new_page()
            page.goto(url + "?requests=30")
            page.wait_for_selector("html[data-state=ready]", state="attached", timeout=120_000)
            base = _chromium_mb(since)
            peak, stop = [base], threading.Event()

            def sample():
                while not stop.wait(0.2):
                    peak[0] = max(peak[0], _chromium_mb(since))
            th = threading.Thread(target=sample)
            th.start()
            t = time.perf_counter()
            page.goto(url + "?" + q)
            page.wait_for_selector("html[data-state=ready]", state="attached", timeout=120_000)
            page.wait_for_function("() => !('busy' in document.documentElement.dataset)",
                                   timeout=900_000)
            dt = time.perf_counter() - t
            stop.set()
            th.join()
            msg = page.eval_on_selector_all("[data-error-for]", "els => els.map(e => e.textContent)"
                                            ".filter(Boolean).join(' | ')") or "a result"
            print("  page:   %.1f s; Chromium RSS %d -> peak %d MB; %s" % (dt, base, peak[0], msg[:200]))
            page.close()
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
