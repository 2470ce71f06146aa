"""One database for everything a guarded graph keeps: checkpoints, store, ledger, reports.

``trustgate.connect()`` returns LangGraph's own checkpointer and store for the
configured database (SQLite under ``.trustgate/`` by default, PostgreSQL when the
URL says ``postgresql://``), already set up, together with the artifact ledger and
the report log on the same database. Scale-out is then what LangGraph users already
do: many worker processes, one PostgreSQL.

Why the report log is written by the checkpointer
--------------------------------------------------
A crossing's :class:`~trustgate.report.Report` lands in the ``trust_reports``
channel; the checkpoint that carries it is the moment the crossing becomes part of
the run. The checkpointers returned here insert the reports of that channel into
``trustgate_reports`` *inside the same transaction* as the checkpoint row, keyed on
the report id with ``ON CONFLICT DO NOTHING``. So:

* a worker killed in the middle of a gate wrote neither; the resumed run re-runs the
  gate and logs its one report — nothing lost, nothing duplicated;
* a worker killed after the commit wrote both;
* re-reading the cumulative channel later never duplicates (the id is the key).

A report *listener* (``trustgate.gate.add_report_listener``) could not give that:
it fires when the gate decides, before the checkpoint, so a kill between the two
would log a report for a crossing the run then repeats under a new report id.

Example:
    ```python
    import trustgate
    from trustgate.persistence import connect

    with connect() as db:                      # or connect("postgresql://...")
        app = trustgate.guard(builder, gates).compile(
            checkpointer=db.checkpointer, store=db.store
        )
        app.invoke(inputs, {"configurable": {"thread_id": "t1"}})
        for report in db.history(thread="t1"):
            print(report.gate, report.decision, [str(f) for f in report.failed])
    ```
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import sqlite3
import threading
from collections.abc import Generator, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from trustgate._meta import install_hint
from trustgate._report import REPORTS_KEY, Report
from trustgate.errors import ConfigurationError, InputError, LangGraphCompatibilityError
from trustgate.evidence.ledger import ArtifactLedger, SqliteLedger

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.store.base import BaseStore

__all__ = [
    "DEFAULT_DATABASE",
    "ENV_VAR",
    "AsyncPersistence",
    "Backend",
    "Persistence",
    "ReportHistory",
    "aconnect",
    "connect",
    "history",
    "parse_since",
    "resolve_url",
]

ENV_VAR = "TRUSTGATE_DATABASE_URL"
DEFAULT_DATABASE = ".trustgate/trustgate.db"

Backend = Literal["sqlite", "postgres"]

ReportRow = tuple[str, str | None, str, str, str, str, bool, Any, Any, str]

# -- the report log ----------------------------------------------------------------

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

_COLUMNS = (
    "id, thread_id, checkpoint_ns, gate, node, decision, released, started_at, finished_at, body"
)
SQLITE_INSERT_REPORTS = (
    f"INSERT INTO trustgate_reports ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(id) DO NOTHING"
)
PG_INSERT_REPORTS = (
    f"INSERT INTO trustgate_reports ({_COLUMNS}) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
)


def _sqlite_time(when: datetime) -> str:
    """Fixed-width UTC text, so SQLite compares times as strings correctly."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _report_id(item: Any) -> Any:
    return item.get("id") if isinstance(item, dict) else getattr(item, "id", None)


