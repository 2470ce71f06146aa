"""SQLite: the default database, one file for checkpoints, store, ledger and report log.

The checkpointer is LangGraph's own ``SqliteSaver`` / ``AsyncSqliteSaver``, wrapped
by :class:`~trustgate.persistence.ReportingSaver`; the report log has its own
autocommit connection to the same file (WAL mode, so readers never block the
saver, and a 30 s busy timeout for processes sharing the file).

Times are stored as fixed-width UTC text so that SQLite compares them correctly
as strings (``--since``).

Reading never writes: the log a read command opens (``trustgate history``,
:func:`~trustgate.persistence.history`) is a ``mode=ro`` connection that runs no DDL
and no ``journal_mode`` change, so pointing it at any SQLite file leaves the file's
tables as they were (in WAL mode SQLite itself keeps its ``-shm``/``-wal`` side files
beside the database, as for any reader). The tables are created, and a table from
before rows were sealed gains its ``key_id``/``seal`` columns, only on the write path
(:func:`~trustgate.persistence.connect`, a writable ``SqliteReportHistory``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from trustgate.errors import ConfigurationError
from trustgate.evidence.keys import KeyArg, SealKey
from trustgate.evidence.ledger import SqliteLedger
from trustgate.persistence._log import (
    ReportHistory,
    ReportRow,
    read_only_insert,
    select_sql,
    utc_text,
)
from trustgate.persistence._persistence import AsyncPersistence, Persistence
from trustgate.persistence._saver import ReportingSaver

__all__ = ["SQLITE_REPORTS_SCHEMA", "SqliteReportHistory", "aconnect_sqlite", "connect_sqlite"]

logger = logging.getLogger(__name__)

SQLITE_REPORTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS trustgate_reports (
    id TEXT PRIMARY KEY,
    thread_id TEXT,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    gate TEXT NOT NULL,
    node TEXT NOT NULL,
    decision TEXT NOT NULL,
    released INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    body TEXT NOT NULL,
    key_id TEXT,
    seal TEXT
);
CREATE INDEX IF NOT EXISTS trustgate_reports_thread ON trustgate_reports (thread_id, finished_at);
CREATE INDEX IF NOT EXISTS trustgate_reports_gate ON trustgate_reports (gate, finished_at);
"""

_SEAL_COLUMNS = ("key_id", "seal")  # added to a table made before rows were sealed
_INSERT = (
    "INSERT INTO trustgate_reports (id, thread_id, checkpoint_ns, gate, node, decision, "
    "released, started_at, finished_at, body, key_id, seal) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    # the same crossing delivered again (at-least-once) replaces its first delivery's
    # row with the report that counts the deliveries; anything else is kept as it was
    "ON CONFLICT(id) DO UPDATE SET body = excluded.body, key_id = excluded.key_id, "
    "seal = excluded.seal WHERE coalesce(json_extract(excluded.body, '$.deliveries'), 1) > "
    "coalesce(json_extract(trustgate_reports.body, '$.deliveries'), 1)"
)
_CHUNK = 500  # ids per IN (...) probe, well under SQLite's variable limit


def sqlite_time(when: datetime) -> str:
    """Fixed-width UTC text, so SQLite compares times as strings correctly."""
    return utc_text(when)


def sqlite_conn(path: str, *, autocommit: bool) -> sqlite3.Connection:
    if autocommit:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def prepare_sqlite(path: str) -> None:
    """Create the file (and its directory) and the report log's table."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot create the database directory {p.parent}: {exc}"
        ) from None
    try:
        conn = sqlite_conn(path, autocommit=True)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot open SQLite database {path!r}: {exc}") from None
    try:
        conn.executescript(SQLITE_REPORTS_SCHEMA)
        _add_seal_columns(conn)
    except sqlite3.DatabaseError as exc:
        raise ConfigurationError(f"{path!r} is not a usable SQLite database: {exc}") from None
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection) -> set[str]:
    """The report log table's columns (empty when the table does not exist)."""
    rows = conn.execute("PRAGMA table_info(trustgate_reports)").fetchall()
    return {r[1].decode() if isinstance(r[1], bytes) else str(r[1]) for r in rows}


def _add_seal_columns(conn: sqlite3.Connection) -> None:
    """The write path's migration: a table made before rows were sealed gets the
    seal columns (its old rows stay unsealed). Two processes may race: the loser's
    ``duplicate column`` is the winner's work."""
    for name in _SEAL_COLUMNS:
        if name in _columns(conn):
            continue
        try:
            conn.execute(f"ALTER TABLE trustgate_reports ADD COLUMN {name} TEXT")
            logger.info("added the %s column to the report log", name)
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc).lower():
                raise


def sqlite_read_only(path: str) -> sqlite3.Connection:
    """A connection that cannot write: ``mode=ro``, ``query_only``, no ``journal_mode``.

    Errors are a ``ConfigurationError`` naming the file (missing, not a database).
    """
    if not os.path.exists(path):
        raise ConfigurationError(f"no trustgate database at {path!r}")
    uri = "file:" + urllib.parse.quote(os.fsencode(os.path.abspath(path))) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot open SQLite database {path!r}: {exc}") from None
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA schema_version").fetchone()  # reads the header: is it a database?
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ConfigurationError(f"{path!r} is not a usable SQLite database: {exc}") from None
    return conn


