"""The requests: the seeded generator and the production traces."""
