"""Bounds on every PostgreSQL connection trustgate opens: nothing waits for ever on the database.

Why: a PostgreSQL server that stops answering without closing its sockets (a frozen
process, a host paused, a network partition) leaves libpq waiting for ever, and a
guarded graph's ``invoke`` with it. The statement timeout alone cannot help there: it
is enforced by the server, and a server that does not run cancels nothing. So each
connection carries three limits:

* ``connect_timeout`` (libpq's): opening a connection;
* ``statement_timeout`` (the server's, sent as ``options=-c statement_timeout=...``):
  a statement on a live server that takes too long is cancelled by the server;
* a *client deadline*, ``statement_timeout`` plus one second, on every round trip:
  for the server that cannot cancel anything. On expiry the connection is closed
  (its protocol state is unknown, it cannot be reused) and
  :class:`~trustgate.errors.DatabaseUnavailable` is raised;

and TCP keepalives (``keepalives*``, ``tcp_user_timeout``) so the kernel notices a
peer gone from the network on the pool's idle connections. The pool's own wait for a
free connection is bounded by ``pool_timeout``.

After a client deadline expired, every request to that database fails at once with
:class:`~trustgate.errors.DatabaseUnavailable` for one more deadline, instead of each
waiting out a deadline of its own on a server just seen not answering (a graph issues
several writes per step, and a run would otherwise wait for each in turn). The first
request after that window tries again; a round trip that succeeds ends it early.

Each bound is configurable: keyword arguments of ``connect()`` / ``aconnect()`` win;
otherwise libpq's own parameters in the URL (``connect_timeout``, ``keepalives_idle``,
``options=-c statement_timeout=30s``, ...) or its environment (``PGCONNECT_TIMEOUT``,
``PGOPTIONS``) are used; otherwise the defaults below.

The typed errors raised here are also the psycopg error they stand for
(``OperationalError``, ``QueryCanceled``, ``PoolTimeout``), so code written against
psycopg, LangGraph's savers and psycopg_pool included, handles them as before.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
from collections.abc import Generator
from dataclasses import dataclass
from time import monotonic
from typing import Any, ClassVar, TypeVar, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from trustgate.errors import ConfigurationError, DatabaseUnavailable
from trustgate.persistence._urls import redact

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_POOL_TIMEOUT",
    "DEFAULT_STATEMENT_TIMEOUT",
    "GRACE",
    "PgConnectionLost",
    "PgDeadlineExceeded",
    "PgFailingFast",
    "PgLimits",
    "PgPoolTimeout",
    "PgStatementCanceled",
    "PgTarget",
    "open_async_pool",
    "open_pool",
    "pg_target",
]

logger = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_STATEMENT_TIMEOUT = 5.0
DEFAULT_POOL_TIMEOUT = 5.0
# The client deadline is the server's limit plus this: a live server cancels first
# (a clean QueryCanceled, the connection stays usable), a frozen one is cut off after.
GRACE = 1.0
# The kernel probes an idle connection after 10 s, every 5 s, 3 times: a peer gone
# from the network is noticed in 25 s; unacknowledged sends give up after 10 s.
KEEPALIVES = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
}
TCP_USER_TIMEOUT_MS = "10000"

_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
_RV = TypeVar("_RV")
# psycopg >= 3.3 raises this from a wait whose timeout expired (and converts it itself
# everywhere it uses one); the name is private, so its absence is an import error
# (turned into the install hint by trustgate.persistence) rather than a silent hang.
_found = getattr(pg_errors, "_WaitTimeout", None)
if not (isinstance(_found, type) and issubclass(_found, Exception)):  # pragma: no cover
    raise ImportError("trustgate's PostgreSQL persistence needs psycopg >= 3.3")
_WAIT_TIMEOUT: type[Exception] = _found


# -- the typed errors: trustgate's DatabaseUnavailable and the psycopg error they replace --


class PgDeadlineExceeded(DatabaseUnavailable, pg_errors.OperationalError):
    """The server did not answer a round trip within the client deadline."""


class PgStatementCanceled(DatabaseUnavailable, pg_errors.QueryCanceled):
    """The server cancelled a statement (``statement_timeout``, or an operator)."""


class PgConnectionLost(DatabaseUnavailable, pg_errors.OperationalError):
    """The connection broke (the server went away, a keepalive gave up)."""


class PgFailingFast(DatabaseUnavailable, pg_errors.OperationalError):
    """Refused without trying: the database missed a deadline moments ago."""


class PgPoolTimeout(DatabaseUnavailable, PoolTimeout):
    """No connection of the pool came free (or could be opened) within ``pool_timeout``."""


# -- the limits and where they come from -----------------------------------------------


@dataclass(frozen=True)
class PgLimits:
    """The bounds of one database's connections, in seconds (``statement_timeout=0``: none)."""

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT
    pool_timeout: float = DEFAULT_POOL_TIMEOUT

    @property
    def deadline(self) -> float | None:
        """The client deadline of one round trip (``None`` when statement_timeout is off)."""
        return self.statement_timeout + GRACE if self.statement_timeout > 0 else None


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?\s*$")
_OPTION = re.compile(r"(?:-c\s*|--)statement[_-]timeout=(\S+)")


