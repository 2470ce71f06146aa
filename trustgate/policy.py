"""Deprecated: policies live in :mod:`trustgate.policies` (and the root)."""

from trustgate._lazy import deprecated_module
from trustgate.policies import (
    CAVEAT_HEADER,
    OVERRIDE_NOTE,
    BlockToolCalls,
    Caveat,
    Halt,
    Override,
    Policy,
    Redact,
    Rerender,
    Review,
    policy_chain,
)

__all__ = [
    "CAVEAT_HEADER",
    "OVERRIDE_NOTE",
    "BlockToolCalls",
    "Caveat",
    "Halt",
    "Override",
    "Policy",
    "Redact",
    "Rerender",
    "Review",
    "policy_chain",
]

deprecated_module("trustgate.policy", "import policies from trustgate or trustgate.policies")
