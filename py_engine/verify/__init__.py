"""Self-verification shipped with the engine (`python -m py_engine check`, and in the page):
check.py runs the checks; reference.py is the article's brute-force loop and closed form, written
independently of the core; vllm_checks.py holds what must hold for the vllm policy on any trace.
(The test suite keeps its own, separate references.)"""
