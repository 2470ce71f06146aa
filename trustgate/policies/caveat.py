"""Caveat: release a twice-inspected text with its unresolved issues at its head."""

from __future__ import annotations

from collections.abc import Sequence

from trustgate._findings import Finding
from trustgate._report import OverrideRecord
from trustgate.policies._decision import (
    CrossingView,
    CutText,
    PrependText,
    Release,
    Rewrite,
    Stop,
    reasons,
)

__all__ = ["CAVEAT_HEADER", "Caveat"]

CAVEAT_HEADER = "> **Caveat:** this content failed verification twice; unresolved issues:"


def removable(finding: Finding) -> list[str]:
    """Text a verifier proved false, as written (``detail["remove"]``), longest first."""
    value = finding.detail.get("remove")
    items = value if isinstance(value, (list, tuple)) else [value]
    found = [v for v in items if isinstance(v, str) and v.strip()]
    return sorted(dict.fromkeys(found), key=len, reverse=True)


class Caveat:
    """Release with a visible caveat block at the head of the text.

    What a deterministic check proved false is removed first: a verifier marks such
    text in its finding (``detail["remove"]``: an invented citation, an unapproved
    URL), and the caveat names every unresolved issue, so it travels with the text,
    not only in the report. Without text to put the caveat on, it cannot apply and the
    crossing halts.

    Example:
        ```python
        Rerender(max_attempts=1, then=Caveat(field="draft"))
        ```
    """

    def __init__(self, field: str | None = None, *, remove: bool = True) -> None:
        self.field = field
        self.remove = remove

    def decide(self, crossing: CrossingView) -> Release | Stop | None:
        failed = crossing.unresolved
        if not failed:
            return None
        target = self.field or crossing.target
        text = crossing.text(target) if target is not None else None
        if target is None or text is None:
            return Stop(f"Caveat: no text at {target!r} to put the caveat on")
        rewrites: list[Rewrite] = []
        records: list[OverrideRecord] = []
        if self.remove:
            cut: list[str] = []
            for f in failed:
                for fragment in removable(f):
                    if fragment in text and fragment not in cut:
                        cut.append(fragment)
                        records.append(
                            OverrideRecord(
                                kind="citation_drop",
                                target=target,
                                before=fragment,
                                after=None,
                                reason=f"{f.verifier}/{f.code}",
                                verifier=f.verifier,
                            )
                        )
            if cut:
                rewrites.append(CutText(target, tuple(cut)))
        block = caveat_block(failed)
        rewrites.append(PrependText(target, block))
        records.append(
            OverrideRecord(
                kind="caveat", target=target, after=block.strip(), reason=reasons(failed)
            )
        )
        return Release(tuple(rewrites), tuple(failed), "caveat", tuple(records))

    def __repr__(self) -> str:
        return f"Caveat(field={self.field!r})"


def caveat_block(failed: Sequence[Finding]) -> str:
    lines = "\n".join(f"> - {f.verifier}/{f.code}: {f.message}" for f in failed)
    return f"{CAVEAT_HEADER}\n{lines}\n\n"
