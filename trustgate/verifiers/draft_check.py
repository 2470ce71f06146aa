"""The draft check as a verifier: findings that carry the redacted text as their fix.

The draft verifier decides which sentences a record does not support; the ``Redact``
policy only applies the fix the findings carry. Keeping the two apart means a policy
never runs a verifier, and the check runs under the gate's time limit like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trustgate._findings import Finding
from trustgate.errors import ClaimParseError
from trustgate.verifiers.base import Evidence

__all__ = ["DraftCheck"]


class DraftCheck:
    """Run ``verify_draft`` on the claims (a text) against the ``record`` evidence.

    Every blocking finding carries ``detail["fix_text"]``: the whole text with the
    unsupported sentences deleted and gap questions in their place; sentence
    deletions also carry ``detail["gap_question"]``.

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
        from trustgate.verifiers.draft import verify_draft

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
        questions = {g.id: g.question for g in verdict.gaps}
        out: list[Finding] = []
        for f in found:
            detail = dict(f.detail)
            detail["fix_text"] = str(verdict.text)
            gap = detail.get("gap")
            if gap in questions:
                detail["gap_question"] = questions[gap]
            out.append(
                Finding.failed(
                    self.name,
                    f.code,
                    f.message,
                    severity=f.severity,
                    subject=f.subject,
                    detail=detail,
                )
            )
        return out

    def __repr__(self) -> str:
        return "DraftCheck()"
