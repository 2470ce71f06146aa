"""Code blocks are where a CommonMark renderer puts them, not where a pattern guesses."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trustgate._markdown import Block, _parsed, _without_parsing, blocks, code_ranges


def _code(text: str) -> list[str]:
    return [text[a:b] for a, b in code_ranges(text)]


def test_fence_and_indented_code_are_code() -> None:
    text = "Intro.\n\n```sh\nrm -rf /\n```\n\n    indented\n\nAfter.\n"
    assert _code(text) == ["```sh\nrm -rf /\n```\n", "    indented\n"]


def test_backtick_info_string_does_not_open_a_fence() -> None:
    # CommonMark: a backtick fence's info string may not contain a backtick, so this
    # line is a paragraph and what follows renders as prose
    text = "```py`x\nThe pool was exhausted because of the deploy.\n\nMore prose.\n"
    assert code_ranges(text) == []


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Prose.\n\n~~~\ncode\nmore code"
    assert _code(text) == ["~~~\ncode\nmore code"]


def test_indented_line_inside_a_paragraph_is_not_code() -> None:
    text = "A sentence that wraps\n    onto an indented line.\n"
    assert code_ranges(text) == []


def test_crlf_offsets() -> None:
    text = "Prose.\r\n\r\n```\r\ncode\r\n```\r\nAfter.\r\n"
    assert _code(text) == ["```\r\ncode\r\n```\r\n"]


def test_html_block() -> None:
    text = "Prose.\n\n<div>\n<a href='//x'>y</a>\n</div>\n\nAfter.\n"
    kinds = [(b.kind, text[b.start : b.end]) for b in blocks(text)]
    assert kinds == [("html", "<div>\n<a href='//x'>y</a>\n</div>\n")]


@given(st.text(alphabet=st.sampled_from(list("`~ \t\n\rab<>-*#0123.")), max_size=200))
def test_ranges_are_ordered_whole_and_inside_the_text(text: str) -> None:
    last = 0
    for b in blocks(text):
        assert last <= b.start <= b.end <= len(text)
        assert b.start == 0 or text[b.start - 1] in "\r\n"
        last = b.end


# Pieces a line of Markdown is built from: container markers, fences, indentation,
# HTML, link definitions, prose; every block rule that can move a code block.


def test_fast_reading_covers_fenced_drafts() -> None:
    text = "# Title\n\nProse.\n\n```sh\nrm -rf /\n    indented <b>\n```\n\n- item\n\nAfter.\n"
    start = text.index("```sh")
    end = text.index("\n\n- item") + 1
    assert _without_parsing(text) == [Block("code", start, end)] == _parsed(text)
    assert _without_parsing("- item\n\n      code\n") is None
    assert _without_parsing("> ```\n> code\n") is None
