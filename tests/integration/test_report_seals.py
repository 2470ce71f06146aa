"""Report-log rows are sealed: a row inserted, edited or damaged with SQL is never read
back as a crossing, on SQLite and on a real PostgreSQL.

Each test writes three real crossings (``mod``: modified, ``ok``: pass, ``halt``:
halted) through ``connect()``, then changes the database with SQL the way anyone with
write access could, and reads it through every door: ``db.history()`` /
``ReportHistory``, ``trustgate.persistence.history`` and ``trustgate history``
(text and ``--json``). The changed row must be marked as not sealed, never listed as
a crossing (let alone one that passed); the untouched rows must still read as sealed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli_support import TEST_LEDGER_KEY, is_pg, make_log_db, sql

from trustgate.cli import main
from trustgate.persistence import connect, history

OTHER_KEY = "a-different-ledger-key-0123456789abcdef"


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "trust.db")
    else:
        yield request.getfixturevalue("pg_url")


@pytest.fixture
def ids(url: str) -> dict[str, str]:
    return make_log_db(url)


def _row(url: str, report_id: str) -> dict[str, Any]:
    cols = "id, thread_id, checkpoint_ns, gate, node, decision, released, started_at, "
    cols += "finished_at, body"
    (values,) = sql(url, f"SELECT {cols} FROM trustgate_reports WHERE id = {{p}}", (report_id,))
    return dict(zip(cols.split(", "), values, strict=True))


def _edit_body(url: str, report_id: str, **changes: Any) -> None:
    body = json.loads(_row(url, report_id)["body"])
    body.update(changes)
    sql(
        url, "UPDATE trustgate_reports SET body = {p} WHERE id = {p}", (json.dumps(body), report_id)
    )


def _cli(url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["history", "--database", url, *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _statuses(url: str) -> dict[str | None, str]:
    return {row.thread_id: row.status for row in history(url=url).rows}


def _assert_marked_not_passed(
    url: str, thread: str, status: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The row of ``thread`` is refused everywhere; the other threads read as before."""
    with connect(url) as db:
        found = db.history()
        assert thread not in {r.thread_id for r in found}  # not a crossing at all
        assert not db.history(thread=thread)
        (refused,) = db.history(thread=thread).refused
        assert refused.status == status and not refused.sealed and refused.report is None
        assert refused.reason
    assert {r.thread_id for r in history(url=url)} == {"mod", "ok", "halt"} - {thread}
    assert _statuses(url) == {
        t: (status if t == thread else "sealed") for t in ("mod", "ok", "halt")
    }

    code, out, _ = _cli(url, capsys)
    assert code == 1  # the audit trail does not hold as written
    marked = [line for line in out.splitlines() if f"thread={thread} " in line]
    assert marked and all("NOT SEALED" in line for line in marked), out
    assert f"NOT SEALED ({status})" in out
    assert "2 crossing(s); 1 row(s) NOT SEALED" in out
    assert ": pass (released)" not in "\n".join(marked)

    code, out, _ = _cli(url, capsys, "--json", "--thread", thread)
    (item,) = json.loads(out)
    assert item["sealed"] is False and item["status"] == status
    assert "decision" not in item  # what it claims is under claimed_decision, not decision


