"""Redact: delete what the record does not support; delete, don't annotate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trustgate._report import OverrideRecord
from trustgate.policies._decision import CrossingView, Release, ReplaceText, Stop

__all__ = ["Redact"]


class Redact:
    """Apply the fix the draft check found: unsupported sentences deleted, a gap
    question standing in each hole, invalid citation markers dropped.

    The check itself is the :class:`~trustgate.DraftCheck`
    verifier; a gate given ``Redact()`` without one adds it (with ``rules``). The
    text is rewritten where the gate read it (``field`` to name another place; ``also``
    for more places that hold the same text, such as a ``draft`` key beside the
    message), and every deletion is recorded in the report.

    Example:
        ```python
        TrustGate("postmortem", reads=LastAIText(), policy=Redact(),
                  evidence=EvidenceSources(record=FromState("record")))
        ```
    """

    def __init__(
        self,
        field: str | None = None,
        *,
        rules: Sequence[Any] | None = None,
        also: Sequence[str] = (),
    ) -> None:
        self.field = field
        self.rules = rules
        self.also = tuple(also)

    def required_verifiers(self) -> list[Any]:
        from trustgate.verifiers.draft_check import DraftCheck

        return [DraftCheck(self.rules)]

    def decide(self, crossing: CrossingView) -> Release | Stop | None:
        fixes = [f for f in crossing.unresolved if "fix_text" in f.detail]
        if not fixes:
            return None
        target = self.field or crossing.target
        if target is None:
            return Stop("Redact: the gate read no text to redact")
        text = fixes[-1].detail["fix_text"]
        records: list[OverrideRecord] = []
        for where in (target, *self.also):
            for f in fixes:
                if "sentence" in f.detail and "marker" not in f.detail:
                    records.append(
                        OverrideRecord(
                            kind="sentence_delete",
                            target=where,
                            before=f.detail["sentence"],
                            after=f.detail.get("gap_question"),
                            reason=f"{f.detail.get('rule', f.code)}: {f.message}",
                            verifier=f.verifier,
                        )
                    )
                else:
                    records.append(
                        OverrideRecord(
                            kind="citation_drop",
                            target=where,
                            before=f.detail.get("marker", f.subject),
                            after=None,
                            reason=f.code,
                            verifier=f.verifier,
                        )
                    )
        rewrites = tuple(ReplaceText(t, text) for t in (target, *self.also))
        return Release(rewrites, tuple(fixes), "modified", tuple(records))

    def __repr__(self) -> str:
        return "Redact()"
