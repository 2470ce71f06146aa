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

:func:`links` answers the other question a renderer settles: which URLs become
clickable (or load: images, forms, frames). It reads inline structure with the same
parser, so a protocol-relative ``[x](//host)``, a reference definition, an autolink or
a raw ``<a href>`` is found exactly when a renderer would make it a link.
"""

from __future__ import annotations

import bisect
import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Literal

logger = logging.getLogger(__name__)

__all__ = ["Block", "Link", "blocks", "code_locator", "code_ranges", "links"]

BlockKind = Literal["code", "html"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# A line that could open a fenced or indented code block or an HTML block in some
# container: after any run of container prefixes (quote markers, list markers,
# spaces), a fence marker, ``<``, a tab, or four spaces. A superset on purpose.
_SUSPECT_LINE = r"[ >+*0-9.)\-]*(?:```|~~~|<|\t| {4})"
_SUSPECT_FIRST = re.compile(_SUSPECT_LINE)
# after a line break: a literal first, which the regex engine skips to at C speed
_SUSPECT = re.compile(r"\n" + _SUSPECT_LINE)
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


def _suspect(text: str, pos: int) -> re.Match[str] | None:
    """The first line at or after ``pos`` (a line start) that could open a block."""
    if pos == 0 and (first := _SUSPECT_FIRST.match(text)) is not None:
        return first
    return _SUSPECT.search(text, max(pos - 1, 0))


def _without_parsing(text: str) -> list[Block] | None:
    """The code blocks of ``text`` when every line that could open a block is a fence
    at the left margin; ``None`` when a parser must decide."""
    found: list[Block] = []
    pos = 0
    n = len(text)
    while (m := _suspect(text, pos)) is not None:
        line = m.start() if m.re is _SUSPECT_FIRST else m.start() + 1
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


def code_locator(text: str) -> Callable[[int], bool]:
    """A test ``offset -> bool``: does that character of ``text`` render as code (fenced
    or indented)? Block structure is parsed once, on the first question."""
    ranges: list[tuple[int, int]] | None = None
    starts: list[int] = []

    def inside(offset: int) -> bool:
        nonlocal ranges, starts
        if ranges is None:
            ranges = code_ranges(text)
            starts = [a for a, _ in ranges]
        i = bisect.bisect_right(starts, offset) - 1
        return i >= 0 and ranges[i][0] <= offset < ranges[i][1]

    return inside


# --------------------------------------------------------------------------- links

LinkKind = Literal["link", "image", "autolink", "reference", "html"]

# attributes whose value a browser follows or loads (HTML 4/5, SVG)
_URL_ATTRS = frozenset(
    {
        "href",
        "src",
        "action",
        "formaction",
        "cite",
        "poster",
        "background",
        "data",
        "codebase",
        "longdesc",
        "manifest",
        "profile",
        "usemap",
        "icon",
        "xlink:href",
        "lowsrc",
        "dynsrc",
        "archive",
        "classid",
    }
)
_SPACE_LISTS = frozenset({"ping", "archive"})
_SRCSETS = frozenset({"srcset", "imagesrcset"})
_CSS_URL = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
_REFRESH_URL = re.compile(r"url\s*=\s*['\"]?([^'\";]+)", re.IGNORECASE)
_MAYBE_LINK = re.compile(r"[\[<]")


@dataclass(frozen=True, slots=True)
class Link:
    """A URL a renderer makes clickable or loads, as the renderer reads it (entities
    and backslash escapes resolved). ``start`` is the offset of the URL in the text when
    it appears there verbatim, else of the line that holds it."""

    kind: LinkKind
    url: str
    start: int


class _Attrs(HTMLParser):
    """URL-bearing attribute values of every tag in a piece of raw HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): v for k, v in attrs if v is not None}
        for name, value in values.items():
            if name in _URL_ATTRS:
                self.urls.append(value.strip())
            elif name in _SPACE_LISTS:
                self.urls.extend(value.split())
            elif name in _SRCSETS:
                for candidate in value.split(","):
                    parts = candidate.split()
                    if parts:
                        self.urls.append(parts[0])
            elif name == "style":
                self.urls.extend(m.group(2).strip() for m in _CSS_URL.finditer(value))
        if tag.lower() == "meta" and values.get("http-equiv", "").lower() == "refresh":
            m = _REFRESH_URL.search(values.get("content", ""))
            if m:
                self.urls.append(m.group(1).strip())

    handle_startendtag = handle_starttag


def _html_urls(raw: str) -> list[str]:
    parser = _Attrs()
    try:
        parser.feed(raw)
        parser.close()
    except Exception:
        logger.warning("raw HTML could not be fully parsed for links; kept %d", len(parser.urls))
    return [u for u in parser.urls if u]


@functools.cache
def _link_parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    # a renderer with a laxer policy (or the reader's own browser) may follow any
    # scheme: every destination counts, javascript: and data: included
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


def links(text: str) -> list[Link]:
    """Every URL a CommonMark renderer produces from ``text``, in document order.

    Inline links and images, reference definitions (used or not), autolinks (URLs and
    e-mail addresses, as ``mailto:``), and URL-bearing attributes of raw HTML, inline
    or block (``href``, ``src``, ``action``, ``srcset``, ``style`` ``url()``, a meta
    refresh, ...). Bare URLs in prose are not links in CommonMark; callers that care
    about them (GitHub linkifies them) scan the text as well.
    """
    if _MAYBE_LINK.search(text) is None:
        return []
    env: dict[str, Any] = {}
    tokens = _link_parser().parse(text, env)
    starts = _line_starts(text)

    def where(url: str, line_map: list[int] | None) -> int:
        if not line_map:
            return 0
        lo = starts[line_map[0]] if line_map[0] < len(starts) else len(text)
        hi = starts[line_map[1]] if line_map[1] < len(starts) else len(text)
        at = text.find(url, lo, hi)
        return at if at >= 0 else lo

    found: list[Link] = []
    for tok in tokens:
        if tok.type == "html_block":
            found.extend(Link("html", u, where(u, tok.map)) for u in _html_urls(tok.content))
            continue
        if tok.type != "inline" or not tok.children:
            continue
        for child in tok.children:
            if child.type == "link_open":
                kind: LinkKind = "autolink" if child.markup == "autolink" else "link"
                url = str(child.attrs.get("href", ""))
                found.append(Link(kind, url, where(url, tok.map)))
            elif child.type == "image":
                url = str(child.attrs.get("src", ""))
                found.append(Link("image", url, where(url, tok.map)))
            elif child.type == "html_inline":
                found.extend(Link("html", u, where(u, tok.map)) for u in _html_urls(child.content))
    for ref in env.get("references", {}).values():
        url = str(ref.get("href", ""))
        found.append(Link("reference", url, where(url, ref.get("map"))))
    found.sort(key=lambda link: link.start)
    return found
