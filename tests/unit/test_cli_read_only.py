"""``trustgate history`` reads and changes nothing; every bad input is one line, no traceback.

Before: a read pointed at any SQLite file created trustgate's tables in it; a missing
or non-database file, ``--limit 9999999999999999999999999``, an invalid-UTF-8
``--thread`` or one damaged row printed a Python traceback (through the logging
last-resort handler) before the error line, and the damaged row failed the query for
every thread. The tests run the command in process with the logging a plain process
has (:func:`_cli_support.bare_logging`), so what pytest's own handlers would swallow
reaches stderr as it would for a user.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from _cli_support import bare_logging, make_log_db, snapshot, sql, tables

from trustgate.cli import main

NOT_UTF8 = b"t\xff\xfe".decode("utf-8", "surrogateescape")  # as the OS hands such bytes over


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with bare_logging():
        code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback (most recent call last)" not in err, err
    return code, out, err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("trustgate: "), err
    return err


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "trust.db"
    make_log_db(str(path))
    return path


def test_a_read_never_creates_tables_in_a_foreign_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    before_files, before_tables = snapshot(tmp_path), tables(other)
    for extra in ([], ["--json"], ["--thread", "t1", "--limit", "3"]):
        code, _, err = run(["history", "--database", str(other), *extra], capsys)
        assert code == 2 and "holds no trustgate report log" in one_line(err)
    assert tables(other) == before_tables  # no trustgate_reports, no index
    assert snapshot(tmp_path) == before_files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # not even a journal
    code, _, err = run(["history", "--reconcile", "--database", str(other)], capsys)
    assert code == 2 and "holds no trustgate report log" in one_line(err)
    assert tables(other) == before_tables


def test_an_empty_file_is_not_made_into_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite takes an empty file for an empty database: a read used to write the
    report log's tables into it."""
    target = tmp_path / "empty.db"
    target.write_bytes(b"")
    for argv in (
        ["history", "--database", str(target)],
        ["history", "--json", "--database", str(target)],
    ):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "" and "holds no trustgate report log" in one_line(err)
    assert target.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["history", "--limit", "9999999999999999999999999"], "--limit: must be between 0 and"),
        (["history", "--thread", NOT_UTF8], "--thread 't\\xff\\xfe' is not valid UTF-8"),
        (["history", "--gate", NOT_UTF8], "--gate 't\\xff\\xfe' is not valid UTF-8"),
        (["history", "--thread", "a\x00b"], "--thread contains a NUL character"),
        (["history", "--since", "0001-01-01T00:00:00+05:00"], "is out of range"),
    ],
)
def test_bad_flags_are_one_line_exit_2(
    argv: list[str], said: str, db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(db.parent)
    code, out, err = run([*argv, "--database", str(db)], capsys)
    assert code == 2 and out == "" and said in one_line(err)
    assert snapshot(db.parent) == before


@pytest.mark.timeout(120)  # before the cap, this replay ran through 10**30 lines
def test_a_window_past_the_cap_is_refused_before_replaying(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    manifest = [
        {
            "item": "v",
            "status": "already_correct",
            "evidence": [{"file": "app.py", "line": 1, "content": "not in the file"}],
        }
    ]
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    argv = ["replay", str(tmp_path / "m.json"), "--root", str(tmp_path)]
    code, out, err = run([*argv, "--window", "9" * 30], capsys)
    assert code == 2 and out == "" and "--window: must be between 0 and" in one_line(err)
    code, out, _ = run([*argv, "--window", "10000"], capsys)  # the cap itself still runs
    assert code == 1 and "content_mismatch" in out


def test_one_damaged_row_is_skipped_for_every_thread(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sql(str(db), "UPDATE trustgate_reports SET body = '{damaged' WHERE thread_id = 'ok'")
    sql(str(db), "UPDATE trustgate_reports SET gate = CAST(X'FF' AS TEXT) WHERE thread_id = 'mod'")
    code, out, err = run(["history", "--database", str(db)], capsys)
    assert code == 1
    assert "1 crossing(s); 2 row(s) NOT SEALED" in out and "thread=halt" in out
    (warning,) = err.splitlines()  # the count, as a warning, one line
    assert warning.startswith("trustgate: warning: 2 of 3 report-log row(s) are not shown")
    code, out, err = run(["history", "--thread", "halt", "--database", str(db)], capsys)
    assert code == 0 and "1 crossing(s)" in out and err == ""


def test_a_row_cannot_rewrite_the_lines_around_it(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a forged row holds is printed escaped: a carriage return or an escape
    sequence in its thread id cannot overwrite its NOT SEALED mark on a terminal."""
    trick = "x\r\x1b[2K2026-01-01 00:00:00  thread=ok  checker on writer: pass (released)"
    sql(str(db), "UPDATE trustgate_reports SET thread_id = ? WHERE thread_id = 'halt'", (trick,))
    code, out, _ = run(["history", "--database", str(db)], capsys)
    assert code == 1 and "\r" not in out and "\x1b" not in out
    assert "thread=x\\x0d\\x1b[2K2026" in out and "NOT SEALED (forged)" in out


def test_an_internal_error_is_one_line_not_a_traceback(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr("trustgate.persistence.history", broken)
    code, out, err = run(["history", "--database", str(db)], capsys)
    assert code == 2 and out == ""
    assert one_line(err) == "trustgate: internal error: RuntimeError: the database went away\n"
