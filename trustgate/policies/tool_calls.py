"""BlockToolCalls: a tool call whose arguments failed never runs, and the model is told."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from trustgate._findings import Finding
from trustgate._report import OverrideRecord
from trustgate.policies._decision import (
    GATE_MESSAGE_PREFIX,
    CrossingView,
    DecisionValue,
    DropParts,
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
        id=f"{GATE_MESSAGE_PREFIX}{secrets.token_hex(8)}",
    )


class BlockToolCalls:
    """Drop the tool calls whose arguments failed, wherever the message carries them.

    A finding names the tool calls it judged (``parts``: the gate fills them in from
    the ``subject`` a verifier gives, a call's id). Inside a graph, the model is told
    and gets to answer again in the same step (``max_attempts`` times): the released
    transcript holds the blocked call with its arguments removed, an error
    ``ToolMessage`` per blocked call, then the model's verified new answer. A call
    blocked again after that is removed and the rest released (``then`` to decide
    otherwise, e.g. ``Halt()``). Outside a graph (``TrustGate.check``) the calls are
    removed and the other calls of the message still run. A failure about anything
    but the calls is left to the next policy.

    Example:
        ```python
        TrustGate("calls", reads=ToolCallArgs(), verifiers=[...], policy=BlockToolCalls(),
                  passthrough=["messages.text"])
        ```
    """

    def __init__(
        self, key: str = "messages", *, max_attempts: int = 1, then: Policy | None = None
    ) -> None:
        from trustgate import _validate

        self.key = _validate.text("BlockToolCalls", "key", key)
        self.max_attempts = _validate.count("BlockToolCalls", "max_attempts", max_attempts)
        if then is not None:
            _validate.not_a_class("BlockToolCalls", "then", then, "a policy")
            if not callable(getattr(then, "decide", None)):
                from trustgate.errors import ConfigurationError

                raise ConfigurationError(f"BlockToolCalls: then must be a policy, not {then!r}")
        self.then = then

    def decide(self, crossing: CrossingView) -> DecisionValue | None:
        target = crossing.target or ""
        claims = crossing.claims
        if not target.endswith(".tool_calls") or not isinstance(claims, list):
            return None
        by_part: dict[str, Mapping[str, Any]] = {}
        for pair, call in zip(crossing.claim_parts, claims, strict=False):
            if isinstance(call, Mapping):
                for pid in pair:
                    by_part[pid] = call
        by_call = [f for f in crossing.unresolved if f.parts and set(f.parts) <= set(by_part)]
        if not by_call:
            return None
        blocked = sorted({p for f in by_call for p in f.parts})
        records = tuple(
            OverrideRecord(
                kind="tool_call_block",
                target=pid,
                before={"name": by_part[pid].get("name"), "args": by_part[pid].get("args")},
                after=None,
                reason=reasons([f for f in by_call if pid in f.parts]),
            )
            for pid in blocked
        )
        rerender = bool(getattr(crossing, "can_rerender", False))
        if rerender and crossing.attempt <= self.max_attempts:
            # one shown call and one error per distinct id: the transcript the model
            # sees next must itself be well formed
            shown_ids = list(dict.fromkeys(str(by_part[p].get("id") or "") for p in blocked))
            first = {str(by_part[p].get("id") or ""): by_part[p] for p in reversed(blocked)}
            shown = AIMessage(
                content="",
                tool_calls=[
                    {"name": str(first[c].get("name") or ""), "args": {}, "id": c}
                    for c in shown_ids
                ],
                id=f"{GATE_MESSAGE_PREFIX}{secrets.token_hex(8)}",
            )
            told = [
                blocked_message(
                    first[c],
                    [
                        f
                        for f in by_call
                        if any(str(by_part[p].get("id") or "") == c for p in f.parts)
                    ],
                )
                for c in shown_ids
            ]
            return Rerender(
                tuple(f"{f.verifier}/{f.code}: {f.message}" for f in by_call),
                issues_key=None,
                messages_key=self.key,
                carry=(shown, *told),
                records=records,
                decision="blocked",
            )
        if self.then is not None and crossing.attempt > self.max_attempts:
            return self.then.decide(crossing)
        return Release((DropParts(tuple(blocked)),), tuple(by_call), "blocked", records)

    def __repr__(self) -> str:
        return "BlockToolCalls()"
