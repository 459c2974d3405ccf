"""Cited tables and compact data (the lowest layer: it imports nothing of the engine but errors)."""
