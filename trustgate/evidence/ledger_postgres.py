"""The artifact ledger in PostgreSQL: one ledger shared by many worker processes.

Why a database-side conditional insert: two workers acquiring the same locator at
the same moment must end with one artifact and the first ``acquired_at``. A
get-then-put in Python cannot promise that across processes; ``INSERT ... ON
CONFLICT (id) DO NOTHING`` followed by reading the stored row can, because the
primary key decides which insert wins and every caller then reads the winner. The
comparison that refuses different bytes under an existing id is the base class's
(:meth:`ArtifactLedger.put`), so the rule is the same for every backend.

Requires the ``postgres`` extra (``psycopg``); it is imported only when a
``PostgresLedger`` is built, so ``import trustgate`` works without it.

Example:
    ```python
    from trustgate.files import PostgresLedger

    ledger = PostgresLedger("postgresql://app@db/trust")
    stored = ledger.put(artifact)      # the first writer's artifact, whoever called
    ledger.close()
    ```
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from trustgate._meta import install_hint
from trustgate.errors import ConfigurationError, LedgerTampered
from trustgate.evidence.artifacts import Artifact
from trustgate.evidence.keys import KeyArg
from trustgate.evidence.ledger import ArtifactLedger, parse_row

if TYPE_CHECKING:
    from psycopg import Connection, Cursor
    from psycopg_pool import ConnectionPool

__all__ = ["PG_LEDGER_SCHEMA", "PostgresLedger", "pg_setup"]

PG_LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS trustgate_artifacts (
    id TEXT PRIMARY KEY,
    content_hash TEXT,
    acquired_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trustgate_artifact_marks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    marked_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS trustgate_artifact_seals (
    id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    mac TEXT NOT NULL,
    PRIMARY KEY (id, key_id)
);
"""

# Any fixed number: concurrent CREATE TABLE IF NOT EXISTS can still collide in
# PostgreSQL's catalog, so schema creation is serialised with an advisory lock.
SCHEMA_LOCK = 0x7472757374  # "trust"


def pg_setup(conn: Connection[Any], ddl: str) -> None:
    """Run ``ddl`` once per database, safely when many workers start together."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        for statement in (s.strip() for s in ddl.split(";")):
            if statement:
                conn.execute(statement)


def open_pool(
    url: str, *, max_size: int = 4, name: str = "trustgate", read_only: bool = False
) -> ConnectionPool[Connection[dict[str, Any]]]:
    """A small autocommit connection pool, every wait bounded, failing fast with a typed error.

    The bounds (connect and statement timeouts, the client deadline, keepalives, the
    pool's wait) are those of :mod:`trustgate.persistence._pglimits`, read from the
    URL and libpq's environment or defaulted. ``read_only=True``: every connection has
    ``default_transaction_read_only=on``, so the server itself refuses any write or DDL
    a read path might attempt.
    """
    try:
        from trustgate.persistence._pglimits import open_pool as bounded_pool
        from trustgate.persistence._pglimits import pg_target
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ConfigurationError(
            f"PostgreSQL needs the 'postgres' extra: {install_hint('postgres')} ({exc})"
        ) from exc
    return bounded_pool(pg_target(url, read_only=read_only), max_size=max_size, name=name)


class PostgresLedger(ArtifactLedger):
    """Artifacts in PostgreSQL, immutable across every process that shares the database.

    Args:
        conn: a connection URL (the ledger opens and owns a small pool), or a
            ``psycopg_pool.ConnectionPool`` the caller owns (``trustgate.persistence.connect``
            passes the pool its checkpointer uses, so everything is one database).
        key: the key rows are sealed under (see :mod:`trustgate.evidence.keys`);
            every worker sharing the database needs the same one
            (``TRUSTGATE_LEDGER_KEY`` / ``TRUSTGATE_LEDGER_KEY_FILE``), so without one
            the ledger refuses to start (:class:`~trustgate.errors.LedgerKeyError`).
        allow_readable_key_file: accept a key file group or others can read.
    """

    def __init__(
        self,
        conn: str | ConnectionPool[Any],
        *,
        key: KeyArg = None,
        allow_readable_key_file: bool = False,
    ) -> None:
        self._set_key(
            key,
            required_for="the PostgreSQL ledger",
            allow_readable_key_file=allow_readable_key_file,
        )
        if isinstance(conn, str):
            self._pool: ConnectionPool[Any] = open_pool(conn, max_size=2, name="trustgate-ledger")
            self._owns_pool = True
        else:
            self._pool = conn
            self._owns_pool = False
        self._closed = threading.Event()
        with self._pool.connection() as c:
            pg_setup(c, PG_LEDGER_SCHEMA)

    def close(self) -> None:
        """Close the pool if this ledger opened it."""
        if self._owns_pool and not self._closed.is_set():
            self._closed.set()
            self._pool.close()

    @contextlib.contextmanager
    def _cur(self) -> Iterator[Cursor[tuple[Any, ...]]]:
        from psycopg.rows import tuple_row

        with self._pool.connection() as c, c.cursor(row_factory=tuple_row) as cur:
            yield cur

    def _fetch(self, artifact_id: str) -> Artifact | None:
        with self._cur() as c:
            row = c.execute(
                "SELECT id, body, content_hash FROM trustgate_artifacts WHERE id = %s",
                (artifact_id,),
            ).fetchone()
        return parse_row(row[0], row[1], row[2]) if row else None

    def _ids(self) -> list[str]:
        with self._cur() as c:
            rows = c.execute(
                "SELECT id FROM trustgate_artifacts ORDER BY acquired_at, id"
            ).fetchall()
        return [r[0] for r in rows]

    def __len__(self) -> int:
        with self._cur() as c:
            row = c.execute("SELECT count(*) FROM trustgate_artifacts").fetchone()
        return int(row[0]) if row else 0

    def _insert_if_absent(self, artifact: Artifact) -> Artifact:
        with self._cur() as c:
            c.execute(
                "INSERT INTO trustgate_artifacts (id, content_hash, acquired_at, body) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (
                    artifact.id,
                    artifact.content_hash,
                    artifact.acquired_at,
                    artifact.model_dump_json(),
                ),
            )
        stored = self._fetch(artifact.id)
        if stored is None:  # pragma: no cover - a row just inserted or kept cannot vanish
            raise LedgerTampered(f"artifact {artifact.id[:12]} vanished from the ledger")
        return stored

    def _get_seal(self, artifact_id: str, key_id: str) -> str | None:
        with self._cur() as c:
            row = c.execute(
                "SELECT mac FROM trustgate_artifact_seals WHERE id = %s AND key_id = %s",
                (artifact_id, key_id),
            ).fetchone()
        return str(row[0]) if row else None

    def _add_seal(self, artifact_id: str, key_id: str, mac: str) -> None:
        with self._cur() as c:
            c.execute(
                "INSERT INTO trustgate_artifact_seals (id, key_id, mac) VALUES (%s, %s, %s) "
                "ON CONFLICT (id, key_id) DO NOTHING",
                (artifact_id, key_id, mac),
            )

    def _mark_tampered(self, artifact_id: str, reason: str, status: str = "tampered") -> None:
        with self._cur() as c:
            c.execute(
                "INSERT INTO trustgate_artifact_marks (id, status, reason, marked_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (artifact_id, status, reason, datetime.now(UTC)),
            )

    def _get_mark(self, artifact_id: str) -> tuple[str, str] | None:
        with self._cur() as c:
            row = c.execute(
                "SELECT status, reason FROM trustgate_artifact_marks WHERE id = %s",
                (artifact_id,),
            ).fetchone()
        return (str(row[0]), str(row[1])) if row else None
