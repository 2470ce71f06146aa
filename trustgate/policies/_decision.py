"""Decision values: what a policy wants done, which the gate then applies.

A policy never touches the node's output. It looks at a read-only view of the
crossing (findings, claims, the output) and returns one of these values; the gate
applies it. That keeps the order of the house: verifiers find (and may propose
fixes), policies decide, the gate applies and records. A rewrite the gate cannot
apply (a missing field, a non-string text, a message form it cannot rebuild) leaves
the findings unresolved and the crossing halts, naming the policy and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from trustgate._findings import Finding, TextEdit
from trustgate._report import Approval, Decision, OverrideRecord

__all__ = [
    "Ask",
    "CrossingView",
    "CutText",
    "DropParts",
    "DropToolCalls",
    "EditText",
    "Policy",
    "PrependText",
    "Release",
    "ReplaceText",
    "ReplaceToolCall",
    "Rerender",
    "Rewrite",
    "SetPath",
    "Stop",
]

GATE_MESSAGE_PREFIX = "trustgate-feedback-"
"""Id prefix of the messages a gate itself writes (the issues on a re-render, a blocked
call and the error the model was told): when a node hands its whole history back, the
gate knows them for its own, not the node's output."""


# --- rewrites -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetPath:
    """Set the value at a dotted path of the output (``review.verdict``,
    ``sections.0.content``); ``note`` is appended to the text at ``note_path``.

    A key the node wrote several times in the step is rewritten in every write: a
    nested path in each of them, a bare key by leaving one write that holds ``value``
    (``notes@1`` names one write only)."""

    path: str
    value: Any
    note_path: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class ReplaceText:
    """Replace the text at ``target`` (a path, or ``messages[-1]`` for a message)."""

    target: str
    text: str


@dataclass(frozen=True, slots=True)
class PrependText:
    target: str
    text: str


@dataclass(frozen=True, slots=True)
class CutText:
    """Remove each fragment from the text at ``target``."""

    target: str
    fragments: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DropToolCalls:
    """Remove tool calls (by id) from the message at ``target``, in every form."""

    target: str
    ids: frozenset[str | None]  # None: every call that has no id


@dataclass(frozen=True, slots=True)
class EditText:
    """Apply span edits to the text at ``target`` (offsets into that text, as the
    gate's reader read it; several writes of a key read as one text, and each edit
    lands in the write it falls in). With ``expect``, the text there must be exactly
    that (a second place said to hold the same text as the one read)."""

    target: str
    edits: tuple[TextEdit, ...]
    expect: str | None = None


@dataclass(frozen=True, slots=True)
class DropParts:
    """Remove parts of the output by id: a write (``notes@1``), a whole message
    (``messages[2]``), a tool call (``messages[2].tool_calls[0]``)."""

    parts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReplaceToolCall:
    """Replace one tool call (by part id) with these arguments (a person's edit)."""

    part: str
    args: Mapping[str, Any]
    name: str | None = None


Rewrite = (
    SetPath
    | ReplaceText
    | PrependText
    | CutText
    | DropToolCalls
    | EditText
    | DropParts
    | ReplaceToolCall
)


# --- decisions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Release:
    """Release the output with these rewrites; ``resolves`` are the findings handled.

    The gate holds a policy to that: a finding in ``resolves`` is resolved only when
    every part it judged was rewritten or removed by ``rewrites`` or approved by a
    person (``approves``: testimony, the finding stays failed in the report; ``*`` for
    the whole crossing). Any other finding stays unresolved, and the crossing halts
    naming what the policy changed and what it left.

    ``reverify``: a person edited the output (review): read and verify it again
    before it may go; what still fails halts.
    """

    rewrites: tuple[Rewrite, ...] = ()
    resolves: tuple[Finding, ...] = ()
    decision: Decision = "modified"
    records: tuple[OverrideRecord, ...] = ()
    approval: Approval | None = None
    reverify: bool = False
    approves: tuple[str, ...] = ()
    """Parts a person approved as they are (their decision is testimony, not evidence)."""


@dataclass(frozen=True, slots=True)
class Rerender:
    """Run the guarded node again, in the same step, with the issues in its input.

    ``carry`` are messages released ahead of the next attempt's output (a tool call
    the gate blocked, with the error the model was told). ``decision`` is what the
    report says happened: ``rerendered``, or ``blocked`` when the node runs again
    because tool calls were stopped (what a reader of the report needs to know first).
    """

    issues: tuple[str, ...]
    issues_key: str | None = "trust_issues"
    as_message: bool = False
    messages_key: str = "messages"
    carry: tuple[Any, ...] = ()
    records: tuple[OverrideRecord, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()
    decision: Decision = "rerendered"


@dataclass(frozen=True, slots=True)
class Ask:
    """Pause for a person; the policy's ``resume(view, answer)`` decides after."""

    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Stop:
    """Halt: release nothing."""

    reason: str
    approval: Approval | None = None


DecisionValue = Release | Rerender | Ask | Stop


class CrossingView(Protocol):
    """What a policy may look at (read-only)."""

    @property
    def gate(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def claims(self) -> Any: ...
    @property
    def findings(self) -> Sequence[Finding]: ...
    @property
    def unresolved(self) -> list[Finding]: ...
    @property
    def target(self) -> str | None:
        """Where the gate read its claims (the default place to rewrite text)."""
        ...

    @property
    def parts(self) -> Sequence[Any]:
        """The output's part ledger (:class:`trustgate._output.Part` values)."""
        ...

    @property
    def claim_parts(self) -> tuple[tuple[str, ...], ...]:
        """For claims that are a list, each claim's part ids, in order."""
        ...

    def read_parts(self) -> tuple[str, ...]:
        """The ids of the parts the gate's reader read."""
        ...

    def text_parts(self, target: str) -> tuple[str, ...]:
        """The parts the text at ``target`` lives in (``()`` when it names no text)."""
        ...

    def get(self, path: str) -> Any:
        """The current value at a path of the output (``None`` when absent)."""
        ...

    def text(self, target: str) -> str | None:
        """The current text at a target (a path or a message reference)."""
        ...

    def report_draft(self) -> dict[str, Any]:
        """The report as it stands (for a reviewer's payload)."""
        ...


@runtime_checkable
class Policy(Protocol):
    """Decides what a crossing with unresolved failures does.

    ``decide`` returns ``None`` when it has nothing to do (no failures it handles).
    """

    def decide(self, crossing: CrossingView) -> DecisionValue | None: ...


Outcome = Literal["release", "rerender", "halt"]


def reasons(findings: Sequence[Finding]) -> str:
    return "; ".join(f"{f.verifier}/{f.code}" for f in findings) or "blocking findings"
