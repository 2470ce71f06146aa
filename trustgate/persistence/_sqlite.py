"""SQLite: the default database, one file for checkpoints, store, ledger and report log.

The checkpointer is LangGraph's own ``SqliteSaver`` / ``AsyncSqliteSaver``, wrapped
by :class:`~trustgate.persistence.ReportingSaver`; the report log has its own
autocommit connection to the same file (WAL mode, so readers never block the
saver, and a 30 s busy timeout for processes sharing the file).

Times are stored as fixed-width UTC text so that SQLite compares them correctly
as strings (``--since``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from trustgate.errors import ConfigurationError
from trustgate.evidence.ledger import SqliteLedger
from trustgate.persistence._log import ReportHistory, ReportRow, select_sql
from trustgate.persistence._saver import ReportingSaver

if TYPE_CHECKING:
    from trustgate.persistence._database import AsyncPersistence, Persistence

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
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trustgate_reports_thread ON trustgate_reports (thread_id, finished_at);
CREATE INDEX IF NOT EXISTS trustgate_reports_gate ON trustgate_reports (gate, finished_at);
"""

_INSERT = (
    "INSERT INTO trustgate_reports (id, thread_id, checkpoint_ns, gate, node, decision, "
    "released, started_at, finished_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(id) DO NOTHING"
)
_CHUNK = 500  # ids per IN (...) probe, well under SQLite's variable limit


def sqlite_time(when: datetime) -> str:
    """Fixed-width UTC text, so SQLite compares times as strings correctly."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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
    except sqlite3.DatabaseError as exc:
        raise ConfigurationError(f"{path!r} is not a usable SQLite database: {exc}") from None
    finally:
        conn.close()


class SqliteReportHistory(ReportHistory):
    """The report log in a SQLite file (its own autocommit connection).

    Example:
        ```python
        from langgraph.checkpoint.sqlite import SqliteSaver
        from trustgate.persistence import ReportingSaver, SqliteReportHistory

        log = SqliteReportHistory("reports.db")
        saver = ReportingSaver(SqliteSaver(conn), log)
        ```
    """

    backend: ClassVar[str] = "sqlite"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = str(path)
        prepare_sqlite(self.path)
        self._conn = sqlite_conn(self.path, autocommit=True)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def count(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT count(*) FROM trustgate_reports").fetchone()
        return int(row[0])

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        params = [
            (*r[:6], int(r.released), sqlite_time(r.started_at), sqlite_time(r.finished_at), r.body)
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
                found.update(row[0] for row in cur.fetchall())
        return found

    def _select(
        self, thread: str | None, gate: str | None, since: datetime | None, limit: int | None
    ) -> list[str]:
        sql, params = select_sql(
            "?", thread, gate, None if since is None else sqlite_time(since), limit
        )
        with self._lock:
            return [row[0] for row in self._conn.execute(sql, params).fetchall()]


def connect_sqlite(target: str) -> Persistence:
    """The sync SQLite persistence (see :func:`~trustgate.persistence.connect`)."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.sqlite import SqliteStore

    from trustgate.persistence._database import Persistence

    log = SqliteReportHistory(target)  # creates the file and the log's table
    saver_conn = sqlite_conn(target, autocommit=False)
    store_conn = sqlite_conn(target, autocommit=True)
    saver = SqliteSaver(saver_conn)
    saver.setup()
    store = SqliteStore(store_conn)
    store.setup()
    ledger = SqliteLedger(target)
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


async def aconnect_sqlite(target: str) -> AsyncPersistence:
    """The async SQLite persistence (see :func:`~trustgate.persistence.aconnect`)."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.store.sqlite import AsyncSqliteStore

    from trustgate.persistence._database import AsyncPersistence

    log = SqliteReportHistory(target)
    saver_conn = await aiosqlite.connect(target)
    store_conn = await aiosqlite.connect(target, isolation_level=None)
    for c in (saver_conn, store_conn):
        await c.execute("PRAGMA busy_timeout=30000")
    saver = AsyncSqliteSaver(saver_conn)
    await saver.setup()
    store = AsyncSqliteStore(store_conn)
    await store.setup()
    ledger = SqliteLedger(target)
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


def open_sqlite_report_log(target: str) -> SqliteReportHistory:
    """Just the report log of an existing database file (``trustgate history``)."""
    if not Path(target).exists():
        raise ConfigurationError(f"no trustgate database at {target!r}")
    return SqliteReportHistory(target)
