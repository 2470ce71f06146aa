"""Citation markers read once over the whole draft say what each unit's own text says.

:func:`trustgate.verifiers.drafts._markers.read` finds every marker of a draft with
one search and gives each to its unit; the reading it replaced parsed every unit's
text on its own, which ``_markers._alone`` still does where the whole-draft search
could differ. Reading every unit alone is therefore the oracle: cited ids, invalid
ids, rewrites, joins and every reported marker, in order.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.evidence.record import Record
from trustgate.verifiers.drafts import _markers
from trustgate.verifiers.drafts.segment import units

RECORD = Record.from_lines(f"14:{i:02d} event {i}" for i in range(1, 10))


def _each_alone(draft: str) -> _markers.Found:
    found_units = units(draft, code=False)
    found = _markers.Found([()] * len(found_units))
    for i, (s, e, _, _) in enumerate(found_units):
        raw = draft[s:e]
        if "[[" in raw:
            found.marked.add(i)
            _markers._alone(found, i, raw, s, RECORD.lines, {})
    found.citing = {i for i, ids in enumerate(found.cited) if ids}
    return found


def _whole(draft: str) -> _markers.Found:
    found_units = units(draft, code=False)
    return _markers.read(draft, found_units, [u[0] for u in found_units], RECORD.lines)


_PIECES = st.sampled_from(
    [
        "The pool drained",
        "at 14:02",
        "[[1]]",
        "[[1, 2]]",
        "[[3]][[4]]",
        "[[1, 99]]",
        "[[99]]",
        "[[ ]]",
        "[[1,1]]",
        "[[x. Y]]",
        "[[",
        "[",
        "]]",
        "[[[2]]",
        "`[[5]]`",
        ".",
        ". ",
        "! ",
        "\n",
        "\n\n",
        "\n- ",
        "\n1. ",
        "\n| ",
        "\n```\n",
        " ",
        "\t",
        "x",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_whole_draft_reads_each_unit_as_its_own_text(draft: str) -> None:
    assert _whole(draft) == _each_alone(draft)


@pytest.mark.parametrize(
    "draft",
    [
        "Latency rose. [[1]] The pool drained. [[2, 99]]",
        "It paged.[[1]][[2]]Then it stopped.",
        "A sentence ends inside [[a. B]] the marker.",
        "A stray [ bracket and a marker [[3]].",
        "An unclosed [[4 and a closed [[5]].",
        "[[[6]] and [[7]]",
        "Glued wo[[1]]rds.",
        "Nothing to see here.",
    ],
)
def test_examples(draft: str) -> None:
    assert _whole(draft) == _each_alone(draft)
