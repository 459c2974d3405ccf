"""Helpers shared by test files (plain modules, imported by name: tests/ is on pytest's path)."""