class SqliteReportHistory(ReportHistory):
    """The report log in a SQLite file (its own autocommit connection).

    ``key``: what rows are sealed and verified under; a file is read by other
    processes and after a restart, so without ``key=``, ``TRUSTGATE_LEDGER_KEY`` or
    ``TRUSTGATE_LEDGER_KEY_FILE`` this is a :class:`~trustgate.errors.LedgerKeyError`.
    ``read_only=True`` opens an existing log for reading only (no table is created or
    altered; see the module docstring).

    Example:
        ```python
        from langgraph.checkpoint.sqlite import SqliteSaver
        from trustgate.persistence import ReportingSaver, SqliteReportHistory

        log = SqliteReportHistory("reports.db")
        saver = ReportingSaver(SqliteSaver(conn), log)
        ```
    """

    backend: ClassVar[str] = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        key: KeyArg = None,
        read_only: bool = False,
        allow_readable_key_file: bool = False,
    ) -> None:
        self.path = str(path)
        if read_only and not os.path.exists(self.path):
            raise ConfigurationError(f"no trustgate database at {self.path!r}")
        super().__init__(
            key=key,
            required_for=None if self.path == ":memory:" else f"the SQLite database {self.path!r}",
            allow_readable_key_file=allow_readable_key_file,
        )
        self.read_only = read_only
        if read_only:
            self._conn = sqlite_read_only(self.path)
            try:
                found = _columns(self._conn)
            except sqlite3.DatabaseError as exc:
                self._conn.close()
                raise ConfigurationError(
                    f"{self.path!r} is not a usable SQLite database: {exc}"
                ) from None
            if not found:
                self._conn.close()
                raise ConfigurationError(
                    f"{self.path!r} holds no trustgate report log (no trustgate_reports table)"
                )
            self._sealed_columns = set(_SEAL_COLUMNS) <= found
        else:
            prepare_sqlite(self.path)
            self._conn = sqlite_conn(self.path, autocommit=True)
            self._sealed_columns = True
        # rows are decoded by the log itself, so one row that is not UTF-8 is one
        # unreadable row, not a failed query
        self._conn.text_factory = bytes
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def count(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT count(*) FROM trustgate_reports").fetchone()
        return int(row[0])

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        if self.read_only:
            raise read_only_insert(repr(self.path))
        params = [
            (
                *r[:6],
                int(r.released),
                sqlite_time(r.started_at),
                sqlite_time(r.finished_at),
                r.body,
                r.key_id,
                r.seal,
            )
            for r in rows
        ]
        with self._lock:
            before = self._conn.total_changes
            self._conn.executemany(_INSERT, params)
            return self._conn.total_changes - before

    def _existing(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        with self._lock:
            for i in range(0, len(ids), _CHUNK):
                chunk = list(ids[i : i + _CHUNK])
                marks = ", ".join("?" * len(chunk))
                cur = self._conn.execute(
                    f"SELECT id FROM trustgate_reports WHERE id IN ({marks})", chunk
                )
                found.update(_decoded(row[0]) for row in cur.fetchall())
        return found

    def _select(
        self, thread: str | None, gate: str | None, since: datetime | None, limit: int | None
    ) -> list[tuple[Any, ...]]:
        sql, params = select_sql(
            "?",
            thread,
            gate,
            None if since is None else sqlite_time(since),
            limit,
            sealed_columns=self._sealed_columns,
        )
        with self._lock:
            return [tuple(row) for row in self._conn.execute(sql, params).fetchall()]


def _decoded(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def connect_sqlite(target: str, key: SealKey) -> Persistence:
    """The sync SQLite persistence (see :func:`~trustgate.persistence.connect`)."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.sqlite import SqliteStore

    log = SqliteReportHistory(target, key=key)  # creates the file and the log's table
    saver_conn = sqlite_conn(target, autocommit=False)
    store_conn = sqlite_conn(target, autocommit=True)
    saver = SqliteSaver(saver_conn)
    saver.setup()
    store = SqliteStore(store_conn)
    store.setup()
    ledger = SqliteLedger(target, key=key)
    logger.debug("connected to SQLite database %s", target)
    return Persistence(
        backend="sqlite",
        url=target,
        checkpointer=ReportingSaver(saver, log),
        store=store,
        ledger=ledger,
        report_log=log,
        closers=[saver_conn.close, store_conn.close, log.close, ledger.close],
    )


async def aconnect_sqlite(target: str, key: SealKey) -> AsyncPersistence:
    """The async SQLite persistence (see :func:`~trustgate.persistence.aconnect`)."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.store.sqlite import AsyncSqliteStore

    log = SqliteReportHistory(target, key=key)
    saver_conn = await aiosqlite.connect(target)
    store_conn = await aiosqlite.connect(target, isolation_level=None)
    for c in (saver_conn, store_conn):
        await c.execute("PRAGMA busy_timeout=30000")
    saver = AsyncSqliteSaver(saver_conn)
    await saver.setup()
    store = AsyncSqliteStore(store_conn)
    await store.setup()
    ledger = SqliteLedger(target, key=key)
    logger.debug("connected (async) to SQLite database %s", target)
    return AsyncPersistence(
        backend="sqlite",
        url=target,
        checkpointer=ReportingSaver(saver, log),
        store=store,
        ledger=ledger,
        report_log=log,
        closers=[log.close, ledger.close],
        aclosers=[saver_conn.close, store_conn.close],
    )


def open_sqlite_report_log(
    target: str, *, key: KeyArg = None, allow_readable_key_file: bool = False
) -> SqliteReportHistory:
    """Just the report log of an existing database file, read-only (``trustgate history``)."""
    return SqliteReportHistory(
        target, key=key, read_only=True, allow_readable_key_file=allow_readable_key_file
    )
