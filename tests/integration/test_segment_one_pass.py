"""The one-pass segmenter splits exactly as the paragraph-by-paragraph one did.

:func:`trustgate.verifiers.drafts.segment.units` finds the sentence ends of a whole
region of prose with one search and hands each paragraph, item and quote its own;
``tests/_segment_oracle.py`` is the segmenter it replaced, which searched every range
on its own. Any difference in a span, a kind or a block number is a bug: the verdict
of every draft is built on these units.
"""

from __future__ import annotations

import pytest
from _segment_oracle import spans as oracle
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.verifiers.drafts.segment import Segment, segment, sentences, spans, units

# Pieces of Markdown as models write it, and the places the two searches could part:
# a line end that ends a range or does not, a numbered item's "1." before a marker,
# a marker holding a full stop, abbreviations and ellipses at a range's edges.
_PIECES = [
    "The deploy went out at 14:05.",
    "Latency rose to 9.2 s",
    "e.g.",
    "Dr.",
    "J.",
    "approx.",
    "v1.2.3",
    "...",
    "…",
    "x.y.",
    "A.",
    "No.",
    "it paged.",
    "then it stopped!",
    "why?",
    '"Investigating."',
    "(see above.)",
    "[[1]]",
    "[[2, 3]]",
    "[[a. B]]",
    "[[x.",
    "]]",
    "[[",
    "**bold.**",
    "_it._",
    "word",
    "lower",
    "Upper",
    "42",
    "-",
    "–",
    ",",
    ":",
    ")",
    "#",
    "|",
    ">",
    "`code.`",
]
_GLUE = [" ", " ", " ", "", "  ", "\t", "\n", "\n\n", "\r\n", "\n\n\n", "\u00a0", "\x1c"]
_LINE_STARTS = [
    "",
    "",
    "",
    "- ",
    "* ",
    "+ ",
    "• ",
    "1. ",
    "12) ",
    "1.",
    "# ",
    "## ",
    "#",
    "> ",
    ">",
    "> > ",
    "| ",
    "|---|---|",
    "---",
    "***",
    "    ",
    "  - ",
    "```",
    "~~~",
]


@st.composite
def _markdown(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        head = draw(st.sampled_from(_LINE_STARTS))
        body = "".join(
            draw(st.sampled_from(_PIECES)) + draw(st.sampled_from(_GLUE))
            for _ in range(draw(st.integers(0, 8)))
        )
        lines.append(head + body)
    return draw(st.sampled_from(["\n", "\n", "\n\n", "\r\n"])).join(lines)


def _same(text: str) -> None:
    got = units(text)
    assert got == [tuple(s) for s in oracle(text)]
    assert [tuple(s) for s in spans(text)] == got
    assert [(s.start, s.end, s.kind, s.block) for s in segment(text)] == got
    assert all(isinstance(s, Segment) for s in segment(text))
    assert sentences(text) == [text[s:e] for s, e, kind, _ in got if kind != "code"]
    no_code = [u for u in got if u[2] != "code"]
    assert units(text, code=False) == no_code


@settings(max_examples=1500, deadline=None)
@given(_markdown())
def test_one_pass_splits_generated_markdown_as_the_old_segmenter(text: str) -> None:
    _same(text)


_ALPHABET = "aB1 .!?…\"')]*_[[]]:,-–\n\n\r\t#>|`~"


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=120))
def test_one_pass_splits_arbitrary_text_as_the_old_segmenter(text: str) -> None:
    _same(text)


@pytest.mark.parametrize(
    "text",
    [
        # the end of the line ends the range: accepted
        "It paged.\n- then it stopped.",
        # the end of the line does not end the paragraph: the range is read alone
        "It paged.\nthen it stopped. Then it rose.",
        "It paged.\n\n- then it stopped.",
        "- It paged.\n  then it stopped.",
        "> It paged.\n> then it stopped.",
        # a numbered item's "1." with a marker after it reaches into the item
        "1. [[a. B]] The pool drained. It recovered.",
        "1. [[3]] The pool drained. It recovered.",
        # abbreviations and ellipses where a range starts and ends
        "- e.g. The pool drained.",
        "Dr. Smith paged. J. Doe answered... Then the pool drained.",
        "The pool drained approx. At 14:02 it recovered.",
        "It paged.[[1]]Then it stopped.",
        "a.\u00a0B. c.\x1cD.",
    ],
)
def test_edges_of_ranges(text: str) -> None:
    _same(text)