class _ReportRows:
    """Turns a checkpoint's ``trust_reports`` channel into rows not yet logged."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._logged: set[str] = set()
        self._lock = threading.Lock()

    def rows(
        self, config: RunnableConfig, checkpoint: Checkpoint, new_versions: ChannelVersions
    ) -> list[ReportRow]:
        if REPORTS_KEY not in new_versions:
            return []
        value = checkpoint.get("channel_values", {}).get(REPORTS_KEY)
        if not isinstance(value, list) or not value:
            return []
        configurable = config.get("configurable", {})
        thread = configurable.get("thread_id")
        ns = str(configurable.get("checkpoint_ns") or "")
        with self._lock:  # the channel is cumulative: skip what this saver already logged
            fresh = [item for item in value if _report_id(item) not in self._logged]
        out: list[ReportRow] = []
        for item in fresh:
            report = Report.coerce(item)
            started: Any = report.started_at
            finished: Any = report.finished_at
            if self.backend == "sqlite":
                started, finished = _sqlite_time(started), _sqlite_time(finished)
            out.append(
                (
                    report.id,
                    report.thread_id or (str(thread) if thread is not None else None),
                    report.checkpoint_ns or ns,
                    report.gate,
                    report.node,
                    report.decision,
                    report.released,
                    started,
                    finished,
                    report.model_dump_json(),
                )
            )
        return out

    def committed(self, rows: Sequence[ReportRow]) -> None:
        with self._lock:
            if len(self._logged) > 100_000:
                self._logged.clear()
            self._logged.update(r[0] for r in rows)


class PendingRows(list[ReportRow]):
    """Report rows waiting to join the current put()'s checkpoint transaction.

    ``written`` is set by the cursor hook that inserts them. A put() that returns with
    rows still unwritten means the saver no longer writes through the hooked cursor
    (its internals changed): that raises instead of silently losing reports.
    """

    written: bool = False


def check_rows_written(rows: PendingRows, saver: object) -> None:
    if rows and not rows.written:
        raise LangGraphCompatibilityError(
            f"{type(saver).__mro__[1].__name__} no longer writes checkpoints through the "
            "cursor trustgate hooks, so crossing reports would not be logged; this "
            "langgraph-checkpoint version is not supported"
        )


@contextlib.contextmanager
def joining_reports(
    saver: object,
    source: _ReportRows,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
) -> Iterator[None]:
    """Around a saver's put(): hand the checkpoint's report rows to the hooked cursor.

    After a successful put the rows must have been written in its transaction
    (:func:`check_rows_written`); then they are remembered as logged.
    """
    rows = PendingRows(source.rows(config, checkpoint, new_versions))
    token = _PENDING.set(rows)
    try:
        yield
    finally:
        _PENDING.reset(token)
    check_rows_written(rows, saver)
    source.committed(rows)


# Rows waiting for the checkpoint write of the current put() to join its transaction.
_PENDING: contextvars.ContextVar[PendingRows | None] = contextvars.ContextVar(
    "trustgate_pending_reports", default=None
)


class LoggingSqliteSaver(SqliteSaver):
    """``SqliteSaver`` that logs the checkpoint's reports in the checkpoint's transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._report_rows = _ReportRows("sqlite")

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
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with super().cursor(transaction) as cur:
            yield cur
            rows = _PENDING.get()
            if rows and transaction:  # before the commit in SqliteSaver.cursor
                cur.executemany(SQLITE_INSERT_REPORTS, rows)
                rows.written = True


class LoggingAsyncSqliteSaver(AsyncSqliteSaver):
    """``AsyncSqliteSaver`` that logs the checkpoint's reports in the checkpoint's commit.

    When there are reports to log, ``aput`` writes the checkpoint row itself (the
    same statement as ``AsyncSqliteSaver.aput`` in langgraph-checkpoint-sqlite 3.x)
    and the report rows under one lock and one commit: the async saver's lock is
    not re-entrant, so the two cannot be joined by calling ``super().aput``.
    """

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self._report_rows = _ReportRows("sqlite")

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        rows = self._report_rows.rows(config, checkpoint, new_versions)
        if not rows:
            return await super().aput(config, checkpoint, metadata, new_versions)
        await self.setup()
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        checkpoint_ns = configurable["checkpoint_ns"]
        type_, serialized_checkpoint = self.serde.dumps_typed(checkpoint)
        serialized_metadata = json.dumps(
            get_checkpoint_metadata(config, metadata), ensure_ascii=False
        ).encode("utf-8", "ignore")
        async with self.lock:
            try:
                await self.conn.execute(
                    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, "
                    "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        str(thread_id),
                        checkpoint_ns,
                        checkpoint["id"],
                        configurable.get("checkpoint_id"),
                        type_,
                        serialized_checkpoint,
                        serialized_metadata,
                    ),
                )
                await self.conn.executemany(SQLITE_INSERT_REPORTS, rows)
                await self.conn.commit()
            except BaseException:
                await self.conn.rollback()
                raise
        self._report_rows.committed(rows)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }


