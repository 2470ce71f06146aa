"""The rules' pass counts unreadable characters over the whole draft at once, as
:func:`trustgate.verifiers.drafts._text.mostly_symbols` counts them per sentence."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.verifiers.drafts._reading import _unreadable
from trustgate.verifiers.drafts._text import mostly_symbols

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


_WORDS = st.sampled_from(
    [
        "The deploy went out",
        "at 14:02.",
        "der",
        "die",
        "und",
        "ist",
        "Der2",
        "x_die",
        "la",
        "est",
        "Les",
        "ä",
        "#|*&^%$~{}",
        "[[1]]",
        "and the pool",
        "because",
        "may",
        "\n\n",
        "\n```\n",
        "\n- ",
        ". ",
        " ",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_WORDS, max_size=40).map(" ".join))
def test_the_first_pass_finds_the_units_unsupported_finds(draft: str) -> None:
    """Where no unit holds a function word of another language, the first pass counts
    symbols instead of asking each unit (in this draft or in one made only of these
    units); it must find the same units as asking each."""
    from trustgate.verifiers.drafts import _triggers
    from trustgate.verifiers.drafts._reading import _first_pass
    from trustgate.verifiers.drafts._text import unsupported
    from trustgate.verifiers.drafts.segment import units

    found = units(draft, code=False)
    form = _triggers.scan_form(draft)
    if form is None:
        return
    keys = _triggers.causal().keys | _triggers.hedge().keys
    _, unreadable = _first_pass(draft, found, _triggers.word_form(form), set(), keys, keys)
    assert unreadable == {i for i, (s, e, _, _) in enumerate(found) if unsupported(draft[s:e])}
