"""Caveat: release a twice-inspected text with its unresolved issues at its head."""

from __future__ import annotations

from collections.abc import Sequence

from trustgate._findings import Cut, Finding
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
    """Text a verifier proved false (its :class:`~trustgate.Cut` proposals), longest
    first."""
    found = [p.text for p in finding.proposals if isinstance(p, Cut) and p.text.strip()]
    return sorted(dict.fromkeys(found), key=len, reverse=True)


class Caveat:
    """Release with a visible caveat block at the head of the text.

    What a deterministic check proved false is removed first: a verifier proposes such
    text for cutting (a :class:`~trustgate.Cut`: an invented citation, an unapproved
    URL), and the caveat names every unresolved issue, so it travels with the text,
    not only in the report.

    A caveat is for text a person reads. It settles findings about that text only:
    a failed tool call (the tool would still run), or a field a program acts on (a
    router testing ``"APPROVE" in verdict`` still would), is never released with a
    caveat in front; the crossing halts and says why. A state key counts as text only
    when it is named with ``field=``; without text to put the caveat on, it halts too.

    Example:
        ```python
        Rerender(max_attempts=1, then=Caveat(field="draft"))
        ```
    """

    def __init__(self, field: str | None = None, *, remove: bool = True) -> None:
        from trustgate._validate import optional_text

        self.field = optional_text("Caveat", "field", field)
        self.remove = bool(remove)

    def decide(self, crossing: CrossingView) -> Release | Stop | None:
        failed = crossing.unresolved
        if not failed:
            return None
        target = self.field or crossing.target
        text = crossing.text(target) if target is not None else None
        if target is None or text is None:
            return Stop(f"Caveat: no text at {target!r} to put the caveat on")
        if self.field is None and "[" not in target.split(".", 1)[0]:
            return Stop(
                f"Caveat: {target!r} is a state value a program may act on, not text a person "
                "reads; a caveat would release the failed value with a note in front of it. "
                f"Name it with Caveat(field={target!r}) if it is prose, or use Override"
            )
        own = set(crossing.text_parts(target))
        beyond = [f for f in failed if f.parts and not set(f.parts) <= own]
        if beyond:
            parts = sorted({p for f in beyond for p in f.parts if p not in own})
            return Stop(
                f"Caveat: a caveat on the text at {target!r} cannot settle "
                f"{reasons(beyond)}, which judged {', '.join(parts) or 'no part of the text'}"
                " (a tool call or a field stays as it is under a caveat): block or override "
                "it instead"
            )
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
        return Release(tuple(rewrites), tuple(failed), "caveated", tuple(records))

    def __repr__(self) -> str:
        return f"Caveat(field={self.field!r})"


def caveat_block(failed: Sequence[Finding]) -> str:
    lines = "\n".join(f"> - {f.verifier}/{f.code}: {f.message}" for f in failed)
    return f"{CAVEAT_HEADER}\n{lines}\n\n"
