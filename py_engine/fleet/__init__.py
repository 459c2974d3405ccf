"""Fleets: N replicas of the server behind a router, one clock (run.py), the routers
(routers/), and a fleet's result (result.py). SPEC §8."""
