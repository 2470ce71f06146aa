"""A draft check with a judge has a time limit even when none was given: the judge is
a model call, and a verifier without a limit runs inline in the crossing, so a model
that never answers would hold the worker forever."""

from __future__ import annotations

from trustgate.drafts import DraftCheck
from trustgate.verifiers.drafts.check import JUDGE_TIMEOUT


def _plain(sentences: object) -> dict[str, dict[str, str]]:
    return {}


def test_a_check_with_a_judge_is_bounded_by_default() -> None:
    assert DraftCheck(judge=_plain).timeout == JUDGE_TIMEOUT
    assert DraftCheck(judge=_plain, timeout=5.0).timeout == 5.0


def test_the_rules_alone_need_no_limit() -> None:
    assert DraftCheck().timeout is None
