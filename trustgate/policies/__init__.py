"""What a failed check does, as decisions the gate applies.

Policies run in the order given. Each looks at the blocking findings no earlier
policy resolved and returns a decision (release with rewrites, re-render, ask a
person, halt) or ``None`` when it has nothing to do; the gate applies it. Blocking
findings still unresolved at the end halt the crossing: a failure no policy handled is
never released.

| policy | what it does |
|---|---|
| :class:`Halt` | release nothing, stop the run (the default) |
| :class:`Override` | set a field to a fixed value (the model's verdict is advisory) |
| :class:`Redact` | delete unsupported sentences, gap questions in their place |
| :class:`BlockToolCalls` | a failed tool call never runs; the model is told |
| :class:`Rerender` | run the producer again with every issue, then ``then`` |
| :class:`Caveat` | release with the unresolved issues at the head of the text |
| :class:`Review` | a person approves, edits, rejects or answers |

A policy of your own has ``decide(crossing) -> decision | None``: it reads the
unresolved findings (and the fixes verifiers put in them) from the
:class:`CrossingView` and returns :class:`Release` (with rewrites such as
:class:`SetPath` or :class:`ReplaceText`, and an :class:`OverrideRecord` for each
change), :class:`Ask` or :class:`Stop`; the gate applies it. A policy that may return
:class:`Ask` declares ``pauses = True`` (as :class:`Review` does): ``guard()`` reads it
to keep the node's output across the pause.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trustgate._report import Approval, Decision, OverrideKind, OverrideRecord
from trustgate.errors import ConfigurationError
from trustgate.policies._decision import (
    Ask,
    CrossingView,
    CutText,
    DropToolCalls,
    Policy,
    PrependText,
    Release,
    ReplaceText,
    SetPath,
    Stop,
)
from trustgate.policies.caveat import CAVEAT_HEADER, Caveat
from trustgate.policies.halt import Halt
from trustgate.policies.override import OVERRIDE_NOTE, Override
from trustgate.policies.redact import Redact
from trustgate.policies.rerender import Rerender
from trustgate.policies.review import Review
from trustgate.policies.tool_calls import BlockToolCalls

__all__ = [
    "CAVEAT_HEADER",
    "OVERRIDE_NOTE",
    "Approval",
    "Ask",
    "BlockToolCalls",
    "Caveat",
    "CrossingView",
    "CutText",
    "Decision",
    "DropToolCalls",
    "Halt",
    "Override",
    "OverrideKind",
    "OverrideRecord",
    "Policy",
    "PrependText",
    "Redact",
    "Release",
    "ReplaceText",
    "Rerender",
    "Review",
    "SetPath",
    "Stop",
    "policy_chain",
]


def policy_chain(policy: Any) -> tuple[Any, ...]:
    """Coerce ``policy`` (one, a list, or ``None`` for :class:`Halt`) into a chain."""
    if policy is None:
        return (Halt(),)
    if isinstance(policy, (str, bytes)):
        raise ConfigurationError(
            f"policy takes a policy such as Halt() or a list of them, not {policy!r}"
        )
    if hasattr(policy, "decide") or isinstance(policy, type):
        chain: Sequence[Any] = (policy,)
    elif isinstance(policy, (list, tuple)):
        chain = tuple(policy)
    else:
        raise ConfigurationError(f"policy takes a policy or a list of policies, not {policy!r}")
    for p in chain:
        if isinstance(p, type):
            raise ConfigurationError(
                f"policy takes a policy instance, not the class {p.__name__}: write "
                f"{p.__name__}(...)"
            )
        if not callable(getattr(p, "decide", None)):
            raise ConfigurationError(
                f"{p!r} is not a policy (it needs decide(crossing) returning a decision)"
            )
    return tuple(chain)
