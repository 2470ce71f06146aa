"""Review: a person decides; their decision is testimony, never evidence."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any, Literal

from trustgate._report import Approval, OverrideRecord
from trustgate.policies._decision import (
    Ask,
    CrossingView,
    DecisionValue,
    Release,
    ReplaceText,
    SetPath,
    Stop,
    reasons,
)

__all__ = ["Review"]

logger = logging.getLogger(__name__)

ReviewDecision = Literal["approve", "edit", "reject", "respond"]


class Review:
    """Pause for a person with the report as payload.

    Resume with ``Command(resume={"type": "approve" | "edit" | "reject" | "respond",
    "by": "alice", ...})`` (the decisions of LangChain's human-in-the-loop middleware;
    ``{"decisions": [...]}`` is accepted too). ``edit`` carries ``"update"`` (field path
    → value), which is verified again before release; ``respond`` carries
    ``"message"``, released in place of the text as the person's attributed words.
    An approval is recorded as testimony (who, when, what), never as evidence: the
    failed findings stay failed in the report. An answer that is not one of these
    halts the crossing; it never crashes it.

    Example:
        ```python
        from langgraph.types import Command

        graph.invoke(Command(resume={"type": "approve", "by": "alice"}), config)
        ```
    """

    def __init__(
        self,
        *,
        allowed: tuple[ReviewDecision, ...] | list[ReviewDecision] = (
            "approve",
            "edit",
            "reject",
            "respond",
        ),
        field: str | None = None,
    ) -> None:
        self.allowed = tuple(allowed)
        self.field = field

    def decide(self, crossing: CrossingView) -> Ask | None:
        if not crossing.unresolved:
            return None
        return Ask(
            {
                "trustgate": "review",
                "gate": crossing.gate,
                "node": crossing.node,
                "allowed_decisions": list(self.allowed),
                "report": crossing.report_draft(),
            }
        )

    def resume(self, crossing: CrossingView, answer: Any) -> DecisionValue:
        failed = crossing.unresolved
        decision = _parse_decision(answer)
        if decision is None:
            return Stop(f"Review: the resume value is not a review decision: {_show(answer)}")
        kind = decision.get("type")
        who = decision.get("by", decision.get("who"))
        who = who if isinstance(who, str) else None
        message = decision.get("message")
        if kind not in self.allowed:
            return Stop(f"Review: answered {kind!r}, allowed: {list(self.allowed)}")
        what = f"{kind} {reasons(failed)}"
        if kind == "approve":
            approval = Approval(decision="approve", who=who, what=what, message=_str(message))
            return Release(
                (),
                tuple(failed),
                "review",
                (
                    OverrideRecord(
                        kind="review",
                        target=crossing.node,
                        reason=f"approved by {who or 'unknown'}",
                    ),
                ),
                approval,
            )
        if kind == "edit":
            edited = decision.get("update")
            if edited is None and isinstance(decision.get("edited_action"), Mapping):
                edited = decision["edited_action"].get("args")
            if (
                not isinstance(edited, Mapping)
                or not edited
                or not all(isinstance(k, str) for k in edited)
            ):
                return Stop("Review: an edit needs an 'update' mapping of field → value")
            approval = Approval(
                decision="edit", who=who, what=f"edit {sorted(edited)}", message=_str(message)
            )
            # the person's values are copied: the graph's reducers fill in ids in place
            # (add_messages), and a resume value reused later must still read as new
            return Release(
                tuple(SetPath(k, copy.deepcopy(v)) for k, v in edited.items()),
                tuple(failed),
                "review",
                (
                    OverrideRecord(
                        kind="review",
                        target=crossing.node,
                        before={k: crossing.get(k) for k in edited},
                        after=dict(edited),
                        reason=f"edited by {who or 'unknown'}",
                    ),
                ),
                approval,
                reverify=True,
            )
        if kind == "reject":
            approval = Approval(decision="reject", who=who, what=what, message=_str(message))
            return Stop(
                f"rejected by {who or 'unknown'}" + (f": {message}" if message else ""),
                approval,
            )
        # respond
        target = self.field or crossing.target
        if not isinstance(message, str) or target is None or crossing.text(target) is None:
            return Stop("Review: a response needs a 'message' and a text to put it in")
        text = f"Per {who or 'reviewer'} (not verified): {message}".strip()
        approval = Approval(decision="respond", who=who, what=what, message=message)
        return Release(
            (ReplaceText(target, text),),
            tuple(failed),
            "review",
            (
                OverrideRecord(
                    kind="review",
                    target=target,
                    after=text,
                    reason=f"answered by {who or 'unknown'}",
                ),
            ),
            approval,
        )

    def __repr__(self) -> str:
        return f"Review(allowed={list(self.allowed)})"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _parse_decision(answer: Any) -> dict[str, Any] | None:
    if isinstance(answer, Mapping):
        decisions = answer.get("decisions")
        if decisions is not None:
            if not isinstance(decisions, (list, tuple)) or not decisions:
                return None
            first = decisions[0]
            if not isinstance(first, Mapping):
                return None
            merged = dict(first)
            for k in ("by", "who"):
                if k in answer and k not in merged:
                    merged[k] = answer[k]
            return merged
        return dict(answer) if "type" in answer else None
    if isinstance(answer, str):
        return {"type": answer}
    return None
