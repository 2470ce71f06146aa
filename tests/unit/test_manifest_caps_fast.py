"""A manifest of validated reports is held to the same caps as any claim, counted from its
known shape instead of walked: it refuses exactly what the walk refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate import _claims, _limits
from trustgate.errors import ClaimTooLarge
from trustgate.files import FileCitation, SelfReport, parse_manifest

CAPS = ("MAX_JSON_VALUES", "MAX_JSON_CONTAINERS", "MAX_CLAIM_BYTES")


def _walk_refuses(items: list[Any]) -> bool:
    try:
        _limits.check_claim(items, "manifest")
    except ClaimTooLarge:
        return True
    return False


def _threshold(items: list[Any], cap: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The smallest value of ``cap`` the generic walk accepts ``items`` under."""
    lo, hi = 0, 10_000_000
    while lo < hi:
        mid = (lo + hi) // 2
        monkeypatch.setattr(_limits, cap, mid)
        if _walk_refuses(items):
            lo = mid + 1
        else:
            hi = mid
    monkeypatch.undo()
    return lo


def _parse_refuses(items: list[Any]) -> bool:
    try:
        parse_manifest(items)
    except ClaimTooLarge:
        return True
    return False


REPORTS = st.lists(
    st.builds(
        SelfReport,
        item=st.text(max_size=8),
        status=st.sampled_from(["changed", "already_correct", "not_applicable"]),
        files=st.lists(st.text(max_size=6), max_size=3),
        evidence=st.lists(
            st.builds(
                FileCitation,
                file=st.text(max_size=6),
                line=st.integers(-5, 500),
                content=st.text(max_size=12),
            ),
            max_size=4,
        ),
    ),
    min_size=0,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(items=REPORTS, cap=st.sampled_from(CAPS))
def test_refuses_exactly_what_the_walk_refuses(items: list[SelfReport], cap: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        at = _threshold(items, cap, mp)
        for value in {max(at - 1, 0), at}:  # (a cap is never negative)
            mp.setattr(_limits, cap, value)
            refused = _walk_refuses(items)
            assert _parse_refuses(items) == refused, (cap, value)
            # at the walk's threshold the count is exact: not one value, container or
            # character more or fewer than it counts
            assert _claims._reports_within_caps(items) == (not refused), (cap, value)


def test_too_much_text_in_validated_reports_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [
        SelfReport(
            item="x",
            status="already_correct",
            evidence=[FileCitation(file="a.py", line=1, content="y" * 5000)],
        )
    ]
    monkeypatch.setattr(_limits, "MAX_CLAIM_BYTES", 4000)
    with pytest.raises(ClaimTooLarge, match="more text than allowed"):
        parse_manifest(items)


def test_a_list_mutated_after_validation_goes_to_the_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Something that is not a citation appended to a validated report's evidence is
    walked like any other value: its text counts."""
    report = SelfReport(item="x", status="already_correct")
    report.evidence.append({"file": "a.py", "line": 1, "content": "y" * 5000})  # type: ignore[arg-type]
    assert not _claims._reports_within_caps([report])
    monkeypatch.setattr(_limits, "MAX_CLAIM_BYTES", 4000)
    with pytest.raises(ClaimTooLarge):
        parse_manifest([report])


def test_shallow_depth_cap_goes_to_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [SelfReport(item="x", status="already_correct", evidence=[])]
    monkeypatch.setattr(_limits, "MAX_JSON_DEPTH", 3)
    assert not _claims._reports_within_caps(items)
    assert parse_manifest(items)[0] == items  # three deep: within that cap
    deep = [
        SelfReport(
            item="x",
            status="already_correct",
            evidence=[FileCitation(file="a.py", line=1, content="c")],
        )
    ]
    monkeypatch.setattr(_limits, "MAX_JSON_DEPTH", 3)
    with pytest.raises(ClaimTooLarge, match="nested deeper"):
        parse_manifest(deep)


def test_citations_past_the_cap_are_refused_with_their_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cite = FileCitation(file="a.py", line=1, content="import os")
    items = [SelfReport(item=f"i{i}", status="already_correct", evidence=[cite]) for i in range(30)]
    monkeypatch.setattr(_limits, "MAX_CITATIONS", 20)
    with pytest.raises(ClaimTooLarge, match="30 citations"):
        parse_manifest(items)
