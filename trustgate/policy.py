"""What a failed check does: override, redact, block, rerender, caveat, review, halt.

Policies run in the order given, on a :class:`Crossing` (the guarded node's update
under inspection). Each acts only on blocking findings no earlier policy resolved;
one that settles the crossing's route (halt, review, rerender) ends the chain. If
blocking findings are still unresolved at the end, the gate halts: a failure no
policy handled is never released (fail closed).

Policies are deterministic: they act on findings and on the update, never on a
clock or a model, so the same crossing always ends the same way.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from trustgate.errors import ConfigurationError
from trustgate.findings import Finding
from trustgate.readers import ClaimsReader, FromKey, LastAIText
from trustgate.report import Approval, Decision, OverrideKind, OverrideRecord
from trustgate.verifiers.base import Evidence

__all__ = [
    "OVERRIDE_NOTE",
    "BlockToolCalls",
    "Caveat",
    "Crossing",
    "Halt",
    "Override",
    "Policy",
    "Redact",
    "Rerender",
    "Review",
]

OVERRIDE_NOTE = " (Overridden: evidence verification failed for already_correct claims)"

Route = Literal["release", "rerender", "halt"]


@dataclass
class Crossing:
    """One guarded update under inspection; policies read and rewrite it.

    ``update`` is the candidate update (state key → value) that will be released if
    the route stays ``release``; policies replace values in it, never mutate the
    objects the node returned.
    """

    gate: str
    node: str
    reader: ClaimsReader
    update: dict[str, Any]
    claims: Any
    findings: list[Finding]
    evidence: Evidence
    state: Mapping[str, Any]
    attempt: int = 1
    overrides: list[OverrideRecord] = field(default_factory=list)
    resolved: set[int] = field(default_factory=set)
    route: Route = "release"
    decision: Decision = "pass"
    rerender_to: str | None = None
    writes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    approval: Approval | None = None
    reverify: Callable[[dict[str, Any]], tuple[Any, list[Finding]]] | None = None
    report_draft: Callable[[], dict[str, Any]] | None = None

    @property
    def unresolved(self) -> list[Finding]:
        return [f for i, f in enumerate(self.findings) if f.blocking and i not in self.resolved]

    @property
    def settled(self) -> bool:
        return self.route != "release"

    def resolve(self, findings: Sequence[Finding] | None = None) -> None:
        """Mark blocking findings (all unresolved ones by default) as handled."""
        targets = self.unresolved if findings is None else list(findings)
        ids = {id(f) for f in targets}
        for i, f in enumerate(self.findings):
            if id(f) in ids:
                self.resolved.add(i)

    def record(
        self,
        kind: OverrideKind,
        target: str,
        *,
        before: Any = None,
        after: Any = None,
        reason: str,
        verifier: str | None = None,
    ) -> None:
        self.overrides.append(
            OverrideRecord(
                kind=kind,
                target=target,
                before=_jsonable(before),
                after=_jsonable(after),
                reason=reason,
                verifier=verifier,
            )
        )

    def halt(self, reason: str) -> None:
        self.route = "halt"
        self.decision = "halted"
        self.record("halt", self.node, reason=reason)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, AIMessage):
        return value.text
    return value


def _reasons(findings: Sequence[Finding]) -> str:
    return "; ".join(f"{f.verifier}/{f.code}" for f in findings) or "blocking findings"


@runtime_checkable
class Policy(Protocol):
    """Decides what a crossing with failed findings does; see the module docstring."""

    def apply(self, crossing: Crossing) -> None: ...


# --- text targets: where the released text lives in an update ----------------------


def _text_field(crossing: Crossing, field_name: str | None) -> str:
    if field_name is not None:
        return field_name
    reader = crossing.reader
    if isinstance(reader, LastAIText):
        return f"{reader.key}[-1]"
    if isinstance(reader, FromKey):
        return reader.key
    return "messages[-1]"


def _split_messages_target(target: str) -> str | None:
    return target[: -len("[-1]")] if target.endswith("[-1]") else None


def get_text(update: Mapping[str, Any], target: str) -> str | None:
    """The text at ``target``: a state key (``"draft"``, ``"review.summary"``) or
    ``"messages[-1]"`` for the last AI message's content."""
    key = _split_messages_target(target)
    if key is not None:
        msg = _last_ai(update.get(key))
        return None if msg is None else msg.text
    value = _get_path(update, target)
    return value if isinstance(value, str) else None


