"""The draft segmenter as it stood before the one-pass rewrite, kept as a test oracle.

:mod:`trustgate.verifiers.drafts.segment` now splits a whole prose region with one
pass of its sentence-end pattern; this is the paragraph-by-paragraph version it
replaced, byte for byte in what it returns. tests/unit/test_segment_one_pass.py holds the
two equal on generated Markdown. It lives in tests/ on purpose: the package ships one
segmenter.
"""

from __future__ import annotations

import re
from itertools import count
from typing import Literal, NamedTuple

from trustgate._markdown import code_ranges

__all__ = ["spans"]

SegmentKind = Literal["sentence", "item", "heading", "row", "code"]


class Span(NamedTuple):
    """A :class:`Segment` as the verifier builds it internally (a tuple is several
    times cheaper to make than a frozen dataclass, and a long draft has tens of
    thousands)."""

    start: int
    end: int
    kind: SegmentKind
    block: int


# A run of non-blank lines: a paragraph, or a group of structural lines.
_BLOCK = re.compile(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*")
# Any line in the block that is structure (heading, bullet, number, row, quote, rule).
_STRUCT = re.compile(
    r"^[ \t]*(?:#{1,6}(?:[ \t]|$)|[-*+•][ \t]|\d{1,9}[.)][ \t]|\||>"
    r"|([-*_])(?:[ \t]*\1){2,}[ \t]*$)",
    re.MULTILINE,
)
# What a line of a structured block is, in the order the walk tries them (a rule
# only when it is the whole line); the matched prefix is the line's marker.
_LINE = re.compile(
    r"(?P<hrule>[ \t]*([-*_])(?:[ \t]*\2){2,}[ \t]*\r?\Z)"
    r"|(?P<heading>[ \t]*#{1,6}(?:[ \t]+|(?=\r?\Z)))"
    r"|(?P<row>[ \t]*\|)"
    r"|(?P<item>[ \t]*(?:[-*+•]|\d{1,9}[.)])[ \t]+)"
    r"|(?P<quote>[ \t]*(?:>[ \t]?)+)"
)
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t:|-]*-[ \t:|-]*\r?$")

# A sentence end: terminal punctuation (an ellipsis never ends a sentence), closing
# quotes or brackets, then any citation markers (``. [[12]] [[14]]``), then either the
# end of the block or whitespace and something that can start a sentence (not a
# lower-case letter or a comma: "e.g. the API", "We waited... then").
# The pattern opens with a character class (no look-behind) so the engine can skip
# ahead to the next candidate; ellipses are ruled out in code. After a citation
# marker, the next sentence may follow with no space at all.
_END = re.compile(
    r"[.!?][.!?]*"
    r"[\"'”’)\]*_]*(?:[ \t]*\[\[[^\[\]\n]*\]\])*"
    r"(?:(?=\s*\Z|\s+[^\sa-z,;:)\]}%\-–—])|(?<=\]\])(?=[^\s.,;:!?)\]]))"
)
_HEAD = re.compile(r"\s*")

# Abbreviations that are followed by a name or a number, so they never end a sentence,
# and initialisms (e.g, i.e, a single capital: "J. Doe").
_NEVER_END = [
    "e.g",
    "eg",
    "i.e",
    "ie",
    "vs",
    "v",
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "no",
    "nos",
    "st",
    "mt",
    "fig",
    "figs",
    "cf",
    "approx",
    "ca",
    "ref",
    "refs",
    "vol",
    "jr",
    "sr",
    "gen",
    "col",
    "capt",
    "lt",
    "sgt",
    "rev",
    "hon",
    "dept",
    "viz",
    "resp",
    "al",
    "op",
    "ch",
    "art",
    "para",
    "pp",
    "p",
]
_ABBREVIATION = re.compile(
    r"(?<![^\s(\[{\"'“‘*_])(?:(?i:"
    + "|".join(re.escape(w) for w in sorted(_NEVER_END, key=len, reverse=True))
    + r")|(?:[a-z]\.)+[a-z]|[A-Z])\Z"
)


