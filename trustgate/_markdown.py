"""Markdown block structure as a CommonMark renderer reads it.

A verifier that decides for itself where a code block starts can be fooled: a line of
three backticks followed by an info string that contains a backtick is *not* a fence
in CommonMark, so a hand-written fence pattern that skips "code" would skip ordinary
paragraphs a reader sees rendered. Every verifier that skips or scans code therefore
asks this module, which asks a CommonMark-conformant parser (markdown-it-py, block
rules only), so all of them agree with the renderer and with each other.

Parsing costs about 0.1 s per MB, so text with no line that could open a code block
(a fence marker or four columns of indentation) is answered without parsing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Block", "blocks", "code_ranges"]

BlockKind = Literal["code", "html"]

# a line that could start a fenced or indented code block, or an HTML block
_MAYBE_CODE = re.compile(r"^(?: {0,3}(?:```|~~~)| {4}|\t)", re.MULTILINE)
_MAYBE_HTML = re.compile(r"^ {0,3}<", re.MULTILINE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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


def blocks(text: str) -> list[Block]:
    """Code and raw-HTML blocks of ``text``, in document order."""
    wants_code = _MAYBE_CODE.search(text) is not None
    wants_html = _MAYBE_HTML.search(text) is not None
    if not (wants_code or wants_html):
        return []
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