def set_text(update: dict[str, Any], target: str, text: str) -> bool:
    key = _split_messages_target(target)
    if key is not None:
        messages = _as_list(update.get(key))
        for i in range(len(messages) - 1, -1, -1):
            if isinstance(messages[i], AIMessage):
                messages[i] = messages[i].model_copy(update={"content": text})
                update[key] = messages
                return True
        return False
    return _set_path(update, target, text)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _last_ai(value: Any) -> AIMessage | None:
    for m in reversed(_as_list(value)):
        if isinstance(m, AIMessage):
            return m
    return None


def _get_path(update: Mapping[str, Any], path: str) -> Any:
    head, _, rest = path.partition(".")
    if head not in update:
        return None
    value = update[head]
    for part in rest.split(".") if rest else []:
        if isinstance(value, BaseModel):
            value = getattr(value, part, None)
        elif isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value


def _set_path(update: dict[str, Any], path: str, new: Any) -> bool:
    parts = path.split(".")
    if len(parts) == 1:
        update[path] = new
        return True
    if parts[0] not in update:
        return False

    def put(container: Any, rest: list[str]) -> Any:
        name = rest[0]
        if len(rest) == 1:
            child_new = new
        else:
            child = (
                getattr(container, name, None)
                if isinstance(container, BaseModel)
                else container.get(name)
                if isinstance(container, Mapping)
                else None
            )
            if child is None:
                raise KeyError(name)
            child_new = put(child, rest[1:])
        if isinstance(container, BaseModel):
            return container.model_copy(update={name: child_new})
        if isinstance(container, Mapping):
            return {**container, name: child_new}
        raise KeyError(name)

    try:
        update[parts[0]] = put(update[parts[0]], parts[1:])
    except KeyError:
        return False
    return True


# --- policies ------------------------------------------------------------------------


class Halt:
    """Fail closed: release nothing, persist the report, stop the run (``GateHalted``).

    Example:
        ```python
        TrustGate("manifest", reads="manifest", verifiers=[...], policy=Halt())
        ```
    """

    def apply(self, crossing: Crossing) -> None:
        if crossing.unresolved:
            crossing.halt(_reasons(crossing.unresolved))


class Override:
    """Set a field to a fixed value when blocking findings fail (seed 000).

    The model's value is advisory: whatever it wrote ("APPROVE", "Approve", "LGTM"),
    the field becomes ``value``, and ``note`` is appended to ``note_field``. Fields may
    be dotted paths into a pydantic model or dict held in the update
    (``"review.verdict"``).

    Example:
        ```python
        Override("review.verdict", "REQUEST_CHANGES", note_field="review.summary")
        ```
    """

    def __init__(
        self,
        field: str,
        value: Any,
        *,
        note_field: str | None = None,
        note: str = OVERRIDE_NOTE,
    ) -> None:
        self.field = field
        self.value = value
        self.note_field = note_field
        self.note = note

    def apply(self, crossing: Crossing) -> None:
        failed = crossing.unresolved
        if not failed:
            return
        reason = _reasons(failed)
        before = _get_path(crossing.update, self.field)
        if before != self.value:
            if not _set_path(crossing.update, self.field, self.value):
                return  # cannot set it: leave the failures unresolved (halts)
            crossing.record(
                "field_override",
                self.field,
                before=before,
                after=self.value,
                reason=reason,
                verifier=failed[0].verifier,
            )
            if self.note_field is not None:
                summary = _get_path(crossing.update, self.note_field)
                text = (summary or "") if isinstance(summary, str) or summary is None else ""
                if self.note.strip() not in text:
                    _set_path(crossing.update, self.note_field, text + self.note)
        crossing.resolve(failed)
        crossing.decision = "modified"


