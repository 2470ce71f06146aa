"""The block reader without the Markdown parser agrees with the parser on generated
Markdown (an exhaustive equivalence run).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate._markdown import _parsed, blocks

# Pieces a line of Markdown is built from: container markers, fences, indentation,
# HTML, link definitions, prose; every block rule that can move a code block.
_PIECES = [
    "```",
    "~~~",
    "````",
    "``",
    "~~~~",
    " ",
    "  ",
    "   ",
    "    ",
    "\t",
    "-",
    "*",
    "+",
    "1.",
    "2)",
    ">",
    "> ",
    "<div>",
    "</div>",
    "<!--",
    "-->",
    "<pre>",
    "a",
    "b c",
    "`",
    "~",
    "#",
    "[a]: /u",
    "---",
    "===",
    "py",
    "x`y",
    "\u00a0",
]
_LINE = st.lists(st.sampled_from(_PIECES), max_size=5).map("".join)
_BREAK = st.sampled_from(["\n", "\n", "\n", "\n\n", "\r\n", "\r"])


@st.composite
def _markdown(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_LINE, max_size=12))
    out = ""
    for line in lines:
        out += line + draw(_BREAK)
    return out[: len(out) - draw(st.integers(0, 1))] if out else out


@settings(max_examples=3000, deadline=None)
@given(_markdown())
def test_reading_without_the_parser_agrees_with_the_parser(text: str) -> None:
    """The fast reading answers only where it provably agrees with CommonMark."""
    assert blocks(text) == _parsed(text)
