"""trustgate's own sentence segmenter, built for redaction rather than linguistics.

The draft verifier deletes whole sentences, so the segmenter's one hard duty is
exact character spans: everything outside a deleted sentence must come out of the
redaction byte for byte. Its second duty is to be fast enough to sit on every
crossing of a graph (a general-purpose segmenter such as pysbd is two orders of
magnitude too slow for that), so it is a handful of precompiled regular expressions
and a little bookkeeping, tuned to the text models write: Markdown with headings,
bullets, numbered lists, tables and fenced code, times (14:02), figures (9.2 s),
versions (v1.2.3), URLs, abbreviations (e.g., i.e., vs., Dr., No.) and citation
markers (``[[12]]``) that belong to the sentence they follow.

Code blocks are units of kind ``"code"``: never split, never scanned, never deleted.
Which lines are code is decided by a CommonMark parser (:mod:`trustgate._markdown`),
so a line that merely looks like a fence (three backticks followed by an info string
holding a backtick) opens nothing here either, and the text after it is read as the
prose every renderer shows. Fenced and indented code blocks are skipped alike; raw
HTML blocks are read as prose (a renderer shows their text). Headings, list items and
table rows never merge with their neighbours.

A citation marker ends its sentence even when the next sentence follows without a
space (``14:02. [[1]]The pool ...`` is two units), so a model cannot hide a claim
inside the cited sentence before it.

Example:
    ```python
    from trustgate.verifiers.segment import segment

    text = "Latency rose to 9.2 s at 14:02. [[3]] The deploy (v1.2.3) went out."
    spans = [text[s.start : s.end] for s in segment(text)]
    assert spans == ["Latency rose to 9.2 s at 14:02. [[3]]", "The deploy (v1.2.3) went out."]
    ```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from trustgate._markdown import code_ranges

__all__ = ["Segment", "SegmentKind", "segment", "sentences"]

SegmentKind = Literal["sentence", "item", "heading", "row", "code"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One unit of a text: ``text[start:end]`` exactly, never empty, never padded.

    ``block`` numbers the paragraph, list item, heading, table row or code block the
    unit belongs to: sentences of one paragraph share it, which is what "the same
    paragraph" means for a gap's anchor.
    """

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
_HRULE = re.compile(r"[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*\r?$")
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t:|-]*-[ \t:|-]*\r?$")
_HEADING = re.compile(r"[ \t]*#{1,6}(?:[ \t]+|(?=\r?$))")
_ITEM = re.compile(r"[ \t]*(?:[-*+•]|\d{1,9}[.)])[ \t]+")
_QUOTE = re.compile(r"[ \t]*(?:>[ \t]?)+")
_ROW = re.compile(r"[ \t]*\|")

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


def _split(
    text: str, start: int, end: int, kind: SegmentKind, block: int, out: list[Segment]
) -> None:
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
            or _ABBREVIATION.search(text, max(start, dot - 12), dot)
        ):
            continue  # an ellipsis or an abbreviation
        head = _HEAD.match(text, pos, stop).end()  # type: ignore[union-attr]
        if head < stop:
            out.append(Segment(head, stop, kind, block))
        pos = stop
    head = _HEAD.match(text, pos, end).end()  # type: ignore[union-attr]
    if head < end:
        stop = end
        while stop > head and text[stop - 1].isspace():
            stop -= 1
        out.append(Segment(head, stop, kind, block))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


class _Blocks:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n - 1


def _structured(text: str, start: int, end: int, blocks: _Blocks, out: list[Segment]) -> None:
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
        if (m := _HRULE.match(text, pos, line_end)) is not None and m.end() == line_end:
            flush()
        elif (m := _HEADING.match(text, pos, line_end)) is not None:
            flush()
            s, e = _trim(text, m.end(), line_end)
            if s < e:
                out.append(Segment(s, e, "heading", blocks.next()))
        elif _ROW.match(text, pos, line_end) is not None:
            flush()
            rule = _TABLE_RULE.match(text, pos, line_end)
            if rule is None or rule.end() != line_end:
                s, e = _trim(text, pos, line_end)
                s += 1  # the leading pipe
                if e - 1 > s and text[e - 1] == "|" and text[e - 2] != "\\":
                    e -= 1
                s, e = _trim(text, s, e)
                if s < e:
                    out.append(Segment(s, e, "row", blocks.next()))
        elif (m := _ITEM.match(text, pos, line_end)) is not None:
            flush()
            open_kind, open_start, open_block, open_end = "item", m.end(), blocks.next(), line_end
        elif (m := _QUOTE.match(text, pos, line_end)) is not None:
            if open_kind != "sentence":
                flush()
                open_kind, open_start, open_block = "sentence", m.end(), blocks.next()
            open_end = line_end
        else:
            if open_kind is None:
                open_kind, open_start, open_block = "sentence", pos, blocks.next()
            open_end = line_end  # continuation (or lazy continuation) of the open block
        pos = line_end + 1
    flush()


def _prose(text: str, start: int, end: int, blocks: _Blocks, out: list[Segment]) -> None:
    for para in _BLOCK.finditer(text, start, end):
        ps, pe = para.span()
        if _STRUCT.search(text, ps, pe) is None:
            _split(text, ps, pe, "sentence", blocks.next(), out)
        else:
            _structured(text, ps, pe, blocks, out)


def segment(text: str) -> list[Segment]:
    """Split ``text`` into units with exact spans, in order, without overlap.

    Whatever lies between units is whitespace or Markdown structure (bullet and
    heading markers, table pipes and rules, quote markers), so a redaction that
    removes units and keeps everything else keeps all of the author's words.
    """
    out: list[Segment] = []
    blocks = _Blocks()
    pos = 0
    for start, stop in code_ranges(text):
        _prose(text, pos, start, blocks, out)
        s, e = _trim(text, start, stop)
        if s < e:
            out.append(Segment(s, e, "code", blocks.next()))
        pos = max(pos, stop)
    _prose(text, pos, len(text), blocks, out)
    return out


def sentences(text: str) -> list[str]:
    """The text of every unit except fenced code, in order."""
    return [text[s.start : s.end] for s in segment(text) if s.kind != "code"]