class BlockToolCalls:
    """Drop the tool calls whose arguments failed; the message's other calls still run.

    A finding names its tool call through ``subject`` (the call id). The blocked call
    is removed from the AI message before any tool node sees it, so it never executes.

    Example:
        ```python
        TrustGate("calls", reads=ToolCallArgs(), verifiers=[...], policy=BlockToolCalls())
        ```
    """

    def __init__(self, key: str = "messages") -> None:
        self.key = key

    def apply(self, crossing: Crossing) -> None:
        failed = crossing.unresolved
        messages = _as_list(crossing.update.get(self.key))
        idx = next(
            (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)),
            None,
        )
        if not failed or idx is None:
            return
        message: AIMessage = messages[idx]
        ids = {c.get("id") for c in message.tool_calls}
        by_call = [f for f in failed if f.subject is not None and f.subject in ids]
        if not by_call:
            return
        blocked = {f.subject for f in by_call}
        kept = [c for c in message.tool_calls if c.get("id") not in blocked]
        for call in message.tool_calls:
            if call.get("id") in blocked:
                crossing.record(
                    "tool_call_block",
                    f"{self.key}[-1].tool_calls[{call.get('id')}]",
                    before={"name": call["name"], "args": call["args"]},
                    after=None,
                    reason=_reasons([f for f in by_call if f.subject == call.get("id")]),
                )
        extra = dict(message.additional_kwargs)
        extra.pop("tool_calls", None)
        messages[idx] = message.model_copy(
            update={"tool_calls": kept, "additional_kwargs": extra, "invalid_tool_calls": []}
        )
        crossing.update[self.key] = messages
        crossing.resolve(by_call)
        crossing.decision = "modified"


class Redact:
    """Delete what the record does not support from a text (seed 002).

    Runs ``verify_draft`` on the text at ``field`` (default: where the gate reads its
    claims; ``"messages[-1]"`` is the last AI message's content) against the
    ``record`` evidence. Deleted sentences never reach downstream state; each gap
    question takes their place and is recorded in the report.

    Example:
        ```python
        TrustGate("postmortem", reads=LastAIText(), verifiers=[], policy=Redact(),
                  evidence=EvidenceSources(record=FromState("record")))
        ```
    """

    def __init__(self, field: str | None = None, *, rules: Any = None) -> None:
        self.field = field
        self.rules = rules

    def apply(self, crossing: Crossing) -> None:
        # imported late: the draft verifier is optional until a Redact is used
        verify_draft = importlib.import_module("trustgate.verifiers.draft").verify_draft

        target = _text_field(crossing, self.field)
        text = get_text(crossing.update, target)
        if text is None:
            return
        record = crossing.evidence.require("record")
        verdict = (
            verify_draft(text, record)
            if self.rules is None
            else verify_draft(text, record, rules=self.rules)
        )
        removed = list(verdict.removed)
        invalid = list(verdict.invalid_citations)
        if not removed and not invalid:
            return
        gaps = {g.id: g for g in verdict.gaps}
        findings = list(verdict.findings)
        crossing.findings.extend(findings)
        crossing.resolve([f for f in findings if f.blocking])
        for r in removed:
            gap = gaps.get(r.gap_id)
            crossing.record(
                "sentence_delete",
                target,
                before=r.sentence,
                after=gap.question if gap is not None else None,
                reason=f"{r.rule}: {r.reason}",
                verifier="redact",
            )
        for c in invalid:
            crossing.record(
                "citation_drop",
                target,
                before=c.marker,
                after=None,
                reason="malformed_citation" if c.malformed else "invalid_citation",
                verifier="redact",
            )
        set_text(crossing.update, target, str(verdict.text))
        if crossing.decision == "pass":
            crossing.decision = "modified"


CAVEAT_HEADER = "> **Caveat:** this content failed verification twice; unresolved issues:"


