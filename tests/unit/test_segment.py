"""The segmenter: exact spans, Markdown structure, no splits inside figures or names."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.verifiers.drafts.segment import Segment, segment, sentences


def spans(text: str) -> list[str]:
    return [text[s.start : s.end] for s in segment(text)]


@pytest.mark.parametrize(
    "text",
    [
        "We restarted several services, e.g. the API and the queue, at 14:05.",
        "The hot path, i.e. the checkout call, slowed down.",
        "Compare the primary vs. the replica before failing over.",
        "Acme Inc. reported the issue first.",
        "Dr. Smith joined the bridge at 14:10.",
        "Ticket No. 4411 tracks the follow-up.",
        "Latency rose to 9.2 seconds at 14:02.",
        "The client upgraded from v1.2.3 to v1.3.0 on Monday.",
        "The alert fired at 14:02:31 UTC.",
        "See https://status.example.com/incidents/42.html for the public notice.",
        "We waited... then the queue drained.",
        "We waited… then the queue drained.",
        'The status page said "Investigating." at 14:05.',
        "The p99 was 1.5 s (up from 0.3 s) during the window.",
        "The job restarted, etc. and then recovered.",
        "J. Doe acknowledged the page.",
    ],
)
def test_no_split_inside(text: str) -> None:
    assert spans(text) == [text]


def test_splits_real_sentences_and_keeps_markers_with_their_sentence() -> None:
    text = "Latency rose at 14:02. [[3]] The deploy went out at 14:05. [[4]][[5]] Done!"
    assert spans(text) == [
        "Latency rose at 14:02. [[3]]",
        "The deploy went out at 14:05. [[4]][[5]]",
        "Done!",
    ]


def test_question_and_quote_endings() -> None:
    text = 'Why did it page? Nobody knew. He said "it broke." Then we rolled back.'
    assert spans(text) == [
        "Why did it page?",
        "Nobody knew.",
        'He said "it broke."',
        "Then we rolled back.",
    ]


def test_markdown_structure_units_of_their_own() -> None:
    text = (
        "# Incident 7\n"
        "\n"
        "Latency rose. The alert fired\n"
        "at 14:03.\n"
        "\n"
        "- First item. Second sentence\n"
        "- Second item\n"
        "  continued here\n"
        "1. Numbered one\n"
        "2) Numbered two\n"
        "\n"
        "| time | event |\n"
        "|------|-------|\n"
        "| 14:02 | alert fired |\n"
    )
    segs = segment(text)
    assert [(text[s.start : s.end], s.kind) for s in segs] == [
        ("Incident 7", "heading"),
        ("Latency rose.", "sentence"),
        ("The alert fired\nat 14:03.", "sentence"),
        ("First item.", "item"),
        ("Second sentence", "item"),
        ("Second item\n  continued here", "item"),
        ("Numbered one", "item"),
        ("Numbered two", "item"),
        ("time | event", "row"),
        ("14:02 | alert fired", "row"),
    ]
    blocks = [s.block for s in segs]
    assert blocks[1] == blocks[2]  # one paragraph
    assert blocks[3] == blocks[4] != blocks[5]  # one item, then another


def test_fenced_code_is_one_untouched_unit() -> None:
    code = "```python\nx = 1. Not. A. Sentence.\n\n- not an item\n```"
    text = f"Before.\n\n{code}\n\nAfter."
    segs = segment(text)
    assert [(text[s.start : s.end], s.kind) for s in segs] == [
        ("Before.", "sentence"),
        (code, "code"),
        ("After.", "sentence"),
    ]
    assert sentences(text) == ["Before.", "After."]


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Intro.\n~~~\ncode. More code.\n"
    segs = segment(text)
    assert segs[-1].kind == "code"
    assert text[segs[-1].start : segs[-1].end] == "~~~\ncode. More code."


def test_empty_and_blank_text() -> None:
    assert segment("") == []
    assert segment(" \n\n\t ") == []


def test_segments_are_frozen() -> None:
    seg = segment("One.")[0]
    assert isinstance(seg, Segment)
    with pytest.raises(AttributeError):
        seg.start = 3  # type: ignore[misc]


_MARKUP = set("#>-*+•|:_~`0123456789.)")
_ALPHABET = string.ascii_letters + string.digits + " .,;:!?'\"()[]#>-*+|`~\n\r\t…•"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=400))
def test_spans_never_lose_or_duplicate_text(text: str) -> None:
    segs = segment(text)
    pos = 0
    covered = [False] * len(text)
    for s in segs:
        assert pos <= s.start < s.end <= len(text)  # ordered, non-empty, no overlap
        unit = text[s.start : s.end]
        assert unit == unit.strip()  # exact, never padded
        for i in range(s.start, s.end):
            covered[i] = True
        pos = s.end
    # Whatever lies outside units is whitespace or Markdown structure, never words.
    for ch, inside in zip(text, covered, strict=True):
        if not inside:
            assert ch.isspace() or ch in _MARKUP, (ch, text)


def test_marker_without_space_still_ends_the_sentence() -> None:
    text = "Latency rose at 14:02. [[1]]The pool was exhausted because of the deploy."
    assert spans(text) == [
        "Latency rose at 14:02. [[1]]",
        "The pool was exhausted because of the deploy.",
    ]
    assert spans("It paged.[[2]][[3]]Then it stopped.") == [
        "It paged.[[2]][[3]]",
        "Then it stopped.",
    ]


def test_a_fence_commonmark_does_not_open_is_prose() -> None:
    # An info string holding a backtick does not open a fenced block in CommonMark:
    # every renderer shows what follows as a paragraph, so it is read as one.
    text = "```not`a fence\nThe deploy caused the outage.\n\nNext paragraph.\n"
    kinds = [(text[s.start : s.end], s.kind) for s in segment(text)]
    assert all(k != "code" for _, k in kinds)
    assert any("The deploy caused the outage." in t for t, _ in kinds)


def test_fenced_and_indented_code_are_code_units() -> None:
    text = (
        "Intro line.\n\n```\nrm -rf /. Not a sentence.\n```\n\n"
        "    indented code. Also code.\n\nAfter."
    )
    units = [(text[s.start : s.end], s.kind) for s in segment(text)]
    assert units[0] == ("Intro line.", "sentence")
    assert [k for _, k in units].count("code") == 2
    assert units[-1] == ("After.", "sentence")


def test_unclosed_fence_runs_to_the_end_as_commonmark_says() -> None:
    text = "Before.\n\n```\nThe deploy caused it.\n"
    units = [(text[s.start : s.end], s.kind) for s in segment(text)]
    assert units[0] == ("Before.", "sentence")
    assert units[1][1] == "code"


@pytest.mark.parametrize(
    "text",
    [
        "." * 100_000,
        "a." * 50_000,
        "[[" * 50_000,
        "[[1]]" * 20_000,
        "```\n" * 20_000,
        "e.g. " * 20_000,
        "- " * 50_000,
        "| a " * 30_000,
    ],
)
def test_pathological_inputs_are_segmented_whole(text: str) -> None:
    # Correctness on inputs built to make a backtracking segmenter crawl: every
    # character is either inside exactly one unit or is whitespace/structure.
    units = segment(text)
    last = 0
    for u in units:
        assert u.start >= last and u.end > u.start
        last = u.end
