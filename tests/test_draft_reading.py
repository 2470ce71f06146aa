"""The rules' pass counts unreadable characters over the whole draft at once, as
:func:`trustgate.verifiers.drafts._text.mostly_symbols` counts them per sentence."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.verifiers.drafts._reading import _unreadable
from trustgate.verifiers.drafts._text import mostly_symbols

pytestmark = pytest.mark.unit

# half letters and prose punctuation, half symbols: both sides of the line are common
_SYMBOLISH = st.sampled_from(
    list("ab1 .,'\n" + "#[]|*&^%$~{}<>=+\x00\x7f") + list(string.printable)
)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=_SYMBOLISH, min_size=12, max_size=40))
def test_counting_on_the_draft_agrees_with_mostly_symbols(draft: str) -> None:
    counts = draft.encode("ascii").translate(_unreadable())
    for start in range(len(draft)):
        for end in range(start, len(draft) + 1):
            n = end - start
            got = n >= 12 and counts.count(1, start, end) * 2 > n
            assert got == mostly_symbols(draft[start:end]), (start, end)