class Caveat:
    """Release with a visible caveat block at the head of the text (seed 004).

    What a deterministic check proved false is removed first: the finding's
    ``subject`` text (an invented citation, an unapproved URL) is cut from the text
    for codes in ``remove_codes``. The caveat names every unresolved issue, so it
    travels with the text, not only in the report.

    Example:
        ```python
        Rerender(to="writer", then=Caveat(field="draft"))
        ```
    """

    DEFAULT_REMOVE = frozenset(
        {"invented_citation", "altered_citation", "unapproved_url", "unapproved_price"}
    )

    def __init__(
        self, field: str | None = None, *, remove_codes: Sequence[str] | None = None
    ) -> None:
        self.field = field
        self.remove_codes = (
            frozenset(remove_codes) if remove_codes is not None else self.DEFAULT_REMOVE
        )

    def apply(self, crossing: Crossing) -> None:
        failed = crossing.unresolved
        if not failed:
            return
        target = _text_field(crossing, self.field)
        text = get_text(crossing.update, target)
        if text is None:
            return  # nowhere to put the caveat: unresolved, so the gate halts
        for f in failed:
            if f.code not in self.remove_codes:
                continue
            for removable in _removables(f):
                if removable in text:
                    text = _cut(text, removable)
                    crossing.record(
                        "citation_drop",
                        target,
                        before=removable,
                        after=None,
                        reason=f"{f.verifier}/{f.code}",
                        verifier=f.verifier,
                    )
        lines = "\n".join(f"> - {f.verifier}/{f.code}: {f.message}" for f in failed)
        block = f"{CAVEAT_HEADER}\n{lines}\n\n"
        set_text(crossing.update, target, block + text)
        crossing.record("caveat", target, after=block.strip(), reason=_reasons(failed))
        crossing.resolve(failed)
        crossing.decision = "caveat"


def _removables(f: Finding) -> list[str]:
    """The text a finding proved false, as written in the draft (longest first)."""
    found: list[str] = []
    for value in (f.detail.get("text"), f.detail.get("written"), f.subject):
        items = value if isinstance(value, (list, tuple)) else [value]
        found.extend(v for v in items if isinstance(v, str) and v.strip())
    return sorted(dict.fromkeys(found), key=len, reverse=True)


def _cut(text: str, fragment: str) -> str:
    out = text.replace(fragment, "")
    out = re.sub(r"[ \t]{2,}", " ", out)
    return re.sub(r" +([.,;:])", r"\1", out)


class Rerender:
    """Send the producer back with every issue, re-verify, then ``then`` (seed 004).

    On a failure the gate routes to ``to`` (the producer) instead of releasing, with
    the issue list written to ``issues_key`` in state (and, with ``as_message``,
    appended to ``messages`` as a human message) so the producer's next model input
    contains every issue. After ``max_attempts`` re-renders the next failure goes to
    ``then``: a :class:`Caveat` release or a :class:`Halt`.

    Example:
        ```python
        Rerender(to="writer", max_attempts=1, then=Caveat(field="draft"))
        ```
    """

    def __init__(
        self,
        to: str,
        *,
        max_attempts: int = 1,
        then: Policy | None = None,
        issues_key: str | None = "trust_issues",
        as_message: bool = False,
        messages_key: str = "messages",
    ) -> None:
        if max_attempts < 0:
            raise ConfigurationError("max_attempts must be >= 0")
        if issues_key is None and not as_message:
            raise ConfigurationError(
                "Rerender needs issues_key or as_message, or the producer never sees the issues"
            )
        self.to = to
        self.max_attempts = max_attempts
        self.then: Policy = then if then is not None else Caveat()
        self.issues_key = issues_key
        self.as_message = as_message
        self.messages_key = messages_key

    @staticmethod
    def issues(findings: Sequence[Finding]) -> list[str]:
        return [
            f"{f.verifier}/{f.code}: {f.message}" + (f" [{f.subject}]" if f.subject else "")
            for f in findings
        ]

    def apply(self, crossing: Crossing) -> None:
        failed = crossing.unresolved
        if not failed:
            return
        if crossing.attempt > self.max_attempts:
            self.then.apply(crossing)
            return
        issues = self.issues(failed)
        crossing.route = "rerender"
        crossing.decision = "rerender"
        crossing.rerender_to = self.to
        if self.issues_key is not None:
            crossing.writes[self.issues_key] = issues
        if self.as_message:
            body = "Your previous answer failed verification. Fix every issue:\n" + "\n".join(
                f"- {i}" for i in issues
            )
            crossing.writes[self.messages_key] = [HumanMessage(content=body)]
        crossing.record(
            "rerender",
            self.to,
            before=None,
            after=issues,
            reason=_reasons(failed),
        )


ReviewDecision = Literal["approve", "edit", "reject", "respond"]


