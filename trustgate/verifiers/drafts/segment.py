"""trustgate's own sentence segmenter, built for redaction rather than linguistics.

The draft verifier deletes whole sentences, so the segmenter's one hard duty is
exact character spans: everything outside a deleted sentence must come out of the
redaction byte for byte. Its second duty is to be fast enough to sit on every
crossing of a graph (a general-purpose segmenter such as pysbd is two orders of
magnitude too slow for that), so it is a handful of precompiled regular expressions,
each searched once over a whole region of prose (every sentence end, every structural
line), and a little bookkeeping that hands each paragraph, item and quote its own,
tuned to the text models write: Markdown with headings,
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
    from trustgate.verifiers.drafts.segment import segment

    text = "Latency rose to 9.2 s at 14:02. [[3]] The deploy (v1.2.3) went out."
    spans = [text[s.start : s.end] for s in segment(text)]
    assert spans == ["Latency rose to 9.2 s at 14:02. [[3]]", "The deploy (v1.2.3) went out."]
    ```
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from trustgate._markdown import code_ranges
from trustgate.verifiers.drafts import _lists

__all__ = ["Segment", "SegmentKind", "Span", "Unit", "segment", "sentences", "spans", "units"]

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


class Span(NamedTuple):
    """A :class:`Segment` as a named tuple (several times cheaper to make than a
    frozen dataclass; a long draft has tens of thousands)."""

    start: int
    end: int
    kind: SegmentKind
    block: int


Unit = tuple[int, int, SegmentKind, int]
"""``(start, end, kind, block)``: a unit as :func:`units` returns it."""

# A run of non-blank lines: a paragraph, or a group of structural lines.
_BLOCK = re.compile(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*")
# Any line in the block that is structure (heading, bullet, number, row, quote, rule).
_STRUCT = re.compile(
    r"^[ \t]*(?:#{1,6}(?:[ \t]|$)|[-*+•][ \t]|\d{1,9}[.)][ \t]|\||>"
    r"|([-*_])(?:[ \t]*\1){2,}[ \t]*$)",
    re.MULTILINE,
)
# The same after a line break: a literal first, which the engine skips to at C speed,
# so one search of a region finds every structural line but a first one.
_STRUCT_AFTER_BREAK = re.compile("\n" + _STRUCT.pattern[1:], re.MULTILINE)
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
# end of the range or whitespace and something that can start a sentence (not a
# lower-case letter or a comma: "e.g. the API", "We waited... then").
# The pattern opens with a character class (no look-behind) so the engine can skip
# ahead to the next candidate; ellipses are ruled out in code. After a citation
# marker, the next sentence may follow with no space at all.
_END_BODY = r"[.!?][.!?]*[\"'”’)\]*_]*(?:[ \t]*\[\[[^\[\]\n]*\]\])*"
_STARTS = r"\s+[^\sa-z,;:)\]}%\-–—]"
_GLUED = r"(?<=\]\])(?=[^\s.,;:!?)\]])"
# ... searched on one range (a paragraph or an item) alone,
_END = re.compile(_END_BODY + rf"(?:(?=\s*\Z|{_STARTS})|{_GLUED})")
# ... and searched once over a whole region of prose, where the end of the range is
# not the end of the string: the end of a line stands in for it (and says so by
# group 2), which is the end of the range wherever the range ends on that line.
# The body never crosses a line break, so it is the same body either way. Group 1
# marks a full stop that may be an ellipsis or an abbreviation (built below, after
# the list of abbreviations), so only those are looked at again in Python.
_HEAD = re.compile(r"\s*")
_NON_SPACE = re.compile(r"\S")

# Abbreviations that are followed by a name or a number, so they never end a sentence
# (the list: lexicon/text.txt), and initialisms (e.g, i.e, a single capital: "J. Doe").
_NEVER_END = _lists.get("never-end")


def _abbreviation(never_end: Sequence[str]) -> re.Pattern[str]:
    """:data:`_ABBREVIATION` for the list ``never_end`` (a parameter so a test can
    show what the list decides)."""
    listed = "|".join(re.escape(w) for w in sorted(never_end, key=len, reverse=True))
    return re.compile(
        r"(?<![^\s(\[{\"'“‘*_])(?:(?i:" + (listed or "(?!)") + r")|(?:[a-z]\.)+[a-z]|[A-Z])\Z"
    )


def _maybe_abbreviation(never_end: Sequence[str]) -> str:
    """Look-behinds that hold at every full stop :func:`_split` may pass over: after a
    dot or an ellipsis, before a dot, or where :data:`_ABBREVIATION` could end (after
    a letter: a listed word in the same case-insensitive match, after what may stand
    before one, one look-behind per length as each must be of fixed width; ``x.y``;
    one capital; or so near the start of the text that nothing stands before it). A
    superset on purpose: the exact test runs on these only."""
    opener = "[\\s(\\[{\"'“‘*_]"  # what _ABBREVIATION lets stand before a word
    by_length: dict[int, list[str]] = {}
    for word in never_end:
        by_length.setdefault(len(word), []).append(re.escape(word))
    words = [
        rf"(?<={opener}(?i:{'|'.join(sorted(group))})\.)" for _, group in sorted(by_length.items())
    ]
    reach = max([9, *(len(w) + 2 for w in never_end)])  # opener, word, dot
    after_letter = "|".join(
        [r"(?<=[a-z]\.[a-z]\.)", rf"(?<={opener}[A-Z]\.)", *words, rf"(?<![\s\S]{{{reach}}})"]
    )
    return rf"(?<=[.…]\.)|(?=\.)|(?<=[^\W\d_]\.)(?:{after_letter})"


def _end_region(never_end: Sequence[str]) -> re.Pattern[str]:
    """:data:`_END_REGION` for the list ``never_end``."""
    return re.compile(
        # what can follow the first stop of an end (a necessary condition, so the
        # look-behinds are not tried inside figures and names: 9.2, a.b)
        r"[.!?](?=[\s.!?\"'”’)\]*_\[]|\Z)"
        rf"({_maybe_abbreviation(never_end)})?"
        + _END_BODY[len("[.!?]") :]
        + rf"(?:(?={_STARTS})|{_GLUED}|(?=[^\S\n]*(\n|\Z)))"
    )


_ABBREVIATION = _abbreviation(_NEVER_END)
_END_REGION = _end_region(_NEVER_END)
_RUN = max([1, *(len(w.rsplit(".", 1)[-1]) for w in _NEVER_END)])
"""The longest run of letters before the dot of a listed abbreviation (one for an
initialism or a capital)."""


def _could_abbreviate(text: str, start: int, dot: int) -> bool:
    """A necessary condition of :data:`_ABBREVIATION` at ``dot``, cheap to test: every
    abbreviation ends in a run of one to :data:`_RUN` letters before the dot ("approx.",
    "e.g.", "J."), so a figure ("14:02.") or a longer word ("deploy.") is none."""
    if dot <= start or not text[dot - 1].isalpha():
        return False
    return dot - start <= _RUN or not text[dot - _RUN - 1 : dot].isalpha()


def _split(text: str, start: int, end: int, kind: SegmentKind, block: int, out: list[Unit]) -> None:
    """Split ``text[start:end]`` (one paragraph or item) into trimmed sentence spans,
    searching the range on its own (what :func:`_cut` falls back to)."""
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
            out.append((head, stop, kind, block))
        pos = stop
    _tail(text, pos, end, kind, block, out)


def _tail(text: str, pos: int, end: int, kind: SegmentKind, block: int, out: list[Unit]) -> None:
    """The last sentence of a range: what follows its last sentence end, trimmed."""
    head = _HEAD.match(text, pos, end).end()  # type: ignore[union-attr]
    if head < end:
        stop = end
        while stop > head and text[stop - 1].isspace():
            stop -= 1
        out.append((head, stop, kind, block))


def _cut(
    text: str,
    start: int,
    end: int,
    kind: SegmentKind,
    block: int,
    out: list[Unit],
    ends: list[re.Match[str]],
    k: int,
) -> int:
    """:func:`_split` of ``text[start:end]`` read off the region's sentence ends
    (``ends[k:]``, from one pass of :data:`_END_REGION`); returns the index of the
    first end past the range.

    The region's ends are the range's own wherever the two searches see the same
    text, which is everywhere but two places, both rare, where the range is searched
    on its own instead: an end that straddles the range's start (a numbered item's
    ``1.`` followed by a marker), and an end accepted only because its line ends
    there, on a line the range continues past.
    """
    n = len(ends)
    while k < n and ends[k].start() < start:
        k += 1
    if k and ends[k - 1].end() > start:
        return _alone(text, start, end, kind, block, out, ends, k)
    mark = len(out)
    pos = start
    while k < n:
        match = ends[k]
        dot, stop = match.span()
        if dot >= end:
            break
        k += 1
        if match.lastindex is not None:  # a line end standing in, or a full stop to check
            eol = match.start(2)
            if eol >= 0 and eol != end:
                del out[mark:]
                return _alone(text, start, end, kind, block, out, ends, k)
            if (
                match.start(1) >= 0
                and text[dot] == "."
                and (
                    (dot > start and text[dot - 1] in ".…")
                    or text[dot + 1 : dot + 2] == "."
                    or (
                        _could_abbreviate(text, start, dot)
                        and _ABBREVIATION.search(text, max(start, dot - 12), dot)
                    )
                )
            ):
                continue  # an ellipsis or an abbreviation
        while text[pos].isspace():
            pos += 1
        out.append((pos, stop, kind, block))
        pos = stop
    while pos < end and text[pos].isspace():
        pos += 1
    if pos < end:
        while text[end - 1].isspace():
            end -= 1
        out.append((pos, end, kind, block))
    return k


def _alone(
    text: str,
    start: int,
    end: int,
    kind: SegmentKind,
    block: int,
    out: list[Unit],
    ends: list[re.Match[str]],
    k: int,
) -> int:
    """The range searched on its own; the region's ends inside it are passed over."""
    _split(text, start, end, kind, block, out)
    n = len(ends)
    while k < n and ends[k].start() < end:
        k += 1
    return k


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _structured(
    text: str, start: int, end: int, block: int, out: list[Unit], ends: list[re.Match[str]], k: int
) -> tuple[int, int]:
    """A run of non-blank lines holding structure: walk it line by line. Returns the
    next block number and the index of the first sentence end past the run."""
    open_kind: SegmentKind | None = None  # the block being continued, if any
    open_start = 0
    open_block = 0
    open_end = 0
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        m = _LINE.match(text, pos, line_end)
        what = m.lastgroup if m is not None else None
        if what is None:
            if open_kind is None:
                open_kind, open_start, open_block = "sentence", pos, block
                block += 1
            open_end = line_end  # continuation (or lazy continuation) of the open block
        elif what == "quote":
            if open_kind != "sentence":
                if open_kind is not None:
                    k = _cut(text, open_start, open_end, open_kind, open_block, out, ends, k)
                open_kind, open_start, open_block = "sentence", m.end(), block  # type: ignore[union-attr]
                block += 1
            open_end = line_end
        else:
            if open_kind is not None:
                k = _cut(text, open_start, open_end, open_kind, open_block, out, ends, k)
                open_kind = None
            if what == "heading":
                s, e = _trim(text, m.end(), line_end)  # type: ignore[union-attr]
                if s < e:
                    out.append((s, e, "heading", block))
                    block += 1
            elif what == "row":
                rule = _TABLE_RULE.match(text, pos, line_end)
                if rule is None or rule.end() != line_end:
                    s, e = _trim(text, pos, line_end)
                    s += 1  # the leading pipe
                    if e - 1 > s and text[e - 1] == "|" and text[e - 2] != "\\":
                        e -= 1
                    s, e = _trim(text, s, e)
                    if s < e:
                        out.append((s, e, "row", block))
                        block += 1
            elif what == "item":
                open_kind, open_start, open_block, open_end = "item", m.end(), block, line_end  # type: ignore[union-attr]
                block += 1
        pos = line_end + 1
    if open_kind is not None:
        k = _cut(text, open_start, open_end, open_kind, open_block, out, ends, k)
    return block, k


