"""The draft rules' vocabulary is a reviewed lexicon; every entry proves itself.

Each entry of trustgate/verifiers/drafts/lexicon/draft.txt carries a sentence it must
get deleted and a sentence using the same word that must survive. Both run here through
``verify_draft``, uncited, the way the calibration scores sentences: an entry whose
examples fail is either wrong or documents a reading the rules do not have.
"""

from __future__ import annotations

from importlib import resources

import pytest

from trustgate import ConfigurationError
from trustgate.drafts import Record, verify_draft
from trustgate.verifiers.drafts._grammar import Reading, analyse, lexicon, parse_lexicon

ENTRIES = lexicon().entries


def test_lexicon_is_small_and_every_entry_has_both_examples() -> None:
    text = (
        resources.files("trustgate.verifiers.drafts.lexicon")
        .joinpath("draft.txt")
        .read_text("utf-8")
    )
    assert len(text.encode("utf-8")) < 75_000  # the old causal + hedge lexicons
    assert len(ENTRIES) >= 300
    for kind, term, positive, negative in ENTRIES:
        assert positive and negative, (kind, term)
        assert positive != negative


@pytest.mark.parametrize(
    ("kind", "term", "positive"), [(k, t, p) for k, t, p, _ in ENTRIES], ids=lambda v: str(v)[:40]
)
def test_positive_example_is_deleted(kind: str, term: str, positive: str) -> None:
    verdict = verify_draft(positive, Record())
    assert verdict.removed, f"{kind} {term!r}: {positive!r} was kept"


@pytest.mark.parametrize(
    ("kind", "term", "negative"), [(k, t, n) for k, t, _, n in ENTRIES], ids=lambda v: str(v)[:40]
)
def test_negative_example_is_kept(kind: str, term: str, negative: str) -> None:
    verdict = verify_draft(negative, Record())
    assert not verdict.removed, f"{kind} {term!r}: {negative!r} was deleted: {verdict.removed}"


def test_every_removal_names_the_feature_that_fired() -> None:
    verdict = verify_draft("The retry storm overwhelmed the auth service.", Record())
    assert "causative 'overwhelmed'" in verdict.removed[0].reason
    verdict = verify_draft("We suspect the vendor changed their limits.", Record())
    assert "belief 'suspect'" in verdict.removed[0].reason


@pytest.mark.parametrize(
    "text",
    [
        "connective because\n+ A because B.\n",  # no negative example
        "connective because\n- A because B.\n",  # no positive example
        "nonsense because\n+ a\n- b\n",  # unknown kind
        "+ stray example\n",
        "connective because\n+ one\n+ two\n- three\n",
    ],
)
def test_lexicon_format_errors_are_configuration_errors(text: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_lexicon(text, "t")


def test_questions_and_statements_about_the_document_assert_nothing() -> None:
    assert analyse("Did the deploy cause the outage?") == Reading(
        skipped="a question asserts nothing"
    )
    assert analyse("This section describes how we find the root cause.").skipped
