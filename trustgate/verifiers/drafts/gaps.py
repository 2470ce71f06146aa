"""Gap questions: what stands in the hole a deleted sentence leaves.

A gap must never suggest the answer. The only safe way to guarantee that
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
# A heading names a topic, not an event: "Why did this happen: “Contributing
# factors”?" reads as nonsense, so a heading anchors a question about its topic.
_WITH_TOPIC = "What does the record show about {topic}? It does not say."
_DETERMINER = re.compile(r"(?i)^(?:the|a|an|our|their|its|my|your|this|these|those)\b|^\d")
_TOPIC_QUESTION = "{topic} The record does not say."

TEMPLATE_WORDS = frozenset(
    w.lower()
    for w in re.findall(
        r"[^\W_]+",
        " ".join(
            (
                GAP_LABEL,
                _WITH_ANCHOR.replace("{anchor}", ""),
                _WITHOUT_ANCHOR,
                _WITH_TOPIC.replace("{topic}", ""),
                _TOPIC_QUESTION.replace("{topic}", ""),
            )
        ),
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


_HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[IVXivx]+[.)])\s+")


def _topic(heading: str) -> str:
    """A heading as a topic inside a sentence: numbering dropped, a capital that only
    starts the heading lowered ("Contributing factors" -> "contributing factors")."""
    core = _HEADING_NUMBER.sub("", _clean(heading)).strip(" :—–-")
    words = core.split()
    if (
        words
        and words[0][:1].isupper()
        and words[0][1:].islower()
        and (len(words) == 1 or not words[1][:1].isupper())
    ):
        core = words[0].lower() + core[len(words[0]) :]
    return core


def gap_question(anchor: str | None, *, heading: bool = False) -> str:
    """The question for a gap anchored on ``anchor`` (a kept sentence or heading).

    Only template words and the anchor's own words appear, so the question cannot
    suggest an answer. A heading is a topic: its gap asks what the record shows about
    that topic (or, when the heading is itself a question, asks it)."""
    if anchor is not None and heading:
        core = _clean(anchor).replace("“", "").replace("”", "")
        if core.endswith("?"):
            return _TOPIC_QUESTION.format(topic=core)
        topic = _TRAIL.sub("", _topic(core))
        if topic:
            if _DETERMINER.match(topic) is None:
                topic = "the " + topic
            return _WITH_TOPIC.format(topic=topic)
        return _WITHOUT_ANCHOR
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
