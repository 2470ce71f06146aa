"""Deterministic checks: (claim, evidence) -> Finding.

The implementation behind :mod:`trustgate` (the verifiers), :mod:`trustgate.files`,
:mod:`trustgate.drafts` and :mod:`trustgate.contracts`: import from those. The module
paths in here are not part of the API and may change without a deprecation period.
"""
