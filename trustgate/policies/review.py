"""Review: a person decides; their decision is testimony, never evidence."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, cast

from trustgate._report import Approval, OverrideRecord
from trustgate.errors import ConfigurationError
from trustgate.policies._decision import (
    Ask,
    CrossingView,
    DecisionValue,
    DropParts,
    Release,
    ReplaceText,
    ReplaceToolCall,
    Rewrite,
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
    "by": "alice", ...})``. ``edit`` carries ``"update"`` (field path → value), which is
    verified again before release; ``respond`` carries ``"message"``, released in place
    of the text as the person's attributed words (the failed tool calls it answers are
    removed: they never run). ``reject`` halts.

    When what failed is tool calls, the payload also lists them the way LangChain's
    human-in-the-loop middleware does (``action_requests``, ``review_configs``), and the
    answer may be LangChain's ``{"decisions": [...]}`` with one decision per listed call,
    in order: ``approve`` releases that call, ``edit`` (``edited_action.args``) replaces
    its arguments and verifies them again, ``reject`` and ``respond`` remove it (a
    response is kept as the person's words). A list of decisions that does not match
    the listed calls one to one halts.

    An approval is recorded as testimony (who, when, what), never as evidence: the
    failed findings stay failed in the report. An answer that is not one of these halts
    the crossing; it never crashes it.

    Example:
        ```python
        from langgraph.types import Command

        graph.invoke(Command(resume={"type": "approve", "by": "alice"}), config)
        ```
    """

    pauses: ClassVar[bool] = True
    """It may pause the run (an interrupt) for a person: ``guard()`` keeps the node's
    output in a durable task, so a resumed run judges the same output it paused on. A
    policy of your own whose ``decide`` returns :class:`~trustgate.policies.Ask`
    declares the same."""

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
        from trustgate import _validate

        kinds = _validate.strings("Review", "allowed", allowed, allow_one=False)
        unknown = [k for k in kinds if k not in _DECISIONS]
        if unknown or not kinds:
            raise ConfigurationError(
                f"Review: allowed takes decisions out of {list(_DECISIONS)}, not {list(kinds)!r}"
            )
        self.allowed = cast(tuple[ReviewDecision, ...], kinds)
        self.field = _validate.optional_text("Review", "field", field)

    # -- asking --------------------------------------------------------------------------

    @staticmethod
    def _calls(crossing: CrossingView) -> list[tuple[str, Mapping[str, Any]]]:
        """The failed tool calls under review, as ``(part id, call)`` in claim order."""
        if not isinstance(crossing.claims, list):
            return []
        failed = {p for f in crossing.unresolved for p in f.parts}
        out: list[tuple[str, Mapping[str, Any]]] = []
        for pair, call in zip(crossing.claim_parts, crossing.claims, strict=False):
            for pid in pair:
                if pid in failed and ".tool_calls[" in pid and isinstance(call, Mapping):
                    out.append((pid, call))
        return out

    def decide(self, crossing: CrossingView) -> Ask | None:
        if not crossing.unresolved:
            return None
        payload: dict[str, Any] = {
            "trustgate": "review",
            "gate": crossing.gate,
            "node": crossing.node,
            "allowed_decisions": list(self.allowed),
            "report": crossing.report_draft(),
        }
        calls = self._calls(crossing)
        if calls:
            payload["action_requests"] = [
                {
                    "name": str(call.get("name") or ""),
                    "args": call.get("args") if isinstance(call.get("args"), Mapping) else {},
                    "description": f"failed verification ({pid})",
                }
                for pid, call in calls
            ]
            payload["review_configs"] = [
                {"action_name": name, "allowed_decisions": list(self.allowed)}
                for name in dict.fromkeys(str(c.get("name") or "") for _p, c in calls)
            ]
        return Ask(payload)

    # -- the answer -----------------------------------------------------------------------

    def resume(self, crossing: CrossingView, answer: Any) -> DecisionValue:
        if isinstance(answer, Mapping) and answer.get("decisions") is not None:
            decisions = answer["decisions"]
            calls = self._calls(crossing)
            if (
                calls
                and isinstance(decisions, (list, tuple))
                and (len(decisions) > 1 or len(calls) > 1)
            ):
                return self._per_call(crossing, answer, list(decisions), calls)
        return self._whole(crossing, answer)

    def _who(self, decision: Mapping[str, Any], answer: Any) -> str | None:
        who = decision.get("by", decision.get("who"))
        if who is None and isinstance(answer, Mapping):
            who = answer.get("by", answer.get("who"))
        return who if isinstance(who, str) else None

    def _per_call(
        self,
        crossing: CrossingView,
        answer: Mapping[str, Any],
        decisions: list[Any],
        calls: list[tuple[str, Mapping[str, Any]]],
    ) -> DecisionValue:
        """One decision per reviewed call, in order (LangChain's ``decisions`` list)."""
        failed = crossing.unresolved
        if len(decisions) != len(calls):
            return Stop(
                f"Review: {len(decisions)} decision(s) for {len(calls)} reviewed tool "
                "call(s): one decision per call, in the order they were listed"
            )
        approves: list[str] = []
        drops: list[str] = []
        rewrites: list[Rewrite] = []
        records: list[OverrideRecord] = []
        said: list[str] = []
        kinds: list[str] = []
        who: str | None = None
        for (pid, call), raw in zip(calls, decisions, strict=True):
            if not isinstance(raw, Mapping) or raw.get("type") not in self.allowed:
                got = raw.get("type") if isinstance(raw, Mapping) else raw
                return Stop(
                    f"Review: decision {_show(got)} for {pid}, allowed: {list(self.allowed)}"
                )
            kind = str(raw["type"])
            kinds.append(kind)
            who = who or self._who(raw, answer)
            name = str(call.get("name") or "")
            if kind == "approve":
                approves.append(pid)
            elif kind == "edit":
                action = raw.get("edited_action")
                args = action.get("args") if isinstance(action, Mapping) else None
                if not isinstance(args, Mapping):
                    return Stop(f"Review: an edit of {pid} needs edited_action.args")
                new_name = action.get("name") if isinstance(action, Mapping) else None
                rewrites.append(
                    ReplaceToolCall(
                        pid,
                        copy.deepcopy(dict(args)),
                        new_name if isinstance(new_name, str) and new_name else None,
                    )
                )
            else:  # reject, respond: the call never runs
                drops.append(pid)
                message = raw.get("message")
                if kind == "respond" and isinstance(message, str) and message:
                    said.append(message)
            records.append(
                OverrideRecord(
                    kind="review",
                    target=pid,
                    before={"name": name, "args": call.get("args")} if kind != "approve" else None,
                    after=raw.get("edited_action") if kind == "edit" else None,
                    reason=f"{kind} by {who or 'unknown'}",
                )
            )
        if drops:
            rewrites.append(DropParts(tuple(drops)))
        target = self.field or _message_ref(crossing.target)
        if said and target is not None and crossing.text(target) is not None:
            words = " ".join(f"Per {who or 'reviewer'} (not verified): {m}" for m in said)
            current = crossing.text(target) or ""
            rewrites.append(ReplaceText(target, f"{current}\n\n{words}".strip()))
        summary = "; ".join(f"{k} {pid}" for (pid, _c), k in zip(calls, kinds, strict=True))
        overall: ReviewDecision = (
            "edit"
            if "edit" in kinds
            else "respond"
            if "respond" in kinds
            else "approve"
            if "approve" in kinds
            else "reject"
        )
        approval = Approval(decision=overall, who=who, what=summary, message=" ".join(said) or None)
        return Release(
            tuple(rewrites),
            tuple(failed),
            "reviewed",
            tuple(records),
            approval,
            reverify="edit" in kinds,
            approves=tuple(approves),
        )

    def _whole(self, crossing: CrossingView, answer: Any) -> DecisionValue:
        """One decision for everything that failed."""
        failed = crossing.unresolved
        decision = _parse_decision(answer)
        if decision is None:
            return Stop(f"Review: the resume value is not a review decision: {_show(answer)}")
        kind = decision.get("type")
        who = self._who(decision, answer)
        message = decision.get("message")
        if kind not in self.allowed:
            return Stop(f"Review: answered {kind!r}, allowed: {list(self.allowed)}")
        what = f"{kind} {reasons(failed)}"
        if kind == "approve":
            approval = Approval(decision="approve", who=who, what=what, message=_str(message))
            return Release(
                (),
                tuple(failed),
                "reviewed",
                (
                    OverrideRecord(
                        kind="review",
                        target=crossing.node,
                        reason=f"approved by {who or 'unknown'}",
                    ),
                ),
                approval,
                approves=("*",),
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
                "reviewed",
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
                approves=("*",),
            )
        if kind == "reject":
            approval = Approval(decision="reject", who=who, what=what, message=_str(message))
            return Stop(
                f"rejected by {who or 'unknown'}" + (f": {message}" if message else ""),
                approval,
            )
        # respond: the person's words stand in for the text; the failed calls they
        # answer are removed, so none of them runs
        target = self.field or _message_ref(crossing.target) or crossing.target
        if not isinstance(message, str) or target is None or crossing.text(target) is None:
            return Stop("Review: a response needs a 'message' and a text to put it in")
        text = f"Per {who or 'reviewer'} (not verified): {message}".strip()
        approval = Approval(decision="respond", who=who, what=what, message=message)
        rewrites: list[Rewrite] = [ReplaceText(target, text)]
        calls = [pid for pid, _c in self._calls(crossing)]
        if calls:
            rewrites.append(DropParts(tuple(calls)))
        return Release(
            tuple(rewrites),
            tuple(failed),
            "reviewed",
            (
                OverrideRecord(
                    kind="review",
                    target=target,
                    after=text,
                    reason=f"answered by {who or 'unknown'}",
                ),
            ),
            approval,
            approves=("*",) if not calls else (),
        )

    def __repr__(self) -> str:
        return f"Review(allowed={list(self.allowed)})"


_DECISIONS = ("approve", "edit", "reject", "respond")


def _message_ref(target: str | None) -> str | None:
    """``messages[3].tool_calls`` → ``messages[3]``: the message whose text a response
    replaces."""
    if target is None or "[" not in target.split(".", 1)[0]:
        return None
    head, _, _rest = target.partition("]")
    return head + "]"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _parse_decision(answer: Any) -> dict[str, Any] | None:
    if isinstance(answer, Mapping):
        decisions = answer.get("decisions")
        if decisions is not None:
            if not isinstance(decisions, (list, tuple)) or len(decisions) != 1:
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
