"""Markdown block structure as a CommonMark renderer reads it.

A verifier that decides for itself where a code block starts can be fooled: a line of
three backticks followed by an info string that contains a backtick is *not* a fence
in CommonMark, so a hand-written fence pattern that skips "code" would skip ordinary
paragraphs a reader sees rendered. Every verifier that skips or scans code therefore
asks this module, which asks a CommonMark-conformant parser (markdown-it-py, block
rules only), so all of them agree with the renderer and with each other.

Parsing costs 0.1-1 s per MB, too much for a check that sits on every crossing, so
most text is answered without it (:func:`_without_parsing`): where every line that
could open a code or HTML block in any container is a fence at the left margin, the
blocks are the fences, paired as CommonMark pairs them. Anything else (a fence or
four spaces of indentation inside a list or a quote, a tab, a line starting with
``<``, a bare carriage return) goes to the parser. A property test holds the two
readings equal on random Markdown.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Block", "blocks", "code_ranges"]

BlockKind = Literal["code", "html"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# A line that could open a fenced or indented code block or an HTML block in some
# container: after any run of container prefixes (quote markers, list markers,
# spaces), a fence marker, ``<``, a tab, or four spaces. A superset on purpose.
_SUSPECT = re.compile(r"^[ >+*0-9.)\-]*(?:```|~~~|<|\t| {4})", re.MULTILINE)
# A fence opening at the left margin: there it cannot sit inside a list item or a
# quote (a fence is never a lazy continuation line), so it opens a top-level block.
_OPENER = re.compile(r"(`{3,}|~{3,})([^\n]*)")
_CLOSER = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*\r?$", re.MULTILINE)
_BARE_CR = re.compile(r"\r(?!\n)")
_TRAILING_BLANK = re.compile(r"\n[ \t]+\Z")


@dataclass(frozen=True, slots=True)
class Block:
    """A block a renderer does not show as prose: ``code`` (fenced or indented) or
    ``html`` (a raw HTML block); ``start``/``end`` are character offsets in the text
    (whole lines, ``end`` exclusive)."""

    kind: BlockKind
    start: int
    end: int


@functools.cache
def _parser() -> object:
    from markdown_it import MarkdownIt

    # block structure only: inline rules cost time and change no block boundary
    return MarkdownIt("commonmark").disable(["inline"], ignoreInvalid=True)


def _line_starts(text: str) -> list[int]:
    # markdown-it normalises \r\n and \r to \n, so its line numbers count these too
    starts = [0]
    starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
    return starts


def _without_parsing(text: str) -> list[Block] | None:
    """The code blocks of ``text`` when every line that could open a block is a fence
    at the left margin; ``None`` when a parser must decide."""
    found: list[Block] = []
    pos = 0
    n = len(text)
    while (m := _SUSPECT.search(text, pos)) is not None:
        line = m.start()
        opener = _OPENER.match(text, line)
        if opener is None or m.end() - line != 3:
            return None  # indented, inside a container, a tab, or HTML: parse
        marker = opener.group(1)
        if marker[0] == "`" and "`" in opener.group(2):
            # not a fence (a backtick info string): a paragraph line
            pos = opener.end()
            continue
        after = text.find("\n", line)
        end = n
        if after >= 0:
            close = _CLOSER.search(text, after + 1)
            while close is not None and not (
                close.group(1)[0] == marker[0] and len(close.group(1)) >= len(marker)
            ):
                close = _CLOSER.search(text, close.end())
            if close is not None:
                nl = text.find("\n", close.end())
                end = n if nl < 0 else nl + 1
            elif (blank := _TRAILING_BLANK.search(text, after)) is not None:
                end = blank.start() + 1  # a last line of spaces is no line to the parser
        found.append(Block("code", line, end))
        if end >= n:
            break
        pos = end
    return found


def blocks(text: str) -> list[Block]:
    """Code and raw-HTML blocks of ``text``, in document order."""
    if _BARE_CR.search(text) is None:
        quick = _without_parsing(text)
        if quick is not None:
            return quick
    return _parsed(text)


def _parsed(text: str) -> list[Block]:
    """:func:`blocks` as the CommonMark parser reads them."""
    tokens = _parser().parse(text)  # type: ignore[attr-defined]
    starts = _line_starts(text)
    found: list[Block] = []
    for tok in tokens:
        kind: BlockKind | None = (
            "code"
            if tok.type in ("fence", "code_block")
            else "html"
            if tok.type == "html_block"
            else None
        )
        if kind is None or tok.map is None:
            continue
        first, last = tok.map
        start = starts[first] if first < len(starts) else len(text)
        end = starts[last] if last < len(starts) else len(text)
        found.append(Block(kind, start, end))
    return found


def code_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of the fenced and indented code blocks of ``text``."""
    return [(b.start, b.end) for b in blocks(text) if b.kind == "code"]
