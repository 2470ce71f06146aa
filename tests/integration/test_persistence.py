"""persistence.connect / aconnect, the report log and ``trustgate history``, on both backends.

Each test runs on SQLite (a file under tmp_path) and on a real PostgreSQL database
(``pg_url``). The multi-process guarantees live in ``test_persistence_pg.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _persist_support import HONEST, LIE, build_graph, cfg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import AsyncSqliteStore, SqliteStore

import trustgate
from trustgate import ConfigurationError, persistence
from trustgate.cli import main
from trustgate.errors import GateHalted, InputError
from trustgate.files import Locator, PostgresLedger, SqliteLedger, Workspace
from trustgate.persistence import (
    DEFAULT_DATABASE,
    ENV_VAR,
    ReportingSaver,
    parse_since,
    resolve_url,
)


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "db" / "trust.db")
    else:
        yield request.getfixturevalue("pg_url")


# -- configuration -------------------------------------------------------------------


def test_resolve_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert resolve_url() == ("sqlite", DEFAULT_DATABASE)
    monkeypatch.setenv(ENV_VAR, "postgresql://u@h/db")
    assert resolve_url() == ("postgres", "postgresql://u@h/db")
    assert resolve_url("x.db") == ("sqlite", "x.db")  # the argument wins
    assert resolve_url("sqlite:////tmp/a.db") == ("sqlite", "/tmp/a.db")  # SQLAlchemy's form
    assert resolve_url("sqlite:///rel/a.db") == ("sqlite", "rel/a.db")
    assert resolve_url("postgres://u@h/db") == ("postgres", "postgres://u@h/db")
    assert resolve_url("postgresql+psycopg://u@h/db") == ("postgres", "postgresql://u@h/db")
    for bad in ("mysql://u@h/db", ":memory:", "  ", "sqlite://"):
        with pytest.raises(ConfigurationError):
            resolve_url(bad)


def test_connect_defaults_to_sqlite_under_dot_trustgate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_VAR, raising=False)
    with persistence.connect() as db:
        assert db.backend == "sqlite"
        assert isinstance(db.checkpointer, ReportingSaver)
        assert isinstance(db.checkpointer.saver, SqliteSaver)
        assert isinstance(db.store, SqliteStore)
        assert isinstance(db.ledger, SqliteLedger)
    assert (tmp_path / ".trustgate" / "trustgate.db").is_file()


def test_unreachable_postgres_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="cannot connect to PostgreSQL"):
        persistence.connect("postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")


def test_import_trustgate_does_not_need_psycopg() -> None:
    code = "import sys, trustgate; assert 'psycopg' not in sys.modules, 'psycopg imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_parse_since() -> None:
    now = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)
    assert parse_since("2h", now=now) == now - timedelta(hours=2)
    assert parse_since("30m", now=now) == now - timedelta(minutes=30)
    assert parse_since("2026-01-31T10:00:00Z") == datetime(2026, 1, 31, 10, tzinfo=UTC)
    assert parse_since("2026-01-31T10:00:00") == datetime(2026, 1, 31, 10, tzinfo=UTC)
    assert parse_since(None) is None
    for bad in ("yesterday", "99999999999d"):
        with pytest.raises(InputError):
            parse_since(bad)


# -- the sync path -------------------------------------------------------------------


def test_connect_gives_langgraph_savers_and_logs_each_report_once(url: str) -> None:
    with persistence.connect(url) as db:
        assert isinstance(db.checkpointer, ReportingSaver)
        if db.backend == "postgres":
            assert isinstance(db.checkpointer.saver, PostgresSaver)
            assert isinstance(db.store, PostgresStore)
            assert isinstance(db.ledger, PostgresLedger)
        app = build_graph().compile(checkpointer=db.checkpointer, store=db.store)
        app.invoke({"text": HONEST, "log": []}, cfg("t1"))
        app.invoke({"text": LIE, "log": []}, cfg("t1"))  # the same thread, a second crossing
        app.invoke({"text": LIE, "log": []}, cfg("t2"))
        db.store.put(("ns",), "k", {"v": 1})
        assert db.store.get(("ns",), "k") is not None

        in_state = trustgate.reports(app, cfg("t1"))
        logged = db.history(thread="t1")
        assert [r.id for r in logged] == [r.id for r in in_state]  # none lost, none twice
        assert [r.decision for r in logged] == ["pass", "modified"]
        assert logged[1].overrides[0].kind == "field_override"
        assert logged[1].failed[0].code == "invented"
        assert {r.thread_id for r in db.history()} == {"t1", "t2"}
        assert len(db.history()) == 3
        assert db.history(gate="nope") == []
        assert len(db.history(gate="checker", since="1h")) == 3
        assert db.history(since=datetime.now(UTC) + timedelta(hours=1)) == []
        assert len(db.history(limit=2)) == 2
        with pytest.raises(InputError):
            db.history(limit=-1)

    # a second process-like connection sees the same log; the module function too
    assert len(persistence.history(thread="t2", url=url)) == 1


def test_a_failed_checkpoint_write_keeps_log_and_saver_in_step(url: str) -> None:
    """The checkpoint carrying a report fails after its task's writes were stored and
    logged: the saver keeps those writes, the resume applies them (same report id),
    so the log still holds that one report."""
    with persistence.connect(url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        app.invoke({"text": LIE, "log": []}, cfg("before"))
        _block_checkpoints(db, url)
        with pytest.raises(Exception, match="blocked"):
            app.invoke({"text": LIE, "log": []}, cfg("blocked"))
        logged = db.history(thread="blocked")
        assert len(logged) <= 1
        _unblock_checkpoints(db, url)
        app.invoke(None, cfg("blocked"))
        (report,) = db.history(thread="blocked")
        assert [r.id for r in trustgate.reports(app, cfg("blocked"))] == [report.id]
        assert [r.id for r in logged] in ([], [report.id])
        assert len(db.history(thread="before")) == 1


def _block_checkpoints(db: Any, url: str) -> None:
    if db.backend == "sqlite":
        import sqlite3

        with sqlite3.connect(url) as c:
            c.execute(
                "CREATE TRIGGER block BEFORE INSERT ON checkpoints "
                "WHEN NEW.thread_id = 'blocked' "
                "AND CAST(NEW.checkpoint AS TEXT) LIKE '%trust_reports%' "
                "BEGIN SELECT RAISE(ABORT, 'blocked'); END"
            )
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute(
            "CREATE FUNCTION block() RETURNS trigger AS $$ BEGIN "
            "IF NEW.thread_id = 'blocked' AND NEW.checkpoint::text LIKE '%trust_reports%' "
            "THEN RAISE EXCEPTION 'blocked'; END IF; "
            "RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        c.execute(
            "CREATE TRIGGER block BEFORE INSERT ON checkpoints "
            "FOR EACH ROW EXECUTE FUNCTION block()"
        )


def _unblock_checkpoints(db: Any, url: str) -> None:
    if db.backend == "sqlite":
        import sqlite3

        with sqlite3.connect(url) as c:
            c.execute("DROP TRIGGER block")
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DROP TRIGGER block ON checkpoints")


def test_history_cli(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with persistence.connect(url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        app.invoke({"text": LIE, "log": []}, cfg("cli"))
        app.invoke({"text": HONEST, "log": []}, cfg("other"))
    assert main(["history", "--thread", "cli", "--json", "--database", url]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["gate"] == "checker" and item["decision"] == "modified"
    assert item["overrides"][0]["target"] == "text"
    assert item["findings"][0]["code"] == "invented"

    assert main(["history", "--gate", "checker", "--since", "1d", "--database", url]) == 0
    out = capsys.readouterr().out
    assert "thread=cli" in out and "thread=other" in out and "2 crossing(s)" in out
    assert "OVERRIDE field_override text" in out and "FAIL no_lies/invented" in out

    assert main(["history", "--since", "yesterday", "--database", url]) == 2
    assert "cannot read time" in capsys.readouterr().err


def test_history_cli_reconciles_what_a_crash_left_unlogged(
    url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from _persist_support import build_in_task_graph

    with persistence.connect(url) as db:
        app = build_in_task_graph().compile(checkpointer=db.checkpointer)

        def down(rows: Any) -> int:
            raise RuntimeError("report log down")  # as if the worker died right here

        monkeypatch.setattr(db.report_log, "_insert", down)
        with pytest.raises((GateHalted, RuntimeError)):
            app.invoke({"text": LIE, "log": []}, cfg("crashed"))
    assert persistence.history(thread="crashed", url=url) == []
    assert main(["history", "--reconcile", "--json", "--database", url]) == 0
    captured = capsys.readouterr()
    assert "reconciled 1 report(s)" in captured.err
    (item,) = json.loads(captured.out)
    assert item["decision"] == "halted" and item["thread_id"] == "crashed"
    assert main(["history", "--reconcile", "--database", url]) == 0
    assert "reconciled 0 report(s)" in capsys.readouterr().err


def test_history_cli_without_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ([], ["--reconcile"]):
        assert main(["history", *extra, "--database", str(tmp_path / "missing.db")]) == 2
        assert "no trustgate database" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()


def test_halted_crossing_is_logged(url: str) -> None:
    with persistence.connect(url) as db:
        app = build_graph(policy="halt").compile(checkpointer=db.checkpointer)
        with pytest.raises(GateHalted) as info:
            app.invoke({"text": LIE, "log": []}, cfg("halt"))
        (logged,) = db.history(thread="halt")
        assert logged.id == info.value.report.id
        assert logged.decision == "halted" and not logged.released


def test_ledger_lives_in_the_same_database(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # workers sharing a ledger share its key, or each sees the others' rows unverified
    monkeypatch.setenv("TRUSTGATE_LEDGER_KEY", "shared-key-for-every-worker-0123")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    art = Workspace(root).acquire(Locator(path="a.py", start_line=1, end_line=1))
    with persistence.connect(url) as db:
        assert db.ledger.put(art) == art
    with persistence.connect(url) as again:  # another connection, e.g. another worker
        assert again.ledger.get(art.id) == art
        assert list(again.ledger) == [art]


# -- the async path ------------------------------------------------------------------


async def test_aconnect_gives_async_savers(url: str) -> None:
    db = await persistence.aconnect(url)
    async with db:
        if db.backend == "postgres":
            assert isinstance(db.checkpointer.saver, AsyncPostgresSaver)
            assert isinstance(db.store, AsyncPostgresStore)
        else:
            assert isinstance(db.checkpointer.saver, AsyncSqliteSaver)
            assert isinstance(db.store, AsyncSqliteStore)
        app = build_graph().compile(checkpointer=db.checkpointer, store=db.store)
        await app.ainvoke({"text": LIE, "log": []}, cfg("a1"))
        await app.ainvoke({"text": HONEST, "log": []}, cfg("a1"))
        in_state = await trustgate.areports(app, cfg("a1"))
        logged = await db.ahistory(thread="a1")
        assert [r.id for r in logged] == [r.id for r in in_state]
        assert [r.decision for r in logged] == ["modified", "pass"]


# -- the throwaway server ------------------------------------------------------------


def test_unavailable_server_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pg import _unavailable

    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="must run under CI"):
        _unavailable("no initdb")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL server"):
        _unavailable("no initdb")


def test_temp_postgres_runs_unprivileged_on_localhost_and_cleans_up() -> None:
    import os
    import socket

    import psycopg
    from pg import PG_USER, temp_postgres

    try:
        cm = temp_postgres()
        server = cm.__enter__()
    except Exception as exc:  # same policy as the fixture: fail under CI, else skip
        from pg import _unavailable

        _unavailable(str(exc))
        raise
    try:
        with psycopg.connect(server.url) as c:
            row = c.execute("SELECT current_setting('listen_addresses')").fetchone()
            assert row is not None and row[0] == "127.0.0.1"
        owner = server.root.stat().st_uid
        if os.geteuid() == 0:
            assert owner != 0 and server.user in (PG_USER, "nobody")  # never runs as root
        root, port = server.root, server.port
    finally:
        cm.__exit__(None, None, None)
    assert not root.exists()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # stopped


async def test_async_failed_checkpoint_write_keeps_log_and_saver_in_step(url: str) -> None:
    async with persistence.aconnect(url) as db:
        app = build_graph().compile(checkpointer=db.checkpointer)
        await app.ainvoke({"text": LIE, "log": []}, cfg("before"))
        _block_checkpoints(db, url)
        if db.backend == "sqlite":
            # AsyncSqliteSaver does not roll back a failed write: its connection keeps
            # the file's write lock, so the log's own connection waits out its busy
            # timeout and fails (raised, then reconciled). Shorten the wait here.
            db.report_log._conn.execute("PRAGMA busy_timeout=200")
        with pytest.raises(Exception, match=r"blocked|locked"):
            await app.ainvoke({"text": LIE, "log": []}, cfg("blocked"))
        assert len(await db.ahistory(thread="blocked")) <= 1
        if db.backend == "sqlite":
            # AsyncSqliteSaver leaves the failed write's transaction open on its
            # connection (holding the file's write lock); end it before dropping
            await db.checkpointer.conn.rollback()
        _unblock_checkpoints(db, url)
        await app.ainvoke(None, cfg("blocked"))
        (report,) = await db.ahistory(thread="blocked")
        assert [r.id for r in await trustgate.areports(app, cfg("blocked"))] == [report.id]
        assert len(await db.ahistory(thread="before")) == 1