def _prose(text: str, start: int, end: int, block: int, out: list[Unit]) -> int:
    """The units of ``text[start:end]`` (no code in it); returns the next block number.

    One pass of :data:`_END_REGION` finds every sentence end of the region; each
    paragraph, item or quote then takes its own from that list in order."""
    if _NON_SPACE.search(text, start, end) is None:
        return block  # nothing but space between two code blocks
    ends = list(_END_REGION.finditer(text, start, end))
    struct = [m.start() + 1 for m in _STRUCT_AFTER_BREAK.finditer(text, start, end)]
    if _STRUCT.match(text, start, end) is not None:
        struct.insert(0, start)
    struct.append(end)  # a sentinel: no block starts at or after the end
    j = 0
    k = 0
    for para in _BLOCK.finditer(text, start, end):
        ps, pe = para.span()
        while struct[j] < ps:
            j += 1
        if struct[j] >= pe:
            k = _cut(text, ps, pe, "sentence", block, out, ends, k)
            block += 1
        else:
            block, k = _structured(text, ps, pe, block, out, ends, k)
    return block


def units(text: str, code: bool = True) -> list[Unit]:
    """:func:`spans` as plain tuples ``(start, end, kind, block)``, the form the
    draft verifier reads; ``code=False`` leaves code units out (their blocks are
    still counted)."""
    out: list[Unit] = []
    block = 0
    pos = 0
    for start, stop in code_ranges(text):
        block = _prose(text, pos, start, block, out)
        s, e = _trim(text, start, stop)
        if s < e:
            if code:
                out.append((s, e, "code", block))
            block += 1
        pos = max(pos, stop)
    _prose(text, pos, len(text), block, out)
    return out


def segment(text: str) -> list[Segment]:
    """Split ``text`` into units with exact spans, in order, without overlap.

    Whatever lies between units is whitespace or Markdown structure (bullet and
    heading markers, table pipes and rules, quote markers), so a redaction that
    removes units and keeps everything else keeps all of the author's words.
    """
    return [Segment(*unit) for unit in units(text)]


def spans(text: str) -> list[Span]:
    """:func:`segment` as named tuples."""
    return list(map(_SPAN, units(text)))


_SPAN = functools.partial(tuple.__new__, Span)


def sentences(text: str) -> list[str]:
    """The text of every unit except fenced code, in order."""
    return [text[s:e] for s, e, _, _ in units(text, code=False)]
