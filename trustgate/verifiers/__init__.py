"""Deterministic checks: (claim, evidence) -> Finding."""
