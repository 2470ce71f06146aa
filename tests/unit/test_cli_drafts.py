"""``trustgate check-draft``: exit codes, output, bad input as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustgate.cli import main

RECORD = "14:02 checkout p99 latency 9.2s\n14:03 alert fired\n"


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "record.txt").write_text(RECORD, encoding="utf-8")
    return tmp_path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_draft_exits_0_and_prints_it(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = files / "d.md"
    draft.write_text("Latency rose to 9.2 seconds at 14:02. [[1]]\n", encoding="utf-8")
    code, out, err = run(["check-draft", str(draft), "--record", str(files / "record.txt")], capsys)
    assert code == 0
    assert out == "Latency rose to 9.2 seconds at 14:02. [[1]]\n"
    assert "0 sentence(s) removed" in err


def test_removal_exits_1_with_redacted_text(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = files / "d.md"
    draft.write_text("Latency rose at 14:02. [[1]] The deploy caused it.\n", encoding="utf-8")
    code, out, _ = run(["check-draft", str(draft), "--record", str(files / "record.txt")], capsys)
    assert code == 1
    assert "The deploy caused it." not in out
    assert "> **Open question:**" in out


def test_invalid_marker_alone_exits_1(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = files / "d.md"
    draft.write_text("Latency rose at 14:02. [[9]]\n", encoding="utf-8")
    code, out, _ = run(["check-draft", str(draft), "--record", str(files / "record.txt")], capsys)
    assert code == 1
    assert out == "Latency rose at 14:02.\n"


def test_json_output(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = files / "d.md"
    draft.write_text("Latency rose. [[1]] It probably broke. [[9]]", encoding="utf-8")
    code, out, _ = run(
        ["check-draft", str(draft), "--record", str(files / "record.txt"), "--json"], capsys
    )
    assert code == 1
    data = json.loads(out)
    assert data["clean"] is False
    assert [r["rule"] for r in data["removed"]] == ["hedge"]
    assert [g["id"] for g in data["gaps"]] == ["gap-1"]
    assert [c["id"] for c in data["invalid_citations"]] == ["9"]
    assert {f["code"] for f in data["findings"]} == {"hedged", "invalid_citation"}
    assert "probably" not in data["text"]


def test_json_record(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "record.json").write_text(json.dumps({"msg-1": "deploy started"}), encoding="utf-8")
    draft = files / "d.md"
    draft.write_text("The deploy caused it. [[msg-1]]", encoding="utf-8")
    code, _, _ = run(["check-draft", str(draft), "--record", str(files / "record.json")], capsys)
    assert code == 0


@pytest.mark.parametrize(
    ("draft_bytes", "record_name", "needle"),
    [
        (b"\xff\xfe not utf-8", "record.txt", "not valid UTF-8"),
        (b"", "record.txt", "empty"),
        (b"   \n", "record.txt", "empty"),
        (b"fine.", "missing.txt", "cannot read"),
        (b"fine.", "bad.json", "not valid JSON"),
        (b"fine.", "list.json", "JSON object"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    files: Path,
    capsys: pytest.CaptureFixture[str],
    draft_bytes: bytes,
    record_name: str,
    needle: str,
) -> None:
    (files / "bad.json").write_text("{nope", encoding="utf-8")
    (files / "list.json").write_text("[1, 2]", encoding="utf-8")
    draft = files / "d.md"
    draft.write_bytes(draft_bytes)
    code, out, err = run(["check-draft", str(draft), "--record", str(files / record_name)], capsys)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and out == ""


def test_missing_record_option_is_a_usage_error(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["check-draft", str(files / "record.txt")], capsys)
    assert code == 2 and "--record" in err
