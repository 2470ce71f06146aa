"""PostgreSQL: many worker processes sharing one database (imported only for postgresql://).

The checkpointer is LangGraph's own ``PostgresSaver`` / ``AsyncPostgresSaver``,
wrapped by :class:`~trustgate.persistence.ReportingSaver`; the report log writes
through the same connection pool (the async log through the async pool, so the
event loop never waits on a blocking call). Schema creation, LangGraph's and ours,
is serialised across workers with an advisory lock. Every pool is bounded (connect and
statement timeouts, a client deadline, keepalives, the pool's wait:
:mod:`trustgate.persistence._pglimits`), so a frozen server is an error, not a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from trustgate.evidence.ledger_postgres import SCHEMA_LOCK, PostgresLedger, pg_setup, redact
from trustgate.persistence._log import ReportHistory, ReportRow, select_sql
from trustgate.persistence._pglimits import PgTarget, open_async_pool, open_pool, pg_target
from trustgate.persistence._saver import ReportingSaver

if TYPE_CHECKING:
    from trustgate.persistence._database import AsyncPersistence, Persistence

__all__ = [
    "PG_REPORTS_SCHEMA",
    "PostgresReportHistory",
    "aconnect_postgres",
    "connect_postgres",
    "open_pg_report_log",
    "pg_target",
]

logger = logging.getLogger(__name__)

PG_REPORTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS trustgate_reports (
    id TEXT PRIMARY KEY,
    thread_id TEXT,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    gate TEXT NOT NULL,
    node TEXT NOT NULL,
    decision TEXT NOT NULL,
    released BOOLEAN NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trustgate_reports_thread ON trustgate_reports (thread_id, finished_at);
CREATE INDEX IF NOT EXISTS trustgate_reports_gate ON trustgate_reports (gate, finished_at)
"""

# One statement per batch: unnest() turns the column arrays into rows.
_INSERT = (
    "INSERT INTO trustgate_reports (id, thread_id, checkpoint_ns, gate, node, decision, "
    "released, started_at, finished_at, body) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
    "%s::text[], %s::boolean[], %s::timestamptz[], %s::timestamptz[], %s::text[]) "
    "ON CONFLICT (id) DO NOTHING"
)
_EXISTING = "SELECT id FROM trustgate_reports WHERE id = ANY(%s)"


def _columns(rows: Sequence[ReportRow]) -> list[list[Any]]:
    return [list(col) for col in zip(*rows, strict=True)]


class PostgresReportHistory(ReportHistory):
    """The report log in PostgreSQL, through a psycopg pool (and an async one).

    ``pool``: a ``psycopg_pool.ConnectionPool`` in autocommit mode, or a URL (then
    the log owns its pool). ``apool``: an ``AsyncConnectionPool`` the async writes
    use; without one they run the sync pool in a worker thread. ``setup=False``
    when the caller already created the table.
    """

    backend: ClassVar[str] = "postgres"

    def __init__(
        self,
        pool: ConnectionPool[Any] | str,
        apool: AsyncConnectionPool[Any] | None = None,
        *,
        setup: bool = True,
    ) -> None:
        super().__init__()
        self._owned = isinstance(pool, str)
        self._pool: ConnectionPool[Any] = (
            open_pool(pool, max_size=2, name="trustgate-reports") if isinstance(pool, str) else pool
        )
        self._apool = apool
        if setup:
            with self._pool.connection() as c:
                pg_setup(c, PG_REPORTS_SCHEMA)

    def close(self) -> None:
        if self._owned:
            self._pool.close()

    def count(self) -> int:
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute("SELECT count(*) FROM trustgate_reports")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        with self._pool.connection() as c, c.cursor() as cur:
            cur.execute(_INSERT, _columns(rows))
            return int(max(cur.rowcount, 0))

    def _existing(self, ids: Sequence[str]) -> set[str]:
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute(_EXISTING, (list(ids),))
            return {row[0] for row in cur.fetchall()}

    async def _ainsert(self, rows: Sequence[ReportRow]) -> int:
        if self._apool is None:
            return await super()._ainsert(rows)
        async with self._apool.connection() as c, c.cursor() as cur:
            await cur.execute(_INSERT, _columns(rows))
            return int(max(cur.rowcount, 0))

    async def _aexisting(self, ids: Sequence[str]) -> set[str]:
        if self._apool is None:
            return await super()._aexisting(ids)
        async with self._apool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            await cur.execute(_EXISTING, (list(ids),))
            return {row[0] for row in await cur.fetchall()}

    def _select(
        self, thread: str | None, gate: str | None, since: datetime | None, limit: int | None
    ) -> list[str]:
        sql, params = select_sql("%s", thread, gate, since, limit)
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, tuple(params))
            return [row[0] for row in cur.fetchall()]


def connect_postgres(target: PgTarget) -> Persistence:
    """The sync PostgreSQL persistence (see :func:`~trustgate.persistence.connect`)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    from trustgate.persistence._database import Persistence

    url = target.url
    pool = open_pool(target, max_size=8)
    try:
        _migrate(pool)
        log = PostgresReportHistory(pool)
        saver = PostgresSaver(pool)
        store = PostgresStore(pool)
        ledger = PostgresLedger(pool)
    except BaseException:
        pool.close()
        raise
    logger.debug("connected to PostgreSQL at %s", redact(url))
    return Persistence(
        backend="postgres",
        url=url,
        checkpointer=ReportingSaver(saver, log),
        store=store,
        ledger=ledger,
        report_log=log,
        closers=[pool.close],
    )


async def aconnect_postgres(target: PgTarget) -> AsyncPersistence:
    """The async PostgreSQL persistence (see :func:`~trustgate.persistence.aconnect`)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore

    from trustgate.persistence._database import AsyncPersistence

    # Tables (LangGraph's and ours) are created through the sync path once, under
    # the schema lock, in a worker thread so the event loop is not blocked; the
    # async pool then only reads and writes.
    url = target.url

    def sync_part() -> tuple[ConnectionPool[Any], PostgresLedger]:
        pool = open_pool(target, max_size=2, name="trustgate-sync")
        try:
            _migrate(pool)
            with pool.connection() as c:
                pg_setup(c, PG_REPORTS_SCHEMA)
            return pool, PostgresLedger(pool)
        except BaseException:
            pool.close()
            raise

    sync_pool, ledger = await asyncio.to_thread(sync_part)
    try:
        apool = await open_async_pool(target, max_size=8, name="trustgate-async")
    except BaseException:
        sync_pool.close()
        raise
    log = PostgresReportHistory(sync_pool, apool, setup=False)
    logger.debug("connected (async) to PostgreSQL at %s", redact(url))
    return AsyncPersistence(
        backend="postgres",
        url=url,
        checkpointer=ReportingSaver(AsyncPostgresSaver(apool), log),
        store=AsyncPostgresStore(apool),
        ledger=ledger,
        report_log=log,
        closers=[sync_pool.close],
        aclosers=[apool.close],
    )


def _migrate(pool: ConnectionPool[Any]) -> None:
    """LangGraph's checkpoint and store migrations, serialised across workers."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    with pool.connection() as c:
        c.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
        try:
            PostgresSaver(c).setup()
            PostgresStore(c).setup()
        finally:
            c.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


@contextlib.contextmanager
def open_pg_report_log(url: str) -> Iterator[PostgresReportHistory]:
    """Just the report log (what ``trustgate history`` reads)."""
    log = PostgresReportHistory(url)
    try:
        yield log
    finally:
        log.close()