def test_untouched_rows_read_as_sealed(
    url: str, ids: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    found = history(url=url)
    assert [r.decision for r in found] == ["modified", "pass", "halted"]
    assert [row.status for row in found.rows] == ["sealed"] * 3 and not found.refused
    (key_id, seal) = sql(
        url, "SELECT key_id, seal FROM trustgate_reports WHERE id = {p}", (ids["ok"],)
    )[0]
    with connect(url) as db:
        assert key_id == db.report_log.seal_key.key_id == db.ledger.seal_key.key_id
    assert seal and len(seal) == 64
    code, out, _ = _cli(url, capsys)
    assert code == 0 and "3 crossing(s)" in out and "NOT SEALED" not in out
    code, out, _ = _cli(url, capsys, "--json")
    assert [item["sealed"] for item in json.loads(out)] == [True, True, True]


def test_a_row_inserted_with_sql_is_not_sealed(
    url: str, ids: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The halted crossing's row removed, and one that says it passed put in its place."""
    row = _row(url, ids["halt"])
    body = json.loads(row["body"])
    body.update(id="f" * 32, decision="pass", released=True, findings=[], overrides=[])
    sql(url, "DELETE FROM trustgate_reports WHERE id = {p}", (ids["halt"],))
    values = {**row, "id": "f" * 32, "decision": "pass", "released": True}
    values["body"] = json.dumps(body)
    cols = list(values)
    marks = ", ".join("{p}" for _ in cols)
    sql(
        url,
        f"INSERT INTO trustgate_reports ({', '.join(cols)}) VALUES ({marks})",
        tuple(values.values()),
    )
    _assert_marked_not_passed(url, "halt", "unsealed", capsys)


def test_a_halted_row_edited_to_pass_is_forged(
    url: str, ids: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    true = True if is_pg(url) else 1
    sql(
        url,
        "UPDATE trustgate_reports SET decision = 'pass', released = {p} WHERE id = {p}",
        (true, ids["halt"]),
    )
    _edit_body(url, ids["halt"], decision="pass", released=True, findings=[], overrides=[])
    _assert_marked_not_passed(url, "halt", "forged", capsys)


def test_changed_findings_are_forged(
    url: str, ids: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    findings = json.loads(_row(url, ids["mod"])["body"])["findings"]
    findings[0]["status"] = "pass"  # the failed finding now says it passed
    _edit_body(url, ids["mod"], findings=findings)
    _assert_marked_not_passed(url, "mod", "forged", capsys)


def test_a_seal_copied_onto_another_row_is_forged(
    url: str, ids: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The seal covers the columns too: the ``ok`` row's seal on the halted row's
    columns (or the row moved to another thread) does not fit."""
    (seal,) = sql(url, "SELECT seal FROM trustgate_reports WHERE id = {p}", (ids["ok"],))[0]
    sql(url, "UPDATE trustgate_reports SET seal = {p} WHERE id = {p}", (seal, ids["halt"]))
    _assert_marked_not_passed(url, "halt", "forged", capsys)


def test_a_damaged_row_is_skipped_with_a_count(
    url: str,
    ids: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    sql(url, "UPDATE trustgate_reports SET body = '{not json' WHERE id = {p}", (ids["ok"],))
    with caplog.at_level(logging.WARNING, logger="trustgate.persistence._log"):
        found = history(url=url)
    assert [r.thread_id for r in found] == ["mod", "halt"]
    assert [r.status for r in found.refused] == ["forged"]
    (warning,) = [r.getMessage() for r in caplog.records if "not shown" in r.getMessage()]
    assert warning.startswith("1 of 3 report-log row(s) are not shown as crossings (1 forged)")
    code, out, _ = _cli(url, capsys)
    assert code == 1 and "2 crossing(s); 1 row(s) NOT SEALED" in out
    code, out, _ = _cli(url, capsys, "--thread", "mod")  # other threads are not affected
    assert code == 0 and "1 crossing(s)" in out


def test_a_row_that_is_not_text_is_one_unreadable_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite stores whatever it is given (PostgreSQL refuses it at write time): bytes
    that are not UTF-8 in a text column used to fail the whole query, for every thread."""
    url = str(tmp_path / "trust.db")
    ids = make_log_db(url)
    sql(
        url,
        "UPDATE trustgate_reports SET node = CAST(X'FF00FE' AS TEXT) WHERE id = {p}",
        (ids["ok"],),
    )
    sql(url, "UPDATE trustgate_reports SET released = 'yes' WHERE id = {p}", (ids["mod"],))
    found = history(url=url)
    assert [r.thread_id for r in found] == ["halt"]
    assert sorted(r.status for r in found.refused) == ["unreadable", "unreadable"]
    assert any("not valid UTF-8" in (r.reason or "") for r in found.refused)
    code, out, _ = _cli(url, capsys)
    assert code == 1 and "1 crossing(s); 2 row(s) NOT SEALED" in out


def test_another_key_cannot_vouch_for_the_rows(url: str, ids: dict[str, str]) -> None:
    found = history(url=url, key=OTHER_KEY)
    assert list(found) == [] and [r.status for r in found.refused] == ["unsealed"] * 3
    assert all("another key" in (r.reason or "") for r in found.refused)
    assert [r.status for r in history(url=url, key=TEST_LEDGER_KEY).rows] == ["sealed"] * 3


_OLD_SCHEMA = {
    "sqlite": """CREATE TABLE trustgate_reports (
        id TEXT PRIMARY KEY, thread_id TEXT, checkpoint_ns TEXT NOT NULL DEFAULT '',
        gate TEXT NOT NULL, node TEXT NOT NULL, decision TEXT NOT NULL,
        released INTEGER NOT NULL, started_at TEXT NOT NULL, finished_at TEXT NOT NULL,
        body TEXT NOT NULL)""",
    "postgres": """CREATE TABLE trustgate_reports (
        id TEXT PRIMARY KEY, thread_id TEXT, checkpoint_ns TEXT NOT NULL DEFAULT '',
        gate TEXT NOT NULL, node TEXT NOT NULL, decision TEXT NOT NULL,
        released BOOLEAN NOT NULL, started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ NOT NULL, body TEXT NOT NULL)""",
}


def _columns(url: str) -> set[str]:
    if is_pg(url):
        rows = sql(
            url,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'trustgate_reports'",
        )
        return {r[0] for r in rows}
    return {r[1] for r in sql(url, "PRAGMA table_info(trustgate_reports)")}


def test_rows_from_before_sealing_read_as_unsealed_and_only_writes_migrate(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log written before rows were sealed: reading it neither crashes nor alters the
    table; the next ``connect()`` (a write path) adds the columns, and new rows are
    sealed while the old one stays unsealed."""
    source = str(tmp_path / "source.db")
    ids = make_log_db(source)
    old = _row(source, ids["halt"])
    sql(url, _OLD_SCHEMA["postgres" if is_pg(url) else "sqlite"])
    if is_pg(url):
        old["released"] = bool(old["released"])
    cols = list(old)
    marks = ", ".join("{p}" for _ in cols)
    sql(
        url,
        f"INSERT INTO trustgate_reports ({', '.join(cols)}) VALUES ({marks})",
        tuple(old.values()),
    )
    before = _columns(url)
    assert "seal" not in before

    found = history(url=url)
    assert list(found) == [] and [r.status for r in found.refused] == ["unsealed"]
    assert "no seal" in (found.refused[0].reason or "")
    code, out, _ = _cli(url, capsys)
    assert code == 1 and "NOT SEALED (unsealed)" in out and "thread=halt" in out
    assert _columns(url) == before  # reading migrated nothing

    make_log_db(url)  # the write path: connect() migrates, then logs three new rows
    assert {"key_id", "seal"} <= _columns(url)
    found = history(url=url)
    assert [r.decision for r in found] == ["modified", "pass", "halted"]
    assert [r.status for r in found.refused] == ["unsealed"]
    assert found.refused[0].id == ids["halt"]
