"""PostgreSQL: many worker processes sharing one database (imported only for postgresql://).

The checkpointer is LangGraph's own ``PostgresSaver`` / ``AsyncPostgresSaver``,
wrapped by :class:`~trustgate.persistence.ReportingSaver`; the report log writes
through the same connection pool (the async log through the async pool, so the
event loop never waits on a blocking call). Schema creation, LangGraph's and ours,
is serialised across workers with an advisory lock, and runs only on the write path:
the log a read command opens (``trustgate history``) connects with
``default_transaction_read_only=on`` and runs no DDL, so a table from before rows were
sealed is read as it is (its rows unsealed) and migrated by the next ``connect()``.
Every pool is bounded (connect and statement timeouts, a client deadline, keepalives,
the pool's wait: :mod:`trustgate.persistence._pglimits`), so a frozen server is an
error, not a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, ClassVar

from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from trustgate.errors import ConfigurationError
from trustgate.evidence.keys import KeyArg, SealKey
from trustgate.evidence.ledger_postgres import (
    SCHEMA_LOCK,
    PostgresLedger,
    open_pool,
    pg_setup,
)
from trustgate.persistence._log import ReportHistory, ReportRow, read_only_insert, select_sql
from trustgate.persistence._persistence import AsyncPersistence, Persistence
from trustgate.persistence._pglimits import PgTarget, open_async_pool, pg_target
from trustgate.persistence._pglimits import open_pool as open_bounded_pool
from trustgate.persistence._saver import ReportingSaver
from trustgate.persistence._urls import redact

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
    body TEXT NOT NULL,
    key_id TEXT,
    seal TEXT
);
ALTER TABLE trustgate_reports ADD COLUMN IF NOT EXISTS key_id TEXT;
ALTER TABLE trustgate_reports ADD COLUMN IF NOT EXISTS seal TEXT;
CREATE INDEX IF NOT EXISTS trustgate_reports_thread ON trustgate_reports (thread_id, finished_at);
CREATE INDEX IF NOT EXISTS trustgate_reports_gate ON trustgate_reports (gate, finished_at)
"""

# One statement per batch: unnest() turns the column arrays into rows.
_INSERT = (
    "INSERT INTO trustgate_reports (id, thread_id, checkpoint_ns, gate, node, decision, "
    "released, started_at, finished_at, body, key_id, seal) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
    "%s::text[], %s::boolean[], %s::timestamptz[], %s::timestamptz[], %s::text[], "
    "%s::text[], %s::text[]) "
    # the same crossing delivered again (at-least-once) replaces its first delivery's
    # row with the report that counts the deliveries; anything else is kept as it was
    "ON CONFLICT (id) DO UPDATE SET body = excluded.body, key_id = excluded.key_id, "
    "seal = excluded.seal WHERE coalesce((excluded.body::jsonb->>'deliveries')::int, 1) > "
    "coalesce((trustgate_reports.body::jsonb->>'deliveries')::int, 1)"
)
_EXISTING = "SELECT id FROM trustgate_reports WHERE id = ANY(%s)"
_EXISTS = "SELECT to_regclass('trustgate_reports') IS NOT NULL"
_NO_ROWS = "SELECT * FROM trustgate_reports LIMIT 0"  # its description names the columns


def _columns(rows: Sequence[ReportRow]) -> list[list[Any]]:
    return [list(col) for col in zip(*rows, strict=True)]