# -- querying ----------------------------------------------------------------------

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str | datetime | None, *, now: datetime | None = None) -> datetime | None:
    """A ``--since`` value as an aware UTC datetime.

    Accepts an ISO 8601 time (naive means UTC) or a duration back from now:
    ``30m``, ``2h``, ``7d``, ``1w``.

    Example:
        ```python
        parse_since("2026-01-31T12:00:00Z")
        parse_since("2h")      # two hours ago
        ```
    """
    if value is None or isinstance(value, datetime):
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value
    m = _RELATIVE.match(value)
    if m:
        try:
            delta = timedelta(**{_UNITS[m.group(2).lower()]: float(m.group(1))})
            return (now or datetime.now(UTC)) - delta
        except OverflowError:
            raise InputError(f"time {value!r} reaches too far back") from None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"cannot read time {value!r}: use ISO 8601 (2026-01-31T12:00:00Z) or a "
            "duration such as 30m, 2h, 7d"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class _Query(Protocol):
    def __call__(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]: ...


class ReportHistory:
    """The report log: every crossing's report, queryable after the fact.

    The audit trail a reviewer asks for: which gates ran on a thread, what they
    found, what they overrode and who approved what. Rows are written by the
    checkpointers of :func:`connect`; this class only reads.

    Example:
        ```python
        with connect() as db:
            halted = [r for r in db.report_log.history(gate="inspector")
                      if r.decision == "halted"]
        ```
    """

    def __init__(self, backend: Backend, query: _Query) -> None:
        self.backend = backend
        self._query = query

    def history(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> list[Report]:
        """Reports oldest first, filtered by thread id, gate name and finish time."""
        mark = "?" if self.backend == "sqlite" else "%s"
        where: list[str] = []
        params: list[Any] = []
        if thread is not None:
            where.append(f"thread_id = {mark}")
            params.append(thread)
        if gate is not None:
            where.append(f"gate = {mark}")
            params.append(gate)
        when = parse_since(since)
        if when is not None:
            where.append(f"finished_at >= {mark}")
            params.append(_sqlite_time(when) if self.backend == "sqlite" else when)
        sql = "SELECT body FROM trustgate_reports"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY finished_at, id"
        if limit is not None:
            if int(limit) < 0:
                raise InputError(f"limit must be 0 or more, not {limit}")
            sql += f" LIMIT {int(limit)}"
        return [Report.model_validate_json(row[0]) for row in self._query(sql, params)]

    def count(self) -> int:
        rows = self._query("SELECT count(*) FROM trustgate_reports", [])
        return int(rows[0][0])


def _sqlite_history(conn: sqlite3.Connection) -> ReportHistory:
    lock = threading.Lock()

    def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with lock:
            return list(conn.execute(sql, tuple(params)).fetchall())

    return ReportHistory("sqlite", query)


# -- configuration -----------------------------------------------------------------


def resolve_url(url: str | os.PathLike[str] | None = None) -> tuple[Backend, str]:
    """Which database: the argument, else ``TRUSTGATE_DATABASE_URL``, else the default.

    Returns ``("postgres", url)`` or ``("sqlite", path)``. Plain paths and
    SQLAlchemy-style ``sqlite:///relative.db`` / ``sqlite:////absolute.db`` are
    SQLite; ``postgresql://`` / ``postgres://`` are PostgreSQL.
    """
    raw = os.fspath(url) if url is not None else os.environ.get(ENV_VAR) or DEFAULT_DATABASE
    raw = raw.strip()
    if not raw:
        raise ConfigurationError(f"empty database URL (argument or {ENV_VAR})")
    lowered = raw.lower()
    if lowered.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return "postgres", re.sub(r"^postgresql\+psycopg://", "postgresql://", raw, flags=re.I)
    if lowered.startswith("sqlite:"):
        path = re.sub(r"^sqlite:(///|//)?", "", raw, flags=re.I)
        if not path:
            raise ConfigurationError(f"no path in SQLite URL {raw!r}")
        raw = path
    elif "://" in raw:
        scheme = raw.split("://", 1)[0]
        raise ConfigurationError(
            f"unsupported database URL scheme {scheme!r}: use a SQLite path "
            "(.trustgate/trustgate.db, sqlite:///path) or postgresql://..."
        )
    if raw == ":memory:":
        raise ConfigurationError(
            "connect() needs a database file; for an in-memory graph use "
            "langgraph's InMemorySaver and trustgate.InMemoryLedger"
        )
    return "sqlite", raw


def _sqlite_conn(path: str, *, autocommit: bool) -> sqlite3.Connection:
    if autocommit:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def _prepare_sqlite(path: str) -> None:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot create the database directory {p.parent}: {exc}"
        ) from None
    try:
        conn = _sqlite_conn(path, autocommit=True)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot open SQLite database {path!r}: {exc}") from None
    try:
        conn.executescript(SQLITE_REPORTS_SCHEMA)
    except sqlite3.DatabaseError as exc:
        raise ConfigurationError(f"{path!r} is not a usable SQLite database: {exc}") from None
    finally:
        conn.close()


