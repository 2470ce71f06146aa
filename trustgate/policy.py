"""Kept for older imports: policies live in :mod:`trustgate.policies`."""

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
