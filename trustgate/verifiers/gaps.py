"""Gap questions: what stands in the hole a deleted sentence leaves.

A gap must never suggest the answer (seed 002). The only safe way to guarantee that
is structural: the question is a fixed template plus the words of its *anchor* (the
kept observation the deleted sentence tried to explain) and nothing else. No word of
the deleted sentence reaches the question unless the anchor already says it, so the
gap cannot name a candidate cause, not even one that occurs in the record.
"""

from __future__ import annotations

import re

__all__ = ["GAP_LABEL", "TEMPLATE_WORDS", "gap_question", "testimony_text"]

GAP_LABEL = "**Open question:**"

_WITH_ANCHOR = "Why did this happen: “{anchor}”? The record does not say."
_WITHOUT_ANCHOR = "What happened here, and why? The record does not say."

TEMPLATE_WORDS = frozenset(
    w.lower()
    for w in re.findall(
        r"[^\W_]+", " ".join((GAP_LABEL, _WITH_ANCHOR.replace("{anchor}", ""), _WITHOUT_ANCHOR))
    )
)
"""Every word the gap block itself contributes (label and templates), anchor aside."""

_MARKER = re.compile(r"\[\[[^\[\]\n]*\]\]|\[\[|\]\]")
_SPACE = re.compile(r"\s+")
_TRAIL = re.compile(r"[\s.!?…:;,]+$")


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?…])")


def _clean(text: str) -> str:
    """Markers out, whitespace collapsed, and no space left before punctuation."""
    flat = _SPACE.sub(" ", _MARKER.sub(" ", text)).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", flat)


def gap_question(anchor: str | None) -> str:
    """The question for a gap anchored on ``anchor`` (a kept sentence or heading)."""
    if anchor is not None:
        core = _TRAIL.sub("", _clean(anchor)).replace("“", "").replace("”", "")
        if core:
            return _WITH_ANCHOR.format(anchor=core)
    return _WITHOUT_ANCHOR


def testimony_text(author: str, answer: str) -> str:
    """A person's answer as attributed testimony: never a cited fact, never a marker."""
    who = _clean(author)
    said = _clean(answer)
    return f"Per {who} (not in the record): {said}"