def _pg() -> Any:
    """The PostgreSQL module, imported only when a postgresql:// URL is used."""
    try:
        from trustgate import _persistence_pg
    except ImportError as exc:
        raise ConfigurationError(
            f"PostgreSQL needs the 'postgres' extra: {install_hint('postgres')} ({exc})"
        ) from None
    return _persistence_pg


class Persistence:
    """A ready checkpointer, store, artifact ledger and report log on one database.

    Use it as a context manager (or call :meth:`close`). Attributes:

    * ``checkpointer`` — ``SqliteSaver`` / ``PostgresSaver`` (set up), for ``compile``;
    * ``store`` — ``SqliteStore`` / ``PostgresStore`` (set up), for ``compile``;
    * ``ledger`` — the artifact ledger (:class:`~trustgate.SqliteLedger` /
      :class:`~trustgate.PostgresLedger`);
    * ``report_log`` — :class:`ReportHistory` over every logged crossing.
    """

    def __init__(
        self,
        *,
        backend: Backend,
        url: str,
        checkpointer: BaseCheckpointSaver[Any],
        store: BaseStore,
        ledger: ArtifactLedger,
        report_log: ReportHistory,
        closers: Sequence[Any],
    ) -> None:
        self.backend = backend
        self.url = url
        self.checkpointer = checkpointer
        self.store = store
        self.ledger = ledger
        self.report_log = report_log
        self._closers = list(closers)
        self._closed = False

    def __repr__(self) -> str:
        from trustgate.evidence.ledger_postgres import redact

        return f"Persistence({self.backend}, {redact(self.url)!r})"

    def history(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> list[Report]:
        """Shortcut for ``self.report_log.history(...)``."""
        return self.report_log.history(thread, gate, since, limit=limit)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fn in reversed(self._closers):
            with contextlib.suppress(Exception):
                fn()

    def __enter__(self) -> Persistence:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncPersistence(Persistence):
    """:class:`Persistence` with the async savers and stores (for ``ainvoke``/``astream``).

    The ledger and the report log keep their sync API (``history`` is also offered
    as :meth:`ahistory`, run in a worker thread).
    """

    def __init__(self, *, aclosers: Sequence[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._aclosers = list(aclosers)

    async def ahistory(
        self,
        thread: str | None = None,
        gate: str | None = None,
        since: str | datetime | None = None,
        *,
        limit: int | None = None,
    ) -> list[Report]:
        import asyncio

        return await asyncio.to_thread(self.history, thread, gate, since, limit=limit)

    async def aclose(self) -> None:
        if self._closed:
            return
        for fn in reversed(self._aclosers):
            with contextlib.suppress(Exception):
                await fn()
        self.close()

    async def __aenter__(self) -> AsyncPersistence:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def connect(url: str | os.PathLike[str] | None = None) -> Persistence:
    """Open (and set up) the trustgate database; returns checkpointer, store, ledger, log.

    ``url``: a SQLite path or ``sqlite:///path`` (default ``.trustgate/trustgate.db``,
    created), or ``postgresql://user@host/db`` (needs the ``postgres`` extra).
    Without an argument, ``TRUSTGATE_DATABASE_URL`` is used when set.

    Example:
        ```python
        with connect("postgresql://app@db/trust") as db:
            app = graph.compile(checkpointer=db.checkpointer, store=db.store)
        ```
    """
    backend, target = resolve_url(url)
    if backend == "postgres":
        pg: Persistence = _pg().connect_postgres(target)
        return pg
    from langgraph.store.sqlite import SqliteStore

    _prepare_sqlite(target)
    saver_conn = _sqlite_conn(target, autocommit=False)
    store_conn = _sqlite_conn(target, autocommit=True)
    log_conn = _sqlite_conn(target, autocommit=True)
    checkpointer = LoggingSqliteSaver(saver_conn)
    checkpointer.setup()
    store = SqliteStore(store_conn)
    store.setup()
    ledger = SqliteLedger(target)
    return Persistence(
        backend="sqlite",
        url=target,
        checkpointer=checkpointer,
        store=store,
        ledger=ledger,
        report_log=_sqlite_history(log_conn),
        closers=[saver_conn.close, store_conn.close, log_conn.close, ledger.close],
    )


class _AsyncConnect:
    """What :func:`aconnect` returns: await it, or use it as ``async with``."""

    def __init__(self, url: str | os.PathLike[str] | None) -> None:
        self._url = url
        self._db: AsyncPersistence | None = None

    def __await__(self) -> Generator[Any, None, AsyncPersistence]:
        return _aconnect(self._url).__await__()

    async def __aenter__(self) -> AsyncPersistence:
        self._db = await _aconnect(self._url)
        return self._db

    async def __aexit__(self, *exc: object) -> None:
        if self._db is not None:
            await self._db.aclose()


def aconnect(url: str | os.PathLike[str] | None = None) -> _AsyncConnect:
    """Async :func:`connect`: ``AsyncSqliteSaver``/``AsyncSqliteStore`` or the Postgres ones.

    Use it as an async context manager (closed on exit) or await it (then call
    ``await db.aclose()``).

    Example:
        ```python
        async with aconnect() as db:
            app = graph.compile(checkpointer=db.checkpointer, store=db.store)
            await app.ainvoke(inputs, config)

        db = await aconnect("postgresql://app@db/trust")
        ```
    """
    return _AsyncConnect(url)


async def _aconnect(url: str | os.PathLike[str] | None) -> AsyncPersistence:
    backend, target = resolve_url(url)
    if backend == "postgres":
        apg: AsyncPersistence = await _pg().aconnect_postgres(target)
        return apg
    import aiosqlite
    from langgraph.store.sqlite import AsyncSqliteStore

    _prepare_sqlite(target)
    saver_conn = await aiosqlite.connect(target)
    store_conn = await aiosqlite.connect(target, isolation_level=None)
    for c in (saver_conn, store_conn):
        await c.execute("PRAGMA busy_timeout=30000")
    checkpointer = LoggingAsyncSqliteSaver(saver_conn)
    await checkpointer.setup()
    store = AsyncSqliteStore(store_conn)
    await store.setup()
    log_conn = _sqlite_conn(target, autocommit=True)
    ledger = SqliteLedger(target)
    return AsyncPersistence(
        backend="sqlite",
        url=target,
        checkpointer=checkpointer,
        store=store,
        ledger=ledger,
        report_log=_sqlite_history(log_conn),
        closers=[log_conn.close, ledger.close],
        aclosers=[saver_conn.close, store_conn.close],
    )


def history(
    thread: str | None = None,
    gate: str | None = None,
    since: str | datetime | None = None,
    *,
    url: str | os.PathLike[str] | None = None,
    limit: int | None = None,
) -> list[Report]:
    """Every logged crossing report, oldest first (the audit trail).

    Opens the database named by ``url`` / ``TRUSTGATE_DATABASE_URL`` / the default
    only to read; it does not set up checkpoint tables.

    Example:
        ```python
        for r in history(thread="t1", since="2h"):
            print(r.finished_at, r.gate, r.decision, [o.kind for o in r.overrides])
        ```
    """
    with open_report_log(url) as log:
        return log.history(thread, gate, since, limit=limit)


@contextlib.contextmanager
def open_report_log(url: str | os.PathLike[str] | None = None) -> Iterator[ReportHistory]:
    """Just the report log of a database (what ``trustgate history`` reads)."""
    backend, target = resolve_url(url)
    if backend == "postgres":
        with _pg().open_pg_report_log(target) as log:
            yield log
        return
    if not Path(target).exists():
        raise ConfigurationError(f"no trustgate database at {target!r}")
    _prepare_sqlite(target)
    conn = _sqlite_conn(target, autocommit=True)
    try:
        yield _sqlite_history(conn)
    finally:
        conn.close()