def _pg_duration(value: str, what: str) -> float:
    """A PostgreSQL time setting in seconds (a bare number is milliseconds)."""
    m = _DURATION.match(value.strip("'\""))
    if not m:
        raise ConfigurationError(
            f"cannot read {what} {value!r}: use milliseconds or a unit (500ms, 5s, 1min)"
        )
    return float(m.group(1)) * _UNITS[m.group(2) or "ms"]


def _seconds(value: float, what: str, *, zero_ok: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ConfigurationError(f"{what} must be a number of seconds, not {value!r}")
    if math.isinf(value) or value < 0 or (value == 0 and not zero_ok):
        hint = " (0 turns it off)" if zero_ok else ""
        raise ConfigurationError(f"{what} must be a finite number of seconds > 0{hint}: {value!r}")
    return float(value)


@dataclass(frozen=True)
class PgTarget:
    """One database: its URL (for messages), the bounded conninfo and the shared guard."""

    url: str
    conninfo: str
    limits: PgLimits
    guard: _Guard


def pg_target(
    url: str,
    *,
    connect_timeout: float | None = None,
    statement_timeout: float | None = None,
    pool_timeout: float | None = None,
    read_only: bool = False,
) -> PgTarget:
    """The URL with every bound set: the arguments, else the URL's or libpq's env, else defaults.

    ``read_only``: every session has ``default_transaction_read_only=on``, so the server
    itself refuses any write or DDL (the read commands' pools).
    """
    try:
        params: dict[str, Any] = dict(conninfo_to_dict(url))
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(f"bad PostgreSQL URL {redact(url)}: {exc}") from None

    if connect_timeout is not None:
        connect = _seconds(connect_timeout, "connect_timeout")
    elif (
        given := params.get("connect_timeout") or os.environ.get("PGCONNECT_TIMEOUT")
    ) is not None:
        try:
            connect = float(given)
        except ValueError:
            raise ConfigurationError(f"bad connect_timeout {given!r} in {redact(url)}") from None
        if connect <= 0:
            raise ConfigurationError(
                f"connect_timeout={given} waits for ever; give a number of seconds > 0"
            )
    else:
        connect = DEFAULT_CONNECT_TIMEOUT
    params["connect_timeout"] = str(max(2, math.ceil(connect)))  # libpq: whole seconds, >= 2

    # libpq takes PGOPTIONS only when the conninfo has no options, and we always set them
    options = str(params.get("options") or os.environ.get("PGOPTIONS") or "").strip()
    found = _OPTION.findall(options)
    if statement_timeout is not None:
        statement = _seconds(statement_timeout, "statement_timeout", zero_ok=True)
        options = f"{options} -c statement_timeout={round(statement * 1000)}".strip()
    elif found:
        statement = _pg_duration(found[-1], "statement_timeout")
    else:
        statement = DEFAULT_STATEMENT_TIMEOUT
        options = f"{options} -c statement_timeout={round(statement * 1000)}".strip()
    if read_only:
        options = f"{options} -c default_transaction_read_only=on".strip()
    params["options"] = options

    for key, value in KEEPALIVES.items():
        params.setdefault(key, value)
    if pq.version() >= 120000:  # tcp_user_timeout is libpq 12's
        params.setdefault("tcp_user_timeout", TCP_USER_TIMEOUT_MS)

    pool = DEFAULT_POOL_TIMEOUT if pool_timeout is None else _seconds(pool_timeout, "pool_timeout")
    limits = PgLimits(connect_timeout=connect, statement_timeout=statement, pool_timeout=pool)
    return PgTarget(
        url=url,
        conninfo=make_conninfo("", **params),
        limits=limits,
        guard=_Guard(limits, redact(url)),
    )


# -- the guard: deadlines, typed errors, failing fast --------------------------------------


class _Guard:
    """One database's limits and its fail-fast window, shared by all its pools."""

    def __init__(self, limits: PgLimits, where: str) -> None:
        self.limits = limits
        self.where = where
        self._lock = threading.Lock()
        self._until = 0.0
        self._why = ""

    def check(self) -> None:
        """Fail at once while the database is in its fail-fast window."""
        if not self._until:
            return
        with self._lock:
            left, why = self._until - monotonic(), self._why
            if left <= 0:
                self._until = 0.0
                return
        raise PgFailingFast(
            f"PostgreSQL at {self.where} {why}; not waiting on it again for another "
            f"{left:.1f} s (failing fast, then trying again)"
        )

    def answered(self) -> None:
        if self._until:
            with self._lock:
                self._until = 0.0

    def _trip(self, why: str) -> None:
        window = self.limits.deadline or self.limits.pool_timeout
        with self._lock:
            self._until, self._why = monotonic() + window, why

    def expired(self, conn: psycopg.BaseConnection[Any]) -> PgDeadlineExceeded:
        """A round trip ran out of time: the connection is closed, the window opens."""
        deadline = self.limits.deadline or 0.0
        # Mid-protocol and unanswered: the connection's state is unknown, so it is
        # closed (the pool replaces it) rather than handed to the next caller.
        conn.pgconn.finish()
        why = f"did not answer within {deadline:g} s"
        self._trip(why)
        logger.warning("PostgreSQL at %s %s; connection closed", self.where, why)
        return PgDeadlineExceeded(
            f"PostgreSQL at {self.where} {why} (statement_timeout "
            f"{self.limits.statement_timeout:g} s + {GRACE:g} s): the server is frozen, "
            "unreachable or overloaded; the connection was closed and nothing of this "
            "operation was stored"
        )

    def translate(
        self, conn: psycopg.BaseConnection[Any], exc: pg_errors.OperationalError
    ) -> BaseException:
        """The typed error for a psycopg error that says the database is unavailable."""
        if isinstance(exc, DatabaseUnavailable):
            return exc
        if isinstance(exc, pg_errors.QueryCanceled):
            return PgStatementCanceled(
                f"PostgreSQL at {self.where} cancelled the statement (statement_timeout "
                f"{self.limits.statement_timeout:g} s, or an operator): {exc}"
            )
        if conn.pgconn.status == pq.ConnStatus.BAD:
            return PgConnectionLost(f"the connection to PostgreSQL at {self.where} broke: {exc}")
        return exc

    def pool_timeout(self, exc: PoolTimeout) -> PgPoolTimeout:
        return PgPoolTimeout(
            f"no connection to PostgreSQL at {self.where} within "
            f"{self.limits.pool_timeout:g} s (pool_timeout): the server is not answering "
            f"new connections or every connection is busy ({exc})"
        )


def _raise_translated(guard: _Guard, conn: psycopg.BaseConnection[Any], exc: Exception) -> None:
    """Raise the typed error for ``exc`` (the caller re-raises ``exc`` when there is none)."""
    if isinstance(exc, _WAIT_TIMEOUT):
        raise guard.expired(conn) from None
    if isinstance(exc, pg_errors.OperationalError):
        typed = guard.translate(conn, exc)
        if typed is not exc:
            raise typed from exc


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose every round trip has the client deadline."""

    guard: ClassVar[_Guard | None] = None

    def wait(
        self,
        gen: Generator[Any, Any, _RV],
        interval: float = 0.1,
        timeout: float | None = None,
    ) -> _RV:
        guard = self.guard
        if guard is None or timeout is not None:  # psycopg's own bounded waits
            return super().wait(gen, interval, timeout)
        guard.check()
        try:
            rv = super().wait(gen, interval, guard.limits.deadline)
        except pg_errors.OperationalError as exc:
            _raise_translated(guard, self, exc)
            raise
        guard.answered()
        return rv


class AsyncBoundedConnection(psycopg.AsyncConnection[Any]):
    """The async twin of :class:`BoundedConnection`."""

    guard: ClassVar[_Guard | None] = None

    async def wait(
        self,
        gen: Generator[Any, Any, _RV],
        interval: float = 0.1,
        timeout: float | None = None,
    ) -> _RV:
        guard = self.guard
        if guard is None or timeout is not None:
            return await super().wait(gen, interval, timeout)
        guard.check()
        try:
            rv = await super().wait(gen, interval, guard.limits.deadline)
        except pg_errors.OperationalError as exc:
            _raise_translated(guard, self, exc)
            raise
        guard.answered()
        return rv


class BoundedPool(ConnectionPool[Any]):
    """A pool that fails fast in the window and types its own timeout."""

    guard: _Guard

    def getconn(self, timeout: float | None = None) -> Any:
        self.guard.check()
        try:
            return super().getconn(timeout)
        except PgPoolTimeout:
            raise
        except PoolTimeout as exc:
            raise self.guard.pool_timeout(exc) from exc


class AsyncBoundedPool(AsyncConnectionPool[Any]):
    """The async twin of :class:`BoundedPool`."""

    guard: _Guard

    async def getconn(self, timeout: float | None = None) -> Any:
        self.guard.check()
        try:
            return await super().getconn(timeout)
        except PgPoolTimeout:
            raise
        except PoolTimeout as exc:
            raise self.guard.pool_timeout(exc) from exc


def _connection_class(base: type[Any], guard: _Guard) -> type[Any]:
    return type(base.__name__, (base,), {"guard": guard, "__module__": __name__})


def _cannot_connect(target: PgTarget, exc: BaseException) -> ConfigurationError:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return ConfigurationError(f"cannot connect to PostgreSQL at {redact(target.url)}: {reason}")


def open_pool(
    target: PgTarget | str, *, max_size: int = 4, name: str = "trustgate"
) -> ConnectionPool[Any]:
    """A small autocommit pool with every bound set, failing fast with a typed error."""
    if isinstance(target, str):
        target = pg_target(target)
    conn_cls = cast(type[BoundedConnection], _connection_class(BoundedConnection, target.guard))
    try:
        # one direct attempt first: a wrong host or password fails now, with the
        # server's own message, instead of after the pool's retry timeout
        conn_cls.connect(target.conninfo).close()
    except pg_errors.Error as exc:
        raise _cannot_connect(target, exc) from None
    pool = BoundedPool(
        target.conninfo,
        connection_class=conn_cls,
        min_size=1,
        max_size=max_size,
        kwargs=dict(_KWARGS),
        open=False,
        name=name,
        timeout=target.limits.pool_timeout,
    )
    pool.guard = target.guard
    try:
        pool.open(wait=True, timeout=target.limits.connect_timeout + target.limits.pool_timeout)
    except PoolTimeout as exc:
        pool.close()
        raise _cannot_connect(target, exc) from exc
    return pool


async def open_async_pool(
    target: PgTarget, *, max_size: int = 8, name: str = "trustgate-async"
) -> AsyncConnectionPool[Any]:
    """The async pool of :func:`open_pool` (the caller checked the server answers)."""
    conn_cls = _connection_class(AsyncBoundedConnection, target.guard)
    pool = AsyncBoundedPool(
        target.conninfo,
        connection_class=conn_cls,
        min_size=1,
        max_size=max_size,
        kwargs=dict(_KWARGS),
        open=False,
        name=name,
        timeout=target.limits.pool_timeout,
    )
    pool.guard = target.guard
    try:
        await pool.open(
            wait=True, timeout=target.limits.connect_timeout + target.limits.pool_timeout
        )
    except PoolTimeout as exc:
        await pool.close()
        raise _cannot_connect(target, exc) from exc
    return pool
