"""The ledger key: configured for every database other processes read, never a file
others can read, and the same key seals the report log.

A key made up per process used to leave a second worker, or the same worker after a
restart, seeing every artifact as unverified; a world-readable key file was accepted
with a warning. Now both are refused with a typed error saying what to do, before
anything is created, while in-memory use and an explicit ephemeral key still work.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from _cli_support import TEST_LEDGER_KEY, make_log_db

from trustgate.cli import main
from trustgate.errors import LedgerKeyError
from trustgate.evidence.ledger import EPHEMERAL_KEY, KEY_ENV, KEY_FILE_ENV
from trustgate.evidence.ledger_postgres import PostgresLedger
from trustgate.files import InMemoryLedger, SqliteLedger
from trustgate.persistence import (
    InMemoryReportHistory,
    SqliteReportHistory,
    aconnect,
    connect,
    history,
)

ALLOW_ENV = "TRUSTGATE_LEDGER_KEY_FILE_ALLOW_READABLE"
NOWHERE = "postgresql://nobody@127.0.0.1:9/none"  # never reached: the key is checked first


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (KEY_ENV, KEY_FILE_ENV, ALLOW_ENV):
        monkeypatch.delenv(name, raising=False)


def _says_how(exc: pytest.ExceptionInfo[LedgerKeyError]) -> None:
    text = str(exc.value)
    assert KEY_ENV in text and KEY_FILE_ENV in text and "key=" in text, text


@pytest.mark.usefixtures("no_key")
def test_a_database_file_without_a_key_is_refused_before_anything_is_created(
    tmp_path: Path,
) -> None:
    for make in (
        lambda p: SqliteLedger(p),
        lambda p: SqliteReportHistory(p),
        lambda p: connect(p),
    ):
        target = tmp_path / "sub" / "trust.db"
        with pytest.raises(LedgerKeyError) as info:
            make(target)
        _says_how(info)
        assert str(target) in str(info.value)
        assert not (tmp_path / "sub").exists()


@pytest.mark.usefixtures("no_key")
async def test_aconnect_without_a_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LedgerKeyError):
        await aconnect(tmp_path / "a.db")
    assert not (tmp_path / "a.db").exists()


@pytest.mark.usefixtures("no_key")
def test_postgres_always_needs_a_key() -> None:
    """Checked before connecting: a missing key is not reported as an unreachable server."""
    for make in (lambda: PostgresLedger(NOWHERE), lambda: connect(NOWHERE)):
        with pytest.raises(LedgerKeyError) as info:
            make()
        _says_how(info)
        assert "PostgreSQL" in str(info.value)


@pytest.mark.usefixtures("no_key")
def test_in_memory_and_ephemeral_keys_still_work(tmp_path: Path) -> None:
    assert InMemoryLedger().seal_key.origin == "random"
    assert SqliteLedger().seal_key.origin == "random"  # ":memory:"
    assert InMemoryReportHistory().seal_key.origin == "random"
    ledger = SqliteLedger(tmp_path / "l.db", key=EPHEMERAL_KEY)
    assert ledger.seal_key.origin == "ephemeral"
    ledger.close()
    make_log_db(str(tmp_path / "t.db"))  # written under the suite's key
    with connect(tmp_path / "t.db", key=EPHEMERAL_KEY) as db:
        assert db.ledger.seal_key == db.report_log.seal_key  # one key for both
        found = db.history()  # a key nobody else holds vouches for nothing it did not seal
        assert list(found) == [] and len(found.refused) == 3


def test_a_key_file_others_can_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    key_file = tmp_path / "ledger.key"
    key_file.write_text(TEST_LEDGER_KEY + "\n")
    monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
    for mode in (0o644, 0o640, 0o604, 0o620):
        key_file.chmod(mode)
        with pytest.raises(LedgerKeyError) as info:
            SqliteLedger(tmp_path / "l.db")
        assert str(key_file) in str(info.value) and f"chmod 600 {key_file}" in str(info.value)
        assert ALLOW_ENV in str(info.value)
    key_file.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="trustgate.evidence.keys"):
        allowed = SqliteLedger(tmp_path / "l.db", allow_readable_key_file=True)
    assert allowed.seal_key.origin == KEY_FILE_ENV
    assert any("readable or writable by group or others" in r.getMessage() for r in caplog.records)
    allowed.close()
    monkeypatch.setenv(ALLOW_ENV, "1")
    SqliteLedger(tmp_path / "l.db").close()
    monkeypatch.delenv(ALLOW_ENV)
    key_file.chmod(0o600)
    private = SqliteLedger(tmp_path / "l.db")
    assert private.seal_key.secret == TEST_LEDGER_KEY.encode()
    private.close()


def test_the_ledger_key_seals_the_report_rows(tmp_path: Path) -> None:
    url = str(tmp_path / "t.db")
    make_log_db(url)
    with connect(url) as db:
        assert db.ledger.seal_key.key_id == db.report_log.seal_key.key_id
        assert db.ledger.seal_key.origin == KEY_ENV
        assert [row.status for row in db.history().rows] == ["sealed"] * 3
    assert TEST_LEDGER_KEY not in repr(db.ledger.seal_key)  # a key never shows in a repr


def test_the_cli_without_a_key_is_one_line_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "t.db")
    make_log_db(url)
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv in (
        ["history", "--database", url],
        ["demo", "code-review"],
        ["demo", "code-review", "--database-url", str(tmp_path / "new.db")],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("trustgate: no ledger key"), err
        assert KEY_ENV in err and KEY_FILE_ENV in err
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-shm", "-wal"))) == [
        n for n in before if not n.endswith(("-shm", "-wal"))
    ]


def test_history_reads_with_the_key_it_is_given(tmp_path: Path) -> None:
    url = str(tmp_path / "t.db")
    make_log_db(url)
    assert len(history(url=url, key=TEST_LEDGER_KEY)) == 3
    assert len(history(url=url, key="not-the-key-of-this-database-0123")) == 0