def _could_abbreviate(text: str, start: int, dot: int) -> bool:
    """A necessary condition of :data:`_ABBREVIATION` at ``dot``, cheap to test: every
    abbreviation ends in a run of one to six letters before the dot ("approx.",
    "e.g.", "J."), so a figure ("14:02.") or a longer word ("deploy.") is none."""
    if dot <= start or not text[dot - 1].isalpha():
        return False
    return dot - start < 7 or not text[dot - 7 : dot].isalpha()


def _split(text: str, start: int, end: int, kind: SegmentKind, block: int, out: list[Span]) -> None:
    """Split ``text[start:end]`` (one paragraph or item) into trimmed sentence spans."""
    pos = start
    for match in _END.finditer(text, start, end):
        stop = match.end()
        if stop <= pos:
            continue
        dot = match.start()
        if text[dot] == "." and (
            (dot > start and text[dot - 1] in ".…")
            or (dot + 1 < end and text[dot + 1] in ".…")
            or (
                _could_abbreviate(text, start, dot)
                and _ABBREVIATION.search(text, max(start, dot - 12), dot)
            )
        ):
            continue  # an ellipsis or an abbreviation
        head = _HEAD.match(text, pos, stop).end()  # type: ignore[union-attr]
        if head < stop:
            out.append(Span(head, stop, kind, block))
        pos = stop
    head = _HEAD.match(text, pos, end).end()  # type: ignore[union-attr]
    if head < end:
        stop = end
        while stop > head and text[stop - 1].isspace():
            stop -= 1
        out.append(Span(head, stop, kind, block))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _structured(text: str, start: int, end: int, blocks: count[int], out: list[Span]) -> None:
    """A run of non-blank lines holding structure: walk it line by line."""
    open_kind: SegmentKind | None = None  # the block being continued, if any
    open_start = 0
    open_block = 0
    open_end = 0

    def flush() -> None:
        nonlocal open_kind
        if open_kind is not None:
            _split(text, open_start, open_end, open_kind, open_block, out)
            open_kind = None

    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        m = _LINE.match(text, pos, line_end)
        what = m.lastgroup if m is not None else None
        if what == "hrule":
            flush()
        elif what == "heading":
            flush()
            s, e = _trim(text, m.end(), line_end)  # type: ignore[union-attr]
            if s < e:
                out.append(Span(s, e, "heading", next(blocks)))
        elif what == "row":
            flush()
            rule = _TABLE_RULE.match(text, pos, line_end)
            if rule is None or rule.end() != line_end:
                s, e = _trim(text, pos, line_end)
                s += 1  # the leading pipe
                if e - 1 > s and text[e - 1] == "|" and text[e - 2] != "\\":
                    e -= 1
                s, e = _trim(text, s, e)
                if s < e:
                    out.append(Span(s, e, "row", next(blocks)))
        elif what == "item":
            flush()
            open_kind, open_start, open_block, open_end = "item", m.end(), next(blocks), line_end  # type: ignore[union-attr]
        elif what == "quote":
            if open_kind != "sentence":
                flush()
                open_kind, open_start, open_block = "sentence", m.end(), next(blocks)  # type: ignore[union-attr]
            open_end = line_end
        else:
            if open_kind is None:
                open_kind, open_start, open_block = "sentence", pos, next(blocks)
            open_end = line_end  # continuation (or lazy continuation) of the open block
        pos = line_end + 1
    flush()


def _prose(text: str, start: int, end: int, blocks: count[int], out: list[Span]) -> None:
    for para in _BLOCK.finditer(text, start, end):
        ps, pe = para.span()
        if _STRUCT.search(text, ps, pe) is None:
            _split(text, ps, pe, "sentence", next(blocks), out)
        else:
            _structured(text, ps, pe, blocks, out)


def spans(text: str) -> list[Span]:
    """Every unit of ``text`` in order, as the old segmenter split it."""
    out: list[Span] = []
    blocks = count()
    pos = 0
    for start, stop in code_ranges(text):
        _prose(text, pos, start, blocks, out)
        s, e = _trim(text, start, stop)
        if s < e:
            out.append(Span(s, e, "code", next(blocks)))
        pos = max(pos, stop)
    _prose(text, pos, len(text), blocks, out)
    return out