class PostgresReportHistory(ReportHistory):
    """The report log in PostgreSQL, through a psycopg pool (and an async one).

    ``pool``: a ``psycopg_pool.ConnectionPool`` in autocommit mode, or a URL (then
    the log owns its pool). ``apool``: an ``AsyncConnectionPool`` the async writes
    use; without one they run the sync pool in a worker thread. ``setup=False``
    when the caller already created the table. ``key``: what rows are sealed and
    verified under; every worker needs the same one, so without ``key=``,
    ``TRUSTGATE_LEDGER_KEY`` or ``TRUSTGATE_LEDGER_KEY_FILE`` this is a
    :class:`~trustgate.errors.LedgerKeyError`. ``read_only=True`` (a URL only) reads
    an existing log over read-only connections and never runs DDL.
    """

    backend: ClassVar[str] = "postgres"

    def __init__(
        self,
        pool: ConnectionPool[Any] | str,
        apool: AsyncConnectionPool[Any] | None = None,
        *,
        setup: bool = True,
        key: KeyArg = None,
        read_only: bool = False,
        allow_readable_key_file: bool = False,
    ) -> None:
        super().__init__(
            key=key,
            required_for="the PostgreSQL report log",
            allow_readable_key_file=allow_readable_key_file,
        )
        if read_only and not isinstance(pool, str):
            raise ConfigurationError("a read-only PostgresReportHistory opens its own pool (a URL)")
        self.read_only = read_only
        self._where = redact(pool) if isinstance(pool, str) else "PostgreSQL"
        self._owned = isinstance(pool, str)
        self._pool: ConnectionPool[Any] = (
            open_pool(pool, max_size=2, name="trustgate-reports", read_only=read_only)
            if isinstance(pool, str)
            else pool
        )
        self._apool = apool
        self._sealed_columns = True
        try:
            if read_only:
                found = self._table_columns()
                if not found:
                    raise ConfigurationError(
                        f"the database at {self._where} holds no trustgate report log "
                        "(no trustgate_reports table)"
                    )
                self._sealed_columns = {"key_id", "seal"} <= found
            elif setup:
                with self._pool.connection() as c:
                    pg_setup(c, PG_REPORTS_SCHEMA)
        except BaseException:
            self.close()
            raise

    def _table_columns(self) -> set[str]:
        """The log table's columns, as the queries will see it (empty when absent)."""
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute(_EXISTS)
            row = cur.fetchone()
            if not (row and row[0]):
                return set()
            cur.execute(_NO_ROWS)
            return {col.name for col in cur.description or ()}

    def close(self) -> None:
        if self._owned:
            self._pool.close()

    def count(self) -> int:
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute("SELECT count(*) FROM trustgate_reports")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        if self.read_only:
            raise read_only_insert(self._where)
        with self._pool.connection() as c, c.cursor() as cur:
            cur.execute(_INSERT, _columns(rows))
            return int(max(cur.rowcount, 0))

    def _existing(self, ids: Sequence[str]) -> set[str]:
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute(_EXISTING, (list(ids),))
            return {row[0] for row in cur.fetchall()}

    async def _ainsert(self, rows: Sequence[ReportRow]) -> int:
        if self.read_only:
            raise read_only_insert(self._where)
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
    ) -> list[tuple[Any, ...]]:
        sql, params = select_sql(
            "%s", thread, gate, since, limit, sealed_columns=self._sealed_columns
        )
        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, tuple(params))
            return [tuple(row) for row in cur.fetchall()]


def connect_postgres(target: PgTarget, key: SealKey) -> Persistence:
    """The sync PostgreSQL persistence (see :func:`~trustgate.persistence.connect`)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    url = target.url
    pool = open_bounded_pool(target, max_size=8)
    try:
        _migrate(pool)
        log = PostgresReportHistory(pool, key=key)
        saver = PostgresSaver(pool)
        store = PostgresStore(pool)
        ledger = PostgresLedger(pool, key=key)
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


async def aconnect_postgres(target: PgTarget, key: SealKey) -> AsyncPersistence:
    """The async PostgreSQL persistence (see :func:`~trustgate.persistence.aconnect`)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore

    # Tables (LangGraph's and ours) are created through the sync path once, under
    # the schema lock, in a worker thread so the event loop is not blocked; the
    # async pool then only reads and writes.
    url = target.url

    def sync_part() -> tuple[ConnectionPool[Any], PostgresLedger]:
        pool = open_bounded_pool(target, max_size=2, name="trustgate-sync")
        try:
            _migrate(pool)
            with pool.connection() as c:
                pg_setup(c, PG_REPORTS_SCHEMA)
            return pool, PostgresLedger(pool, key=key)
        except BaseException:
            pool.close()
            raise

    sync_pool, ledger = await asyncio.to_thread(sync_part)
    try:
        apool = await open_async_pool(target, max_size=8, name="trustgate-async")
    except BaseException:
        sync_pool.close()
        raise
    log = PostgresReportHistory(sync_pool, apool, setup=False, key=key)
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
def open_pg_report_log(
    url: str, *, key: KeyArg = None, allow_readable_key_file: bool = False
) -> Iterator[PostgresReportHistory]:
    """Just the report log, read-only (what ``trustgate history`` reads)."""
    log = PostgresReportHistory(
        url, key=key, read_only=True, allow_readable_key_file=allow_readable_key_file
    )
    try:
        yield log
    finally:
        log.close()
