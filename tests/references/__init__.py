"""The test suite's own, independent implementations the engine is checked against."""
