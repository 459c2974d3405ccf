"""Benchmarks (`python -m py_engine bench`): measured in one run, printed as ratios, never asserted
in unit tests. engine.py: the event-driven engine vs the article's step loop, and one million
requests; vllm.py: the vllm policy event-driven vs stepped pass by pass; work.py: the work cap
holds on random valid scenarios; fleet.py: 8 vllm replicas on the Mooncake trace. (The planner's,
with --workers, is bench/plan.py: app is above this layer.) The benchmarks run with no work cap (they measure the engine,
not the cap) and say so; work.py measures the cap itself."""


def main(quick=False):
    from . import engine, fleet, vllm, work   # on demand: the benchmarks load only when run
    print("(no work cap: every run goes to its end)")
    engine.main(quick=quick)
    vllm.main(quick=quick)
    vllm.nothing_binds(quick=quick)
    work.main(quick=quick)
    fleet.main(quick=quick)
