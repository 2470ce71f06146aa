"""Every construction the draft rules read shows itself on sentences that a test runs.

trustgate/verifiers/drafts/lexicon/constructions.txt lists, for each construction (a
causative frame, a negated cause, a cause in a table cell, a misspelt trigger...),
drafts it must get deleted and drafts it must leave alone. Each runs here through
``verify_draft``, uncited, the way the calibration scores sentences.
"""

from __future__ import annotations

import pytest

from trustgate import ConfigurationError
from trustgate.drafts import Record, verify_draft
from trustgate.verifiers.drafts._grammar.data import constructions, parse_constructions

EXAMPLES = constructions()


def test_every_construction_has_both_kinds_of_example() -> None:
    signs: dict[str, set[str]] = {}
    for name, sign, _ in EXAMPLES:
        signs.setdefault(name, set()).add(sign)
    assert signs
    assert all(s == {"+", "-"} for s in signs.values()), signs


@pytest.mark.parametrize(
    ("name", "draft"), [(n, d) for n, s, d in EXAMPLES if s == "+"], ids=lambda v: str(v)[:50]
)
def test_positive_example_loses_a_sentence(name: str, draft: str) -> None:
    assert verify_draft(draft, Record()).removed, f"{name}: {draft!r} was kept whole"


@pytest.mark.parametrize(
    ("name", "draft"), [(n, d) for n, s, d in EXAMPLES if s == "-"], ids=lambda v: str(v)[:50]
)
def test_negative_example_is_kept(name: str, draft: str) -> None:
    verdict = verify_draft(draft, Record())
    assert not verdict.removed, f"{name}: {draft!r} lost {verdict.removed}"


@pytest.mark.parametrize(
    "text",
    [
        "construction x\n+ a\n",  # no negative
        "construction x\n- a\n",  # no positive
        "+ a\n",  # before any construction
        "nonsense x\n+ a\n- b\n",
        "construction\n+ a\n- b\n",
    ],
)
def test_format_errors_are_configuration_errors(text: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_constructions(text, "t")


def test_line_breaks_are_written_as_backslash_n() -> None:
    parsed = parse_constructions("construction x\n+ a\\nb\n- c\n")
    assert parsed == [("x", "+", "a\nb"), ("x", "-", "c")]
