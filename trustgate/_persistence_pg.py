"""PostgreSQL side of :mod:`trustgate.persistence` (imported only for postgresql:// URLs).

The checkpointers here are LangGraph's ``PostgresSaver`` / ``AsyncPostgresSaver``
with one addition: ``put`` logs the reports of the checkpoint's ``trust_reports``
channel into ``trustgate_reports`` in the same transaction as the checkpoint row
(see :mod:`trustgate.persistence` for why). They hook ``_cursor(pipeline=True)``,
the single cursor ``put``/``aput`` write through in langgraph-checkpoint-postgres
3.x; ``tests/test_persistence.py`` pins that behaviour.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncCursor, Cursor
from psycopg.rows import DictRow, dict_row, tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from trustgate.errors import ConfigurationError
from trustgate.evidence.ledger_postgres import (
    SCHEMA_LOCK,
    PostgresLedger,
    open_pool,
    pg_setup,
    redact,
)
from trustgate.persistence import (
    _PENDING,
    PG_INSERT_REPORTS,
    PG_REPORTS_SCHEMA,
    AsyncPersistence,
    Persistence,
    ReportHistory,
    _ReportRows,
    joining_reports,
)

__all__ = [
    "LoggingAsyncPostgresSaver",
    "LoggingPostgresSaver",
    "aconnect_postgres",
    "connect_postgres",
    "open_pg_report_log",
]


class LoggingPostgresSaver(PostgresSaver):
    """``PostgresSaver`` whose checkpoint transaction also logs the crossing reports."""

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self._report_rows = _ReportRows("postgres")

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with joining_reports(self, self._report_rows, config, checkpoint, new_versions):
            return super().put(config, checkpoint, metadata, new_versions)

    @contextlib.contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        rows = _PENDING.get() if pipeline else None
        with super()._cursor(pipeline=pipeline) as cur:
            if not rows:
                yield cur
                return
            with cur.connection.transaction():
                cur.executemany(PG_INSERT_REPORTS, rows)
                rows.written = True
                yield cur


class LoggingAsyncPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` whose checkpoint transaction also logs the crossing reports."""

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self._report_rows = _ReportRows("postgres")

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with joining_reports(self, self._report_rows, config, checkpoint, new_versions):
            return await super().aput(config, checkpoint, metadata, new_versions)

    @contextlib.asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        rows = _PENDING.get() if pipeline else None
        async with super()._cursor(pipeline=pipeline) as cur:
            if not rows:
                yield cur
                return
            async with cur.connection.transaction():
                await cur.executemany(PG_INSERT_REPORTS, rows)
                rows.written = True
                yield cur


def _pg_history(pool: ConnectionPool[Any]) -> ReportHistory:
    def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, tuple(params))
            return list(cur.fetchall())

    return ReportHistory("postgres", query)


def _setup_reports(pool: ConnectionPool[Any]) -> None:
    with pool.connection() as c:
        pg_setup(c, PG_REPORTS_SCHEMA)


def connect_postgres(url: str) -> Persistence:
    """The sync PostgreSQL persistence (see :func:`trustgate.connect`)."""
    from langgraph.store.postgres import PostgresStore

    pool = open_pool(url, max_size=8)
    try:
        _migrate(pool)
        checkpointer = LoggingPostgresSaver(pool)
        store = PostgresStore(pool)
        _setup_reports(pool)
        ledger = PostgresLedger(pool)
    except BaseException:
        pool.close()
        raise
    return Persistence(
        backend="postgres",
        url=url,
        checkpointer=checkpointer,
        store=store,
        ledger=ledger,
        report_log=_pg_history(pool),
        closers=[pool.close],
    )


async def aconnect_postgres(url: str) -> AsyncPersistence:
    """The async PostgreSQL persistence (see :func:`trustgate.aconnect`)."""
    from langgraph.store.postgres.aio import AsyncPostgresStore

    # Tables (LangGraph's and ours) are created through the sync path once, under
    # the schema lock, in a worker thread so the event loop is not blocked; the
    # async pool then only reads and writes.
    def sync_part() -> tuple[ConnectionPool[Any], PostgresLedger]:
        pool = open_pool(url, max_size=2, name="trustgate-sync")
        try:
            _migrate(pool)
            _setup_reports(pool)
            return pool, PostgresLedger(pool)
        except BaseException:
            pool.close()
            raise

    sync_pool, ledger = await asyncio.to_thread(sync_part)
    apool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=8,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
        name="trustgate-async",
    )
    try:
        await apool.open(wait=True, timeout=15)
    except BaseException as exc:
        sync_pool.close()
        await apool.close()
        if isinstance(exc, PoolTimeout):
            raise ConfigurationError(f"cannot connect to PostgreSQL at {redact(url)}") from exc
        raise
    return AsyncPersistence(
        backend="postgres",
        url=url,
        checkpointer=LoggingAsyncPostgresSaver(apool),
        store=AsyncPostgresStore(apool),
        ledger=ledger,
        report_log=_pg_history(sync_pool),
        closers=[sync_pool.close],
        aclosers=[apool.close],
    )


def _migrate(pool: ConnectionPool[Any]) -> None:
    """LangGraph's checkpoint and store migrations, serialised across workers."""
    from langgraph.store.postgres import PostgresStore

    with pool.connection() as c:
        c.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
        try:
            PostgresSaver(c).setup()
            PostgresStore(c).setup()
        finally:
            c.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


@contextlib.contextmanager
def open_pg_report_log(url: str) -> Iterator[ReportHistory]:
    """Just the report log (what ``trustgate history`` reads)."""
    pool = open_pool(url, max_size=1, name="trustgate-history")
    try:
        _setup_reports(pool)
        yield _pg_history(pool)
    finally:
        pool.close()
