"""Record: ids a reader can open, numbered the way an editor numbers lines."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from trustgate.drafts import Record
from trustgate.errors import InputError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\nb\nc", {"1": "a", "2": "b", "3": "c"}),
        ("a\nb\n", {"1": "a", "2": "b"}),
        ("a\r\nb\r\n", {"1": "a", "2": "b"}),
        ("a\rb\rc", {"1": "a", "2": "b", "3": "c"}),
        ("a\r\nb\nc\rd", {"1": "a", "2": "b", "3": "c", "4": "d"}),
        ("a\n\nb", {"1": "a", "2": "", "3": "b"}),
        ("\n", {"1": ""}),
        ("", {}),
        ("only", {"1": "only"}),
    ],
)
def test_from_text_numbers_lines_as_a_reader_sees_them(text: str, expected: dict[str, str]) -> None:
    assert Record.from_text(text).lines == expected


def test_from_lines_and_ids() -> None:
    record = Record.from_lines(["x", "y"])
    assert record.ids == frozenset({"1", "2"})
    assert record["2"] == "y"
    assert "1" in record and " 1 " in record and "3" not in record and 1 not in record
    assert record.get("9") is None


def test_arbitrary_ids_are_trimmed_strings() -> None:
    record = Record(lines={" msg-81 ": "deploy started", 12: "alert fired"})
    assert record.lines == {"msg-81": "deploy started", "12": "alert fired"}
    assert record["msg-81"] == "deploy started"


@pytest.mark.parametrize(
    "lines",
    [
        {"1": "a", " 1": "b"},  # two ids trim to the same id
        {"": "a"},
        {"  ": "a"},
        {"1]": "a"},
        {"1,2": "a"},
        {"1": 3},
        {None: "a"},
        {True: "a"},
    ],
)
def test_unusable_ids_and_lines_are_refused(lines: dict[object, object]) -> None:
    with pytest.raises(InputError):
        Record(lines=lines)  # type: ignore[arg-type]


def test_non_mapping_and_non_text_inputs_are_refused() -> None:
    with pytest.raises(InputError):
        Record(lines=["a", "b"])  # type: ignore[arg-type]
    with pytest.raises(InputError):
        Record.from_text(b"bytes")  # type: ignore[arg-type]


def test_missing_line_is_a_typed_error() -> None:
    with pytest.raises(InputError):
        Record.from_text("a")["2"]


def test_record_is_frozen() -> None:
    record = Record.from_text("a")
    with pytest.raises(ValidationError):
        record.lines = {}  # type: ignore[misc]


def test_empty_record_is_valid() -> None:
    assert Record().ids == frozenset()
