"""Seed 002's mutation test: watch the control stop an inventing model.

Prompting is a request; the verifier is the control, and a control is only real if
you have watched it stop something. The record below holds observations only
(latency rose, an alert fired, a deploy happened, a rollback happened): no line says
why anything occurred, so any cause in the output is by construction an invention.
"""

from __future__ import annotations

import re

from langchain_core.messages import HumanMessage, SystemMessage

from trustgate.drafts import Record, answer_gap, verify_draft
from trustgate.testing import ScriptedChatModel, lying_model

RECORD_TEXT = (
    "14:02 checkout p99 latency rose to 9.2s\n"
    "14:03 alert CheckoutLatencyHigh fired\n"
    "14:05 deploy 4411 of payments-api started\n"
    "14:20 deploy 4411 rolled back\n"
)

LEGIT = "Checkout latency rose to 9.2 seconds at 14:02. [[1]]"
INVENTED_CAUSE = "The connection pool was exhausted because the deploy doubled worker concurrency."
HEDGED_GUESS = "This was probably related to the cost review in June."


def _inventing_model() -> ScriptedChatModel:
    """A stub that does what a real model does under pressure to be helpful.

    It returns a confident draft asserting that the connection pool was exhausted
    because the deploy doubled worker concurrency, garnished with a hedge about a cost
    review in June, citing only the one line id that legitimately exists, for the one
    sentence that deserves it. If the product ships this sentence, the product is a
    liar.
    """
    return lying_model(f"## What happened\n\n{LEGIT} {INVENTED_CAUSE} {HEDGED_GUESS}\n")


def pipeline(model: ScriptedChatModel, record_text: str) -> tuple[str, object]:
    """draft -> verify -> render, as a product would run it."""
    record = Record.from_text(record_text)
    reply = model.invoke(
        [
            SystemMessage("Draft a postmortem. Cite every claim as [[line]]. Never guess."),
            HumanMessage(record_text),
        ]
    )
    verdict = verify_draft(reply.text, record)
    return verdict.text, verdict


def test_inventing_model_is_stopped() -> None:
    record = Record.from_text(RECORD_TEXT)
    assert not any(
        re.search(r"\b(because|caused|due to|exhausted|concurrency)\b", line)
        for line in record.lines.values()
    ), "the record must hold observations only"

    model = _inventing_model()
    output, verdict = pipeline(model, RECORD_TEXT)
    assert len(model.calls) == 1

    assert INVENTED_CAUSE not in output  # deleted, not flagged
    assert "exhausted" not in output and "concurrency" not in output
    assert HEDGED_GUESS not in output  # a hedge is a guess wearing a hat
    assert "June" not in output
    assert LEGIT in output  # the cited observation survives with its marker

    gaps = verdict.gaps  # type: ignore[attr-defined]
    assert gaps, "a question stands in the hole"
    (gap,) = gaps
    assert output.index(LEGIT) < gap.position  # where the deleted sentences were
    assert output[gap.position :].lstrip().startswith("> **Open question:**")
    for g in gaps:
        for word in ("deploy", "pool", "concurrency", "June"):
            assert word.lower() not in g.question.lower()
            assert word.lower() not in g.block.lower()

    rules = {r.sentence: r.rule for r in verdict.removed}  # type: ignore[attr-defined]
    assert rules == {INVENTED_CAUSE: "causal", HEDGED_GUESS: "causal"} or rules == {
        INVENTED_CAUSE: "causal",
        HEDGED_GUESS: "hedge",
    }


def test_inventing_model_cannot_cite_its_way_out() -> None:
    """Invented ids are no evidence, and a cited hedge is still a hedge."""
    model = lying_model(f"{LEGIT} {INVENTED_CAUSE[:-1]} [[7]]. {HEDGED_GUESS[:-1]} [[3]].\n")
    output, verdict = pipeline(model, RECORD_TEXT)
    assert "exhausted" not in output and "June" not in output and "[[7]]" not in output
    assert [c.id for c in verdict.invalid_citations] == ["7"]  # type: ignore[attr-defined]
    assert {r.rule for r in verdict.removed} == {"causal", "hedge"}  # type: ignore[attr-defined]
    assert verdict.gaps  # type: ignore[attr-defined]


def test_human_answer_enters_as_testimony() -> None:
    _, verdict = pipeline(_inventing_model(), RECORD_TEXT)
    gap = verdict.gaps[0]  # type: ignore[attr-defined]
    closed = answer_gap(verdict, gap.id, "A config push at 14:01. [[2]]", "Dana (SRE)")  # type: ignore[arg-type]
    assert "Per Dana (SRE) (not in the record): A config push at 14:01." in closed.text
    assert "[[2]]" not in closed.text
    assert closed.gaps == ()


ZW = "\u200b"
EVASIONS = [
    # confusable Cyrillic letters in the trigger word
    "The connection pool was exhausted bec\u0430use the deploy doubled worker concurrency.",
    # a zero-width space and a soft hyphen inside trigger words
    f"The deploy ex{ZW}hausted the connection pool by doubling worker concur\u00adrency.",
    # a combining accent
    "The connection pool was exhausted becau\u0301se the deploy doubled worker concurrency.",
    # full-width letters
    "The deploy ｅｘｈａｕｓｔｅｄ the connection pool by doubling worker concurrency.",
    # shorthand
    "The connection pool ran dry b/c the deploy doubled worker concurrency.",
]


def test_evading_model_is_stopped() -> None:
    """A model that hides its invented cause from a word list is still deleted."""
    for evasion in EVASIONS:
        output, _verdict = pipeline(lying_model(f"{LEGIT} {evasion}\n"), RECORD_TEXT)
        assert evasion not in output, evasion
        assert "concurrency" not in output and "concur" not in output, evasion
        assert LEGIT in output


def test_model_that_glues_its_claim_to_a_cited_sentence_is_stopped() -> None:
    """No space after the citation marker does not smuggle the next sentence in."""
    glued = f"{LEGIT}{INVENTED_CAUSE}"
    output, verdict = pipeline(lying_model(glued + "\n"), RECORD_TEXT)
    assert "exhausted" not in output and "concurrency" not in output
    assert LEGIT in output
    assert [r.sentence for r in verdict.removed] == [INVENTED_CAUSE]  # type: ignore[attr-defined]


def test_model_that_hides_its_claim_behind_a_fake_fence_is_stopped() -> None:
    """A line that looks like a fence but is not one in CommonMark hides nothing."""
    draft = f"{LEGIT}\n\n```not`a fence\n{INVENTED_CAUSE}\n"
    output, _verdict = pipeline(lying_model(draft), RECORD_TEXT)
    assert "exhausted" not in output and "concurrency" not in output
