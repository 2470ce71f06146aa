"""Override: the verifier's result replaces what the model said."""

from __future__ import annotations

from typing import Any

from trustgate._report import OverrideRecord
from trustgate.policies._decision import (
    CrossingView,
    DropToolCalls,
    Release,
    Rewrite,
    SetPath,
    reasons,
)

__all__ = ["OVERRIDE_NOTE", "Override"]

OVERRIDE_NOTE = " (Overridden: evidence verification failed for already_correct claims)"


class Override:
    """Set a field to a fixed value when blocking findings fail.

    The model's value is advisory: whatever it wrote ("APPROVE", "Approve", "LGTM"),
    the field becomes ``value``, and ``note`` is appended to ``note_field``. Fields are
    dotted paths into the output (``"review.verdict"``, ``"sections.0.status"``); the
    field must exist: an override of a field the output does not have cannot apply,
    and the crossing halts. When the gate read its claims from tool calls, the failed
    calls are removed too, so the same claim is not released in another place.

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

    def decide(self, crossing: CrossingView) -> Release | None:
        failed = crossing.unresolved
        if not failed:
            return None
        reason = reasons(failed)
        rewrites: list[Rewrite] = []
        records: list[OverrideRecord] = []
        before = crossing.get(self.field)
        if before != self.value:
            rewrites.append(
                SetPath(self.field, self.value, note_path=self.note_field, note=self.note)
            )
            records.append(
                OverrideRecord(
                    kind="field_override",
                    target=self.field,
                    before=_jsonable(before),
                    after=_jsonable(self.value),
                    reason=reason,
                    verifier=failed[0].verifier,
                )
            )
        target = crossing.target or ""
        if target.endswith(".tool_calls") and isinstance(crossing.claims, list):
            subjects = {f.subject for f in failed if f.subject is not None}
            read = {c.get("id") for c in crossing.claims if isinstance(c, dict)}
            chosen = (subjects & read) or read
            # a call with no id (a legacy ``function_call``) cannot be named: None stands
            # for every id-less call, so it goes too instead of being released
            ids: frozenset[str | None] = frozenset(None if i is None else str(i) for i in chosen)
            if ids:
                rewrites.append(DropToolCalls(target, ids))
                records.append(
                    OverrideRecord(
                        kind="tool_call_block",
                        target=target,
                        before=sorted(ids, key=str),
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
