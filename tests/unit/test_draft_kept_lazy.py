"""A verdict's kept sentences are built when ``verdict.kept`` is first read, and a
verdict nobody read them from behaves exactly as one that was read."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator

import pytest

from trustgate.evidence.record import Record
from trustgate.verifiers.drafts import verify as module
from trustgate.verifiers.drafts.verify import DraftVerdict, KeptSentence, answer_gap, verify_draft

RECORD = Record.from_lines(["14:02 p99 9.2 s", "14:05 deploy 4411", "14:20 rollback done"])
DRAFT = (
    "# Checkout latency\n\n"
    "Latency rose to 9.2 s at 14:02. [[1]] The deploy exhausted the pool. "
    "Deploy 4411 went out at 14:05 [[2, 9]], and the rollback finished at 14:20. [[3]]\n\n"
    "- It was probably the cache.\n- The alert fired. [[1]]\n"
)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many KeptSentence objects were made, counted as they are made."""
    count = [0]
    init = KeptSentence.__init__

    def counting(self: KeptSentence, *args: object, **kwargs: object) -> None:
        count[0] += 1
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module.KeptSentence, "__init__", counting)
    yield count


def test_kept_sentences_are_built_when_first_read(built: list[int]) -> None:
    verdict = verify_draft(DRAFT, RECORD)
    assert built[0] == 0  # a gate reads the text and the removals, never these
    kept = verdict.kept
    assert isinstance(kept, tuple) and kept
    assert built[0] == len(kept)
    assert verdict.kept is kept  # built once
    assert built[0] == len(kept)
    first = [k.text for k in kept][:2]
    assert first == ["Checkout latency", "Latency rose to 9.2 s at 14:02. [[1]]"]
    assert "[[2]]" in kept[2].text and "9" not in kept[2].text.split("[[")[1]


def test_an_unread_verdict_behaves_as_a_read_one(built: list[int]) -> None:
    unread = verify_draft(DRAFT, RECORD)
    assert built[0] == 0
    read = verify_draft(DRAFT, RECORD)
    assert read.kept
    assert unread.model_dump() == read.model_dump()
    assert unread.model_dump_json() == read.model_dump_json()
    assert unread == read and read == unread
    assert hash(unread) == hash(read)
    assert repr(unread) == repr(read)
    assert pickle.loads(pickle.dumps(unread)) == read
    assert copy.deepcopy(unread).kept == read.kept
    assert unread.model_copy(update={"text": "x"}).kept == read.kept
    assert DraftVerdict.model_validate(unread.model_dump()) == read
    assert answer_gap(unread, unread.gaps[0].id, "A cache flush.", "Dana").kept == read.kept
    assert unread.kept == read.kept


def test_the_field_is_still_a_tuple_of_kept_sentences(built: list[int]) -> None:
    verdict = verify_draft(DRAFT, RECORD)
    assert built[0] == 0
    schema = DraftVerdict.model_json_schema()["properties"]["kept"]
    assert schema["type"] == "array"
    assert DraftVerdict(text="t").kept == ()
    given = (KeptSentence("a", 0, 1, "sentence"),)
    assert DraftVerdict(text="a", kept=given).kept == given
    with pytest.raises(ValueError):
        verdict.kept = ()  # type: ignore[misc]
