"""The draft check as a verifier: findings that propose the edits that fix the draft.

The draft verifier decides which sentences a record does not support; the ``Redact``
policy only applies the edits the findings propose. Keeping the two apart means a
policy never runs a verifier, and the check runs under the gate's time limit like any
other. Each finding proposes the edit of its own span (the gap block standing for the
run of deleted sentences it belongs to, or the rewrite of one invalid marker), never
a copy of the whole text: a report stays linear in the size of the draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trustgate._findings import Finding, TextEdit
from trustgate.errors import ClaimParseError
from trustgate.verifiers.base import Evidence

__all__ = ["DraftCheck"]


class DraftCheck:
    """Run ``verify_draft`` on the claims (a text) against the ``record`` evidence.

    Every blocking finding proposes a :class:`~trustgate.TextEdit` of the draft: a
    deleted sentence the gap block that stands for its run of deleted sentences (its
    ``detail["gap_question"]`` is the question), an invalid marker its rewrite. Applying
    every proposed edit gives the redacted draft (``DraftVerdict.text``).

    Example:
        ```python
        TrustGate("postmortem", reads=LastAIText(), verifiers=[DraftCheck()],
                  policy=Redact(), evidence=EvidenceSources(record=FromState("record")))
        ```
    """

    name = "redact"

    def __init__(self, rules: Sequence[Any] | None = None, *, timeout: float | None = None) -> None:
        self.rules = rules
        self.timeout = timeout

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        from trustgate.verifiers.drafts.verify import verify_draft

        if not isinstance(claims, str):
            raise ClaimParseError(f"the draft check reads text, not {type(claims).__name__}")
        record = evidence.require("record")
        verdict = (
            verify_draft(claims, record)
            if self.rules is None
            else verify_draft(claims, record, rules=self.rules)
        )
        found = verdict.findings
        if not found:
            return [Finding.ok(self.name, "every causal sentence cites the record")]
        gaps = {g.id: g for g in verdict.gaps}
        spans = [
            TextEdit(start=g.replaced[0], end=g.replaced[1], text=g.block) for g in verdict.gaps
        ]
        # ``verdict.findings`` lists deletions, unreadable sentences, then invalid markers
        sources: list[Any] = [*verdict.removed, *verdict.unsupported, *verdict.invalid_citations]
        out: list[Finding] = []
        for f, src in zip(found, sources, strict=True):
            detail = dict(f.detail)
            proposals: list[TextEdit] = []
            gap = detail.get("gap")
            if gap in gaps:
                detail["gap_question"] = gaps[gap].question
                edit = next(e for e in spans if (e.start, e.end) == gaps[gap].replaced)
                proposals.append(edit)
            elif f.blocking and hasattr(src, "malformed"):
                within = [e for e in spans if e.start <= src.start < e.end]
                if within:  # the marker was in a deleted sentence: the gap took it
                    proposals.append(within[0])
                elif src.fix is not None:
                    proposals.append(TextEdit(start=src.fix[0], end=src.fix[1], text=src.fix[2]))
                else:  # an unclosed marker stays as written: the fix is to leave it
                    proposals.append(TextEdit(start=src.start, end=src.start, text=""))
            out.append(
                Finding.failed(
                    self.name,
                    f.code,
                    f.message,
                    severity=f.severity,
                    subject=f.subject,
                    detail=detail,
                    proposals=proposals,
                )
            )
        return out

    def __repr__(self) -> str:
        return "DraftCheck()"