class Review:
    """Pause for a person (seed 001's approval routing) with the report as payload.

    Resume with ``Command(resume={"type": "approve" | "edit" | "reject" | "respond",
    "by": "alice", ...})`` (the decisions of LangChain's human-in-the-loop middleware;
    ``{"decisions": [...]}`` is accepted too). ``edit`` carries ``"update"`` (state key
    → value), which is verified again before release; ``respond`` carries
    ``"message"``, released in place of the text as the person's attributed words.
    An approval is recorded as testimony (who, when, what), never as evidence: the
    failed findings stay failed in the report.

    Example:
        ```python
        graph.invoke(Command(resume={"type": "approve", "by": "alice"}), config)
        ```
    """

    def __init__(
        self,
        *,
        allowed: Sequence[ReviewDecision] = ("approve", "edit", "reject", "respond"),
        field: str | None = None,
    ) -> None:
        self.allowed = tuple(allowed)
        self.field = field

    def apply(self, crossing: Crossing) -> None:
        from langgraph.types import interrupt

        failed = crossing.unresolved
        if not failed:
            return
        payload = {
            "trustgate": "review",
            "gate": crossing.gate,
            "node": crossing.node,
            "allowed_decisions": list(self.allowed),
            "report": crossing.report_draft() if crossing.report_draft else None,
        }
        answer = interrupt(payload)
        decision = _parse_decision(answer)
        kind = decision.get("type")
        who = decision.get("by") or decision.get("who")
        if kind not in self.allowed:
            crossing.halt(f"review answered with {kind!r}, allowed: {list(self.allowed)}")
            return
        message = decision.get("message")
        what = f"{kind} {_reasons(failed)}"
        if kind == "approve":
            crossing.approval = Approval(decision="approve", who=who, what=what, message=message)
            crossing.record("review", crossing.node, reason=f"approved by {who or 'unknown'}")
            crossing.resolve(failed)
            crossing.decision = "review"
        elif kind == "edit":
            edited = decision.get("update") or (decision.get("edited_action") or {}).get("args")
            if not isinstance(edited, Mapping) or crossing.reverify is None:
                crossing.halt("edit without an 'update' mapping")
                return
            new_update = {**crossing.update, **edited}
            claims, findings = crossing.reverify(new_update)
            crossing.approval = Approval(
                decision="edit", who=who, what=f"edit {sorted(edited)}", message=message
            )
            crossing.record(
                "review",
                crossing.node,
                before={k: _jsonable(crossing.update.get(k)) for k in edited},
                after={k: _jsonable(v) for k, v in edited.items()},
                reason=f"edited by {who or 'unknown'}",
            )
            crossing.update = new_update
            crossing.claims = claims
            crossing.findings = list(findings)
            crossing.resolved = set()
            failed_again = crossing.unresolved
            if failed_again:
                crossing.halt(
                    "edited content failed verification: " + _reasons(crossing.unresolved)
                )
                return
            crossing.decision = "review"
        elif kind == "reject":
            crossing.approval = Approval(decision="reject", who=who, what=what, message=message)
            crossing.halt(f"rejected by {who or 'unknown'}" + (f": {message}" if message else ""))
        else:  # respond
            target = _text_field(crossing, self.field)
            text = f"Per {who or 'reviewer'} (not verified): {message or ''}".strip()
            if not isinstance(message, str) or not set_text(crossing.update, target, text):
                crossing.halt("respond without a message or a text target")
                return
            crossing.approval = Approval(decision="respond", who=who, what=what, message=message)
            crossing.record("review", target, after=text, reason=f"answered by {who or 'unknown'}")
            crossing.resolve(failed)
            crossing.decision = "review"


def _parse_decision(answer: Any) -> dict[str, Any]:
    if isinstance(answer, Mapping):
        if answer.get("decisions"):
            first = answer["decisions"][0]
            merged = dict(first) if isinstance(first, Mapping) else {}
            for k in ("by", "who"):
                if k in answer and k not in merged:
                    merged[k] = answer[k]
            return merged
        return dict(answer)
    if isinstance(answer, str):
        return {"type": answer}
    return {"type": None}


def policy_chain(policy: Policy | Sequence[Policy] | None) -> tuple[Policy, ...]:
    if policy is None:
        return (Halt(),)
    if isinstance(policy, Policy):
        return (policy,)
    chain = tuple(policy)
    for p in chain:
        if not isinstance(p, Policy):
            raise ConfigurationError(f"{p!r} is not a policy (it needs apply(crossing))")
    return chain
