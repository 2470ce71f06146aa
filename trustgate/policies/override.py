"""Override: the verifier's result replaces what the model said."""

from __future__ import annotations

from typing import Any

from trustgate._report import OverrideRecord
from trustgate.errors import ConfigurationError
from trustgate.policies._decision import (
    CrossingView,
    DropParts,
    Release,
    Rewrite,
    SetPath,
    reasons,
)

__all__ = ["OVERRIDE_NOTE", "Override"]

OVERRIDE_NOTE = " (Overridden: the claims behind this value failed verification)"


class Override:
    """Set a field to a fixed value when blocking findings fail.

    The model's value is advisory: whatever it wrote ("APPROVE", "Approve", "LGTM"),
    the field becomes ``value``, and ``note`` is appended to ``note_field``. Fields are
    dotted paths into the output (``"review.verdict"``, ``"sections.0.status"``); the
    field must exist: an override of a field the output does not have cannot apply,
    and the crossing halts. A key the node wrote several times in the step is
    overridden in every write (a bare key is left with one write holding ``value``).
    When the gate read its claims from tool calls, the failed calls are removed too, so
    the same claim is not released in another place.

    The override settles a finding only if it rewrote what the finding judged: an
    override of ``verdict`` does not settle a failed ``manifest`` it never touched.

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
        from trustgate import _validate

        self.field = _validate.text("Override", "field", field)
        self.value = value
        self.note_field = _validate.optional_text("Override", "note_field", note_field)
        if not isinstance(note, str):
            raise ConfigurationError(f"Override: note must be a string, not {note!r}")
        self.note = note

    def decide(self, crossing: CrossingView) -> Release | None:
        failed = crossing.unresolved
        if not failed:
            return None
        reason = reasons(failed)
        rewrites: list[Rewrite] = []
        records: list[OverrideRecord] = []
        before = crossing.get(self.field)
        changed = before != self.value
        # set even when it already holds the value: the field is then the verifier's,
        # in every write of the key, and the finding it settles names those writes
        rewrites.append(
            SetPath(
                self.field,
                self.value,
                note_path=self.note_field if changed else None,
                note=self.note,
            )
        )
        if changed:
            records.append(
                OverrideRecord(
                    kind="field_override",
                    target=self.field,
                    before=_jsonable(before),
                    after=_jsonable(self.value),
                    reason=reason,
                    verifier=failed[0].verifier,
                    configured=True,
                )
            )
        calls = {p for pair in crossing.claim_parts for p in pair if ".tool_calls[" in p}
        if calls:
            # the failed calls go; a call no finding names is kept
            named = {p for f in failed for p in f.parts if p in calls}
            if named:
                rewrites.append(DropParts(tuple(sorted(named))))
                records.append(
                    OverrideRecord(
                        kind="tool_call_block",
                        target=crossing.target or "",
                        before=sorted(named),
                        after=None,
                        reason=reason,
                        verifier=failed[0].verifier,
                    )
                )
        return Release(tuple(rewrites), tuple(failed), "modified", tuple(records))

    def __repr__(self) -> str:
        return f"Override({self.field!r}, {self.value!r})"


def _jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value
