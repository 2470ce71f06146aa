"""Which database, and everything a guarded graph keeps in it, opened together.

``connect()`` / ``aconnect()`` pick the backend from a URL (SQLite by default,
PostgreSQL for ``postgresql://``), and return LangGraph's own checkpointer wrapped
by :class:`~trustgate.persistence.ReportingSaver`, LangGraph's store, the artifact
ledger and the report log, all on that one database. Scale-out is then what
LangGraph users already do: many worker processes, one PostgreSQL.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Generator, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from trustgate._meta import install_hint
from trustgate.errors import ConfigurationError
from trustgate.evidence.keys import KeyArg, SealKey, resolve_key
from trustgate.persistence._log import ReportHistory, ReportList
from trustgate.persistence._persistence import AsyncPersistence, Persistence
from trustgate.persistence._urls import DEFAULT_DATABASE, ENV_VAR, Backend, redact, resolve_url

if TYPE_CHECKING:
    from types import ModuleType


__all__ = [
    "DEFAULT_DATABASE",
    "ENV_VAR",
    "AsyncPersistence",
    "Backend",
    "Persistence",
    "aconnect",
    "connect",
    "history",
    "open_report_log",
    "resolve_url",
]

logger = logging.getLogger(__name__)


def _pg() -> ModuleType:
    """The PostgreSQL module, imported only when a postgresql:// URL is used."""
    try:
        from trustgate.persistence import _postgres
    except ImportError as exc:
        raise ConfigurationError(
            f"PostgreSQL needs the 'postgres' extra: {install_hint('postgres')} ({exc})"
        ) from None
    return _postgres


def _database_key(
    backend: Backend, target: str, key: KeyArg, allow_readable_key_file: bool
) -> SealKey:
    """The one key the ledger and the report log of a database seal under.

    Every database ``connect()`` opens is read by other processes or after a restart
    (PostgreSQL always; SQLite is always a file here), so a key must be configured.
    """
    where = (
        f"the PostgreSQL database {redact(target)}"
        if backend == "postgres"
        else f"the SQLite database {target!r}"
    )
    from trustgate import _report_seal

    found = resolve_key(key, required_for=where, allow_readable_key_file=allow_readable_key_file)
    _report_seal.adopt(found)  # the gates of this process seal under it too
    return found


def _pg_target(url: str, limits: dict[str, float | None]) -> Any:
    """The PostgreSQL URL with its bounds (see :mod:`trustgate.persistence._pglimits`)."""
    return _pg().pg_target(url, **limits)


def connect(
    url: str | os.PathLike[str] | None = None,
    *,
    key: KeyArg = None,
    allow_readable_key_file: bool = False,
    connect_timeout: float | None = None,
    statement_timeout: float | None = None,
    pool_timeout: float | None = None,
) -> Persistence:
    """Open (and set up) the trustgate database; returns checkpointer, store, ledger, log.

    ``url``: a SQLite path or ``sqlite:///path`` (default ``.trustgate/trustgate.db``,
    created), or ``postgresql://user@host/db`` (needs the ``postgres`` extra).
    Without an argument, ``TRUSTGATE_DATABASE_URL`` is used when set.

    ``key``: what the ledger and the report log seal rows under; default
    ``TRUSTGATE_LEDGER_KEY`` / ``TRUSTGATE_LEDGER_KEY_FILE``. The database is shared with
    other processes and restarts, so without a key this raises
    :class:`~trustgate.errors.LedgerKeyError` before anything is created;
    ``key=EPHEMERAL_KEY`` seals under a random key for this process only.

    PostgreSQL only, in seconds: ``connect_timeout`` (opening a connection, default 5),
    ``statement_timeout`` (one statement, default 5; the client gives up on a server
    that has not answered one second after that; ``0`` turns both off) and
    ``pool_timeout`` (waiting for a free connection, default 5). Left unset, libpq's
    own settings in the URL or its environment are used (``?connect_timeout=10``,
    ``options=-c statement_timeout=30s``, ``PGCONNECT_TIMEOUT``, ``PGOPTIONS``). A
    database that does not answer in time raises
    :class:`~trustgate.errors.DatabaseUnavailable`.

    Example:
        ```python
        with connect("postgresql://app@db/trust", statement_timeout=30) as db:
            app = graph.compile(checkpointer=db.checkpointer, store=db.store)
        ```
    """
    backend, target = resolve_url(url)
    secret = _database_key(backend, target, key, allow_readable_key_file)
    if backend == "postgres":
        limits = {
            "connect_timeout": connect_timeout,
            "statement_timeout": statement_timeout,
            "pool_timeout": pool_timeout,
        }
        pg: Persistence = _pg().connect_postgres(_pg_target(target, limits), secret)
        return pg
    from trustgate.persistence._sqlite import connect_sqlite

    return connect_sqlite(target, secret)


