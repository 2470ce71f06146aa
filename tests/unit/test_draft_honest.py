"""Honest drafts stand: zero removals on cited drafts written in many styles.

A gate that deletes clean text is an outage. Every draft in
tests/corpus/honest_drafts.json cites its causes to record lines that say them,
states its facts plainly and guesses nowhere; the default rules must leave each one
exactly as written. The opt-in citation-relevance rule is measured on the same
drafts (its false-positive rate must be zero here before anyone turns it on).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustgate.drafts import DEFAULT_RULES, Record, verify_draft
from trustgate.verifiers.drafts.relevance import CitationRelevanceRule

DRAFTS = json.loads(
    (Path(__file__).resolve().parents[1] / "corpus" / "honest_drafts.json").read_text(
        encoding="utf-8"
    )
)


def test_there_are_at_least_twenty_styles() -> None:
    assert len(DRAFTS) >= 20
    assert len({d["style"] for d in DRAFTS}) == len(DRAFTS)


@pytest.mark.parametrize("entry", DRAFTS, ids=lambda d: d["style"])
def test_honest_cited_draft_has_zero_removals(entry: dict[str, object]) -> None:
    record = Record.from_lines(entry["record"])  # type: ignore[arg-type]
    draft = str(entry["draft"])
    verdict = verify_draft(draft, record)
    assert verdict.removed == (), [r.sentence for r in verdict.removed]
    assert verdict.findings == []
    assert verdict.text == draft


@pytest.mark.parametrize("entry", DRAFTS, ids=lambda d: d["style"])
def test_relevance_rule_accepts_honest_citations(entry: dict[str, object]) -> None:
    record = Record.from_lines(entry["record"])  # type: ignore[arg-type]
    verdict = verify_draft(
        str(entry["draft"]), record, rules=(*DEFAULT_RULES, CitationRelevanceRule())
    )
    assert verdict.removed == (), [(r.sentence, r.reason) for r in verdict.removed]


def test_relevance_rule_reports_a_cause_cited_to_an_unrelated_line() -> None:
    record = Record.from_lines(["14:02 checkout p99 9.2s", "14:03 status page updated"])
    verdict = verify_draft(
        "The deploy exhausted the connection pool. [[2]]",
        record,
        rules=(*DEFAULT_RULES, CitationRelevanceRule()),
    )
    assert [r.code for r in verdict.removed] == ["irrelevant_citation"]
    assert "exhausted" not in verdict.text
    # the same claim cited to a line that says it stands
    record = Record.from_lines(["14:06 deploy 4411: connection pool exhausted"])
    verdict = verify_draft(
        "The deploy exhausted the connection pool. [[1]]",
        record,
        rules=(*DEFAULT_RULES, CitationRelevanceRule()),
    )
    assert verdict.removed == ()
