"""The draft check as a verifier: findings that propose the edits that fix the draft.

The draft verifier decides which sentences a record does not support; the ``Redact``
policy only applies the edits the findings propose. Keeping the two apart means a
policy never runs a verifier, and the check runs under the gate's time limit like any
other. Each finding proposes the edit of its own span (the gap block standing for the
run of deleted sentences it belongs to, or the rewrite of one invalid marker), never
a copy of the whole text: a report stays linear in the size of the draft.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trustgate._findings import Finding, TextEdit
from trustgate.errors import ClaimParseError
from trustgate.verifiers.base import Evidence

if TYPE_CHECKING:
    from trustgate.verifiers.drafts.judge import JudgeSummary
    from trustgate.verifiers.drafts.verify import DraftVerdict

__all__ = ["JUDGE_CODE", "DraftCheck"]

JUDGE_CODE = "judge"
"""The code of the passing finding that counts what the sentence judge did."""


JUDGE_TIMEOUT = 60.0
"""The limit of a draft check with a judge when none is given (the blind verifier's):
the rules alone need none, a model call does."""


class DraftCheck:
    """Run ``verify_draft`` on the claims (a text) against the ``record`` evidence.

    Every blocking finding proposes a :class:`~trustgate.TextEdit` of the draft: a
    deleted sentence the gap block that stands for its run of deleted sentences (its
    ``detail["gap_question"]`` is the question), an invalid marker its rewrite. Applying
    every proposed edit gives the redacted draft (``DraftVerdict.text``).

    ``judge`` (a :class:`~trustgate.drafts.ModelJudge`, a
    :class:`~trustgate.drafts.FunctionJudge` or a function) is asked about the
    sentences the rules keep and can only add deletions (rule ``judge``, codes
    ``judge_causal`` and ``judge_hedged``); a passing finding with code ``judge``
    counts its calls and deletions. A judge that fails twice on one batch halts the
    crossing (``judge_failed``). In an async graph a model judge is awaited
    (``ainvoke``). ``timeout`` bounds the whole check, the judge's calls included.

    Example:
        ```python
        TrustGate("postmortem", reads=LastAIText(), verifiers=[DraftCheck()],
                  policy=Redact(), evidence=EvidenceSources(record=FromState("record")))
        ```
    """

    name = "redact"

    def __init__(
        self,
        rules: Sequence[Any] | None = None,
        *,
        timeout: float | None = None,
        judge: Any = None,
    ) -> None:
        from trustgate.verifiers.drafts.judge import as_judge

        self.rules = rules
        self.judge = None if judge is None else as_judge(judge)
        # a judge is a model call: nothing waits on it forever, even when no limit was given
        self.timeout = JUDGE_TIMEOUT if timeout is None and self.judge is not None else timeout
        # the gate awaits ``averify`` only when there is a judge's call to await
        self.is_async = self.judge is not None

    def _inputs(self, claims: Any, evidence: Evidence) -> tuple[str, Any, dict[str, Any]]:
        if not isinstance(claims, str):
            raise ClaimParseError(f"the draft check reads text, not {type(claims).__name__}")
        record = evidence.require("record")
        kwargs: dict[str, Any] = {} if self.rules is None else {"rules": self.rules}
        if self.judge is not None:
            kwargs["judge"] = self.judge
        return claims, record, kwargs

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        from trustgate.verifiers.drafts.verify import verify_draft

        draft, record, kwargs = self._inputs(claims, evidence)
        return self._findings(verify_draft(draft, record, **kwargs))

    async def averify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        from trustgate.verifiers.drafts.verify import averify_draft

        draft, record, kwargs = self._inputs(claims, evidence)
        return self._findings(await averify_draft(draft, record, **kwargs))

    def _findings(self, verdict: DraftVerdict) -> list[Finding]:
        found = verdict.findings
        summary = [] if verdict.judge is None else [self._judge_finding(verdict.judge)]
        if not found:
            return [Finding.ok(self.name, "every causal sentence cites the record"), *summary]
        gaps = {g.id: g for g in verdict.gaps}
        # One edit per gap, shared by the findings of its run: found by gap id, and the
        # gap a marker fell in by bisection (gaps are disjoint, in draft order). A scan
        # of every gap per finding made a long draft's check quadratic.
        spans = {
            g.id: TextEdit(start=g.replaced[0], end=g.replaced[1], text=g.block)
            for g in verdict.gaps
        }
        ordered = sorted(spans.values(), key=lambda e: e.start)
        starts = [e.start for e in ordered]
        # ``verdict.findings`` lists deletions, unreadable sentences, then invalid markers
        sources: list[Any] = [*verdict.removed, *verdict.unsupported, *verdict.invalid_citations]
        out: list[Finding] = []
        for f, src in zip(found, sources, strict=True):
            detail = dict(f.detail)
            proposals: list[TextEdit] = []
            gap = detail.get("gap")
            if gap in gaps:
                detail["gap_question"] = gaps[gap].question
                proposals.append(spans[gap])
            elif f.blocking and hasattr(src, "malformed"):
                k = bisect_right(starts, src.start) - 1
                if k >= 0 and src.start < ordered[k].end:
                    # the marker was in a deleted sentence: the gap took it
                    proposals.append(ordered[k])
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
        return [*out, *summary]

    def _judge_finding(self, j: JudgeSummary) -> Finding:
        """What the judge did, as counts: the report keeps it, the span reads it."""
        return Finding.ok(
            self.name,
            f"the sentence judge {j.judge!r} was asked about {j.sentences} sentence(s) the "
            f"rules kept ({j.cached} from its cache) in {j.calls} call(s) and deleted "
            f"{j.deletions}",
            code=JUDGE_CODE,
            detail={
                "judge": j.judge,
                "judge_sentences": j.sentences,
                "judge_cached": j.cached,
                "judge_calls": j.calls,
                "judge_deletions": j.deletions,
            },
        )

    def __repr__(self) -> str:
        return "DraftCheck()" if self.judge is None else f"DraftCheck(judge={self.judge!r})"
