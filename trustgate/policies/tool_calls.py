"""BlockToolCalls: a tool call whose arguments failed never runs, and the model is told."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from trustgate._findings import Finding
from trustgate._report import OverrideRecord
from trustgate.policies._decision import (
    CrossingView,
    DecisionValue,
    DropToolCalls,
    Policy,
    Release,
    Rerender,
    reasons,
)

__all__ = ["BlockToolCalls", "blocked_message"]


def blocked_message(call: Mapping[str, Any], failed: list[Finding]) -> ToolMessage:
    """The error a model gets in place of a blocked call's result."""
    why = "; ".join(f"{f.verifier}/{f.code}: {f.message}" for f in failed) or "blocked"
    return ToolMessage(
        content=f"Tool call blocked by trustgate: {why}",
        tool_call_id=str(call.get("id") or ""),
        name=str(call.get("name") or ""),
        status="error",
    )


class BlockToolCalls:
    """Drop the tool calls whose arguments failed, wherever the message carries them.

    A finding names its tool call through ``subject`` (the call id). Inside a graph,
    the model is told and gets to answer again in the same step (``max_attempts``
    times): the released transcript holds the blocked call with its arguments removed,
    an error ``ToolMessage`` per blocked call, then the model's verified new answer. A
    call blocked again after that is removed and the rest released (``then`` to decide
    otherwise, e.g. ``Halt()``). Outside a graph (``TrustGate.check``) the calls are
    removed and the other calls of the message still run.

    Example:
        ```python
        TrustGate("calls", reads=ToolCallArgs(), verifiers=[...], policy=BlockToolCalls(),
                  passthrough=["messages.text"])
        ```
    """

    def __init__(
        self, key: str = "messages", *, max_attempts: int = 1, then: Policy | None = None
    ) -> None:
        self.key = key
        self.max_attempts = max_attempts
        self.then = then

    def decide(self, crossing: CrossingView) -> DecisionValue | None:
        target = crossing.target or ""
        claims = crossing.claims
        if not target.endswith(".tool_calls") or not isinstance(claims, list):
            return None
        calls = {c.get("id"): c for c in claims if isinstance(c, Mapping)}
        by_call = [f for f in crossing.unresolved if f.subject is not None and f.subject in calls]
        if not by_call:
            return None
        blocked = {str(f.subject) for f in by_call}
        records = tuple(
            OverrideRecord(
                kind="tool_call_block",
                target=f"{target}[{cid}]",
                before={"name": calls[cid].get("name"), "args": calls[cid].get("args")},
                after=None,
                reason=reasons([f for f in by_call if f.subject == cid]),
            )
            for cid in sorted(blocked)
        )
        rerender = bool(getattr(crossing, "can_rerender", False))
        if rerender and crossing.attempt <= self.max_attempts:
            shown = AIMessage(
                content="",
                tool_calls=[
                    {"name": str(calls[c].get("name") or ""), "args": {}, "id": c}
                    for c in sorted(blocked)
                ],
            )
            told = [
                blocked_message(calls[c], [f for f in by_call if f.subject == c])
                for c in sorted(blocked)
            ]
            return Rerender(
                tuple(f"{f.verifier}/{f.code}: {f.message}" for f in by_call),
                issues_key=None,
                messages_key=self.key,
                carry=(shown, *told),
                records=records,
            )
        if self.then is not None and crossing.attempt > self.max_attempts:
            return self.then.decide(crossing)
        return Release(
            (DropToolCalls(target, frozenset(blocked)),), tuple(by_call), "modified", records
        )

    def __repr__(self) -> str:
        return "BlockToolCalls()"
