"""Gaps: a question in each hole that cannot suggest the answer; answers as testimony."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.drafts import Record, answer_gap, verify_draft
from trustgate.errors import InputError
from trustgate.verifiers.drafts.gaps import GAP_LABEL, TEMPLATE_WORDS, gap_question

RECORD = Record.from_text(
    "14:02 checkout p99 latency 9.2s\n14:03 alert fired\n14:05 deploy started\n14:20 rollback\n"
)
WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(re.sub(r"\[\[[^\]]*\]\]", " ", text))}


def test_gap_stands_in_the_hole_anchored_on_the_preceding_observation() -> None:
    draft = (
        "Checkout latency rose to 9.2 seconds at 14:02. [[1]] "
        "The deploy exhausted the pool. The alert fired at 14:03. [[2]]"
    )
    verdict = verify_draft(draft, RECORD)
    (gap,) = verdict.gaps
    assert gap.anchor == "Checkout latency rose to 9.2 seconds at 14:02."
    assert gap.anchor_ids == ("1",)
    assert gap.question == (
        "Why did this happen: “Checkout latency rose to 9.2 seconds at 14:02”? "
        "The record does not say."
    )
    assert verdict.text == (
        "Checkout latency rose to 9.2 seconds at 14:02. [[1]]\n\n"
        f"> {GAP_LABEL} {gap.question}\n\n"
        "The alert fired at 14:03. [[2]]"
    )
    assert verdict.text[gap.position : gap.position + len(gap.block)] == gap.block
    assert verdict.removed[0].gap_id == gap.id


def test_anchor_falls_back_to_heading_then_to_none() -> None:
    draft = "## Checkout latency\n\nThe deploy caused it.\n\n- The cache probably broke it.\n"
    verdict = verify_draft(draft, RECORD)
    assert [g.anchor for g in verdict.gaps] == ["Checkout latency", "Checkout latency"]
    verdict = verify_draft("The deploy caused it.", RECORD)
    assert verdict.gaps[0].anchor is None
    assert verdict.gaps[0].question == gap_question(None)
    assert verdict.text == f"> {GAP_LABEL} {gap_question(None)}"


def test_consecutive_deletions_share_one_gap_per_paragraph() -> None:
    draft = "Latency rose. [[1]] The deploy caused it. It was probably the pool.\n\nA. Because B."
    verdict = verify_draft(draft, RECORD)
    assert len(verdict.removed) == 3
    assert [r.gap_id for r in verdict.removed] == ["gap-1", "gap-1", "gap-2"]
    assert len(verdict.gaps) == 2


def test_list_items_and_rows_keep_their_structure() -> None:
    draft = "- Latency rose. [[1]]\n- The deploy caused it.\n\n| a | The deploy caused it |\n"
    verdict = verify_draft(draft, RECORD)
    lines = verdict.text.splitlines()
    assert lines[0] == "- Latency rose. [[1]]"
    assert lines[1].startswith(f"- {GAP_LABEL} ")
    assert lines[3].startswith(f"| {GAP_LABEL} ") and lines[3].endswith(" |")


def test_answer_gap_enters_as_attributed_testimony_without_marker() -> None:
    draft = (
        "Latency rose at 14:02. [[1]] The deploy caused it.\n\n"
        "The alert fired. The cache broke checkout."
    )
    verdict = verify_draft(draft, RECORD)
    first, second = verdict.gaps
    closed = answer_gap(verdict, first.id, "A config push at 14:01 [[3]] [[", "Dana (SRE)")
    statement = "Per Dana (SRE) (not in the record): A config push at 14:01"
    assert statement in closed.text
    assert "[[3]]" not in closed.text and "[[" not in closed.text.replace("[[1]]", "")
    assert first.question not in closed.text
    assert [g.id for g in closed.gaps] == [second.id]
    moved = closed.gaps[0]
    assert closed.text[moved.position : moved.position + len(moved.block)] == moved.block
    (testimony,) = closed.testimony
    assert testimony.author == "Dana (SRE)" and testimony.gap_id == first.id
    assert closed.text[testimony.position :].startswith(statement)
    # the original verdict is untouched (frozen models, new verdict returned)
    assert verdict.gaps == (first, second)
    both = answer_gap(closed, second.id, "Unknown still.", "Lee")
    assert both.gaps == () and len(both.testimony) == 2
    assert "Per Lee (not in the record): Unknown still." in both.text


@pytest.mark.parametrize(
    ("gap_id", "answer", "author"),
    [("gap-9", "x", "y"), ("gap-1", "", "y"), ("gap-1", "[[3]]", "y"), ("gap-1", "x", " ")],
)
def test_answer_gap_refuses_bad_input(gap_id: str, answer: str, author: str) -> None:
    verdict = verify_draft("The deploy caused it.", RECORD)
    with pytest.raises(InputError):
        answer_gap(verdict, gap_id, answer, author)


def test_answer_gap_type_errors() -> None:
    verdict = verify_draft("The deploy caused it.", RECORD)
    with pytest.raises(InputError):
        answer_gap(verdict, "gap-1", None, "a")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        answer_gap("not a verdict", "gap-1", "x", "a")  # type: ignore[arg-type]


PLAIN = [
    "Checkout latency rose to 9.2 seconds at 14:02. [[1]]",
    "The alert fired at 14:03.",
    "Deploy 4411 started at 14:05. [[3]]",
    "The rollback finished at 14:20. [[4]]",
    "Customers saw slow checkouts for 29 minutes.",
    "## Timeline",
    "- Errors peaked at 14:06.",
]
BAD = [
    "The pool was exhausted because the deploy doubled worker concurrency.",
    "A cost review in June probably cut the pool size.",
    "The cron job overloaded the replica, which caused the lag.",
    "We suspect the firewall dropped the health checks.",
    "The queue backed up due to a stuck consumer. [[2]] It was likely the new client.",
    "- The flag took down the API.",
]
SEPARATORS = [" ", "\n", "\n\n", "  ", "\n\n\n"]


@st.composite
def drafts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(PLAIN + BAD), min_size=1, max_size=12))
    out = ""
    for i, part in enumerate(parts):
        sep = draw(st.sampled_from(SEPARATORS)) if i else draw(st.sampled_from(["", "\n"]))
        if part.startswith(("#", "-")):
            sep = "\n\n" if i else ""
        out += sep + part
    return out + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=300, deadline=None)
@given(drafts())
def test_redaction_never_loses_or_duplicates_text_outside_deleted_sentences(draft: str) -> None:
    verdict = verify_draft(draft, RECORD)
    # Put every replaced span back where its gap block stands: the draft returns exactly.
    restored = verdict.text
    for gap in sorted(verdict.gaps, key=lambda g: g.position, reverse=True):
        assert restored[gap.position : gap.position + len(gap.block)] == gap.block
        start, end = gap.replaced
        restored = (
            restored[: gap.position] + draft[start:end] + restored[gap.position + len(gap.block) :]
        )
    assert restored == draft
    # And a replaced span holds deleted sentences and the blanks between them, nothing else.
    for gap in verdict.gaps:
        start, end = gap.replaced
        rest = draft[start:end]
        for r in verdict.removed:
            if r.gap_id == gap.id:
                assert start <= r.start and r.end <= end
                rest = rest.replace(r.sentence, "", 1)
        assert rest.strip() == ""
    # Every kept sentence is in the output, in order.
    pos = 0
    for kept in verdict.kept:
        found = verdict.text.find(kept.text, pos)
        assert found >= 0
        pos = found + len(kept.text)


@settings(max_examples=300, deadline=None)
@given(drafts())
def test_gap_never_carries_a_word_of_the_deleted_sentence_absent_from_its_anchor(
    draft: str,
) -> None:
    verdict = verify_draft(draft, RECORD)
    for gap in verdict.gaps:
        anchor_words = words(gap.anchor or "")
        gap_words = words(gap.block)
        assert gap_words <= anchor_words | TEMPLATE_WORDS
        for r in verdict.removed:
            if r.gap_id == gap.id:
                leaked = (words(r.sentence) - anchor_words - TEMPLATE_WORDS) & gap_words
                assert not leaked, leaked


def test_list_item_gap_is_anchored_on_the_item_above() -> None:
    draft = "## Timeline\n\n- 14:02 latency rose [[1]]\n- The deploy caused it.\n- 14:20 rollback\n"
    verdict = verify_draft(draft, RECORD)
    (gap,) = verdict.gaps
    assert gap.anchor == "14:02 latency rose" and gap.anchor_ids == ("1",)
    assert "deploy" not in gap.question


@pytest.mark.parametrize(
    ("heading", "question"),
    [
        ("Contributing factors", "What does the record show about the contributing factors?"),
        ("3. Root cause", "What does the record show about the root cause?"),
        ("Our response", "What does the record show about our response?"),
        ("API Gateway outage", "What does the record show about the API Gateway outage?"),
        ("What went wrong?", "What went wrong? The record does not say."),
    ],
)
def test_a_heading_anchors_a_question_about_its_topic(heading: str, question: str) -> None:
    draft = f"## {heading}\n\nThe deploy exhausted the connection pool."
    verdict = verify_draft(draft, Record())
    gap = verdict.gaps[0]
    assert gap.anchor == heading
    assert gap.question.startswith(question)
    assert "“" not in gap.question and "Why did this happen" not in gap.question
    # no word of the deleted sentence that the heading does not hold
    words = set(re.findall(r"[^\W_]+", gap.question.lower()))
    assert not words & {"deploy", "exhausted", "connection", "pool"}
