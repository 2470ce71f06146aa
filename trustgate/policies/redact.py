"""Redact: delete what the record does not support; delete, don't annotate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trustgate._findings import TextEdit
from trustgate._report import OverrideRecord
from trustgate.policies._decision import CrossingView, EditText, Release, Stop

__all__ = ["Redact"]


class Redact:
    """Apply the fix the draft check found: unsupported sentences deleted, a gap
    question standing in each hole, invalid citation markers dropped.

    The check itself is the :class:`~trustgate.DraftCheck` verifier, which this policy
    declares it needs (:attr:`needs_check`); a gate given ``Redact()`` without one runs
    it (with ``rules``). The
    text is rewritten where the gate read it, edit by edit (a draft written in several
    sections is edited in the section each deletion falls in); ``field`` names another
    place and ``also`` more places that hold the same text (such as a ``draft`` key
    beside the message), which must hold exactly the text the gate read. Every deletion
    is recorded in the report.

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
        from trustgate import _validate

        self.field = _validate.optional_text("Redact", "field", field)
        if rules is not None and (
            isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence)
        ):
            from trustgate.errors import ConfigurationError

            raise ConfigurationError(
                f"Redact: rules must be a list of sentence rules, not {rules!r}"
            )
        self.rules = rules
        self.also = _validate.strings("Redact", "also", also)

    @property
    def needs_check(self) -> tuple[type[Any], dict[str, Any]]:
        """The check whose fixes this policy applies, declared for the gate: the draft
        check (configured with ``rules``). A gate whose verifiers lack one runs it; the
        policy itself never builds or runs a verifier."""
        from trustgate.verifiers.drafts.check import DraftCheck

        return DraftCheck, {} if self.rules is None else {"rules": self.rules}

    def decide(self, crossing: CrossingView) -> Release | Stop | None:
        fixes = [
            f for f in crossing.unresolved if any(isinstance(p, TextEdit) for p in f.proposals)
        ]
        if not fixes:
            return None
        target = self.field or crossing.target
        if target is None:
            return Stop("Redact: the gate read no text to redact")
        read = crossing.claims if isinstance(crossing.claims, str) else None
        edits = tuple(
            dict.fromkeys(p for f in fixes for p in f.proposals if isinstance(p, TextEdit))
        )
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
        rewrites = tuple(
            EditText(t, edits, expect=None if t == crossing.target else read)
            for t in (target, *self.also)
        )
        return Release(rewrites, tuple(fixes), "modified", tuple(records))

    def __repr__(self) -> str:
        return "Redact()"
