"""llm-d's published router comparison, reproduced in direction and size on the fleet engine.

Published (llm-d/llm-d-kv-cache benchmarking/73-capacity/README.md, commit a746476b, summarised in
the blog post llm-d.ai/blog/kvcache-wins-you-can-see): 8 pods x 2 H100, Qwen3-32B, 307,328 KV
tokens a pod; inference-perf shared_prefix: 150 groups, a 6,000-token system prompt, 1,200-token
questions, 1,000 output tokens; Poisson load rising 3 -> 60 QPS. Summary across the ladder:

    scheduler   output tok/s   TTFT p90 (s)
    precise         8730.0         0.542      prefix 3 / kv 2 / queue 2, the pods' KV events
    estimated       6944.4        31.083      prefix 1 / kv 1 / queue 1, its own index
    random          4428.7        92.551
    load            4266.4        94.865      queue 1 / kv 1

Ours: the same fleet, model, pool and workload (the generator's system prefix: request i is group
i mod 150; lengths exact), one Poisson rate instead of the ladder (RATE req/s, REQUESTS requests),
vllm with its defaults on each replica, the llm_d router with each configuration and the random
router. The comparison is of order and ratios (to random), not of absolute numbers: the ladder,
the model's real speed and inference-perf's own accounting are not reproduced.

    .venv/bin/python bench/llm_d_routers.py [requests] [rate]
"""

import sys
import time

import py_engine
from py_engine.app.papers.llm_d import ROUTERS, p90, scenario

PUBLISHED = {"precise": (8730.0, 0.542), "estimated": (6944.4, 31.083),
             "random": (4428.7, 92.551), "load": (4266.4, 94.865)}
REQUESTS, RATE = 1500, 8.0


def main(requests=REQUESTS, rate=RATE):
    print("llm-d's router table: 8 x Qwen3-32B on 2 x H100, 150 groups x 6,000-token prefix, "
          "%d requests, Poisson %g req/s" % (requests, rate))
    print("%-10s %12s %12s %10s %9s | %12s %12s" % ("router", "out tok/s", "TTFT p90 s",
                                                  "hit rate", "CPU s", "published", "TTFT p90"))
    ours = {}
    for name, router in ROUTERS.items():
        c = time.process_time()
        r = py_engine.simulate(scenario(requests, rate, router), work_cap=None)
        cpu = time.process_time() - c
        m = r["metrics"]
        ours[name] = (m["throughput_tok_s"], p90([q["ttft"] for q in r["requests"]]) / 1000)
        print("%-10s %12.0f %12.2f %10.3f %9.1f | %12.1f %12.3f" % (
            name, ours[name][0], ours[name][1], m["prefix_hit_rate"], cpu, *PUBLISHED[name]))
    print("throughput / random's:  " + ", ".join(
        "%s x%.2f (published x%.2f)" % (n, ours[n][0] / ours["random"][0],
                                        PUBLISHED[n][0] / PUBLISHED["random"][0])
        for n in ROUTERS if n != "random"))
    order = sorted(ROUTERS, key=lambda n: -ours[n][0])
    print("order by throughput: ours %s; published precise > estimated > random ~ load"
          % " > ".join(order))


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:]]
    main(int(args[0]) if args else REQUESTS, args[1] if len(args) > 1 else RATE)
