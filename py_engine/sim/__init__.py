"""The simulator: the integer clock, the residents' phases, the policy interface (view, verbs) and the event loop."""