class _AsyncConnect:
    """What :func:`aconnect` returns: await it, or use it as ``async with``."""

    def __init__(
        self,
        url: str | os.PathLike[str] | None,
        key: KeyArg,
        allow_readable_key_file: bool,
        limits: dict[str, float | None],
    ) -> None:
        self._url = url
        self._key = key
        self._allow = allow_readable_key_file
        self._limits = limits
        self._db: AsyncPersistence | None = None

    def __await__(self) -> Generator[Any, None, AsyncPersistence]:
        return _aconnect(self._url, self._key, self._allow, self._limits).__await__()

    async def __aenter__(self) -> AsyncPersistence:
        self._db = await _aconnect(self._url, self._key, self._allow, self._limits)
        return self._db

    async def __aexit__(self, *exc: object) -> None:
        if self._db is not None:
            await self._db.aclose()


def aconnect(
    url: str | os.PathLike[str] | None = None,
    *,
    key: KeyArg = None,
    allow_readable_key_file: bool = False,
    connect_timeout: float | None = None,
    statement_timeout: float | None = None,
    pool_timeout: float | None = None,
) -> _AsyncConnect:
    """Async :func:`connect`: ``AsyncSqliteSaver``/``AsyncSqliteStore`` or the Postgres ones.

    ``key``, ``allow_readable_key_file`` and the PostgreSQL bounds as for :func:`connect`.

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
    limits = {
        "connect_timeout": connect_timeout,
        "statement_timeout": statement_timeout,
        "pool_timeout": pool_timeout,
    }
    return _AsyncConnect(url, key, allow_readable_key_file, limits)


async def _aconnect(
    url: str | os.PathLike[str] | None,
    key: KeyArg,
    allow_readable_key_file: bool,
    limits: dict[str, float | None],
) -> AsyncPersistence:
    backend, target = resolve_url(url)
    secret = _database_key(backend, target, key, allow_readable_key_file)
    if backend == "postgres":
        apg: AsyncPersistence = await _pg().aconnect_postgres(_pg_target(target, limits), secret)
        return apg
    from trustgate.persistence._sqlite import aconnect_sqlite

    return await aconnect_sqlite(target, secret)


def history(
    thread: str | None = None,
    gate: str | None = None,
    since: str | datetime | None = None,
    *,
    url: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    key: KeyArg = None,
) -> ReportList:
    """Every logged crossing report whose seal holds, oldest first (the audit trail).

    Opens the database named by ``url`` / ``TRUSTGATE_DATABASE_URL`` / the default
    read-only, only to read the report log: it creates and alters nothing. Rows are
    verified under ``key`` (default: the environment, as for :func:`connect`); the
    rows that fail are in the result's ``refused``.

    Example:
        ```python
        for r in history(thread="t1", since="2h"):
            print(r.finished_at, r.gate, r.decision, [o.kind for o in r.overrides])
        ```
    """
    with open_report_log(url, key=key) as log:
        return log.history(thread, gate, since, limit=limit)


@contextlib.contextmanager
def open_report_log(
    url: str | os.PathLike[str] | None = None,
    *,
    key: KeyArg = None,
    allow_readable_key_file: bool = False,
) -> Iterator[ReportHistory]:
    """Just the report log of an existing database, read-only (what ``trustgate
    history`` reads): a SQLite file opened ``mode=ro``, PostgreSQL over read-only
    connections; no table is created or altered. A missing database, a file that is
    not one, or a database without a report log is a ``ConfigurationError``."""
    backend, target = resolve_url(url)
    if backend == "postgres":
        with _pg().open_pg_report_log(
            target, key=key, allow_readable_key_file=allow_readable_key_file
        ) as pg_log:
            yield pg_log
        return
    from trustgate.persistence._sqlite import open_sqlite_report_log

    log = open_sqlite_report_log(target, key=key, allow_readable_key_file=allow_readable_key_file)
    try:
        yield log
    finally:
        log.close()
