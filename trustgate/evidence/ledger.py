"""Where frozen artifacts are kept: put-if-absent, never overwritten, tamper marks on the side.

Immutability is enforced by the store's own conditional insert, not by get-then-put:
two threads (or, later, two processes) acquiring the same coordinate at once end with
one artifact and the first ``acquired_at``.

**Stored rows are not trusted.** Whoever can write the database can edit a row, so
every read re-checks what it serves:

* the excerpt is re-hashed against the stored ``content_hash``, the id is re-derived
  from the coordinate, and the row's key column must be the body's id; a row that
  fails is ``ledger_tampered`` (:class:`~trustgate.errors.LedgerTampered` from
  :meth:`ArtifactLedger.get`, status ``"tampered"`` from
  :meth:`ArtifactLedger.verification`, a ``ledger_tampered`` finding from the trust
  bars and :meth:`ArtifactLedger.reverify`), never ``verified``;
* a hash alone cannot stop a *forged* row (anyone can compute sha256 over invented
  bytes and derive a matching id), nor a status flipped on a consistent row. So each
  row this ledger writes is **sealed**: an HMAC-SHA256, under a key kept outside the
  database, over the canonical JSON of every field (id, coordinate, hash, excerpt,
  ``acquired_at``, ``verification``). A row counts as ``verified`` only with a valid
  seal under this ledger's key; a seal under this key that does not fit the row is
  ``ledger_tampered``; a row with no seal under this key (written under another key,
  by another process without a key, or forged) counts as ``unverified`` until
  :meth:`ArtifactLedger.reverify` re-reads its source and seals it.

**Key management** (:mod:`trustgate.evidence.keys`). The key is, in order: the
``key=`` argument; the environment variable ``TRUSTGATE_LEDGER_KEY`` (the key itself);
``TRUSTGATE_LEDGER_KEY_FILE`` (a file holding it, readable by the gate's user only: a
file group or others can read is refused unless ``allow_readable_key_file=True`` or
``TRUSTGATE_LEDGER_KEY_FILE_ALLOW_READABLE=1``). At least 16 bytes;
``python -c "import secrets; print(secrets.token_hex(32))"`` makes a good one. Every
process that shares a ledger needs the same key, so a ledger other processes or a
restart read (``PostgresLedger``, a ``SqliteLedger`` on a file) refuses to start
without one (:class:`~trustgate.errors.LedgerKeyError`, saying how to set it); an
``InMemoryLedger`` or a ``:memory:`` SQLite ledger takes a random key, and
``key=EPHEMERAL_KEY`` asks for one explicitly. The same key seals the rows of the
report log (:mod:`trustgate.persistence`).
Rows are sealed under a key id (a fingerprint of the key, never the key), so several
keys can coexist during a rotation: reverify under the new key, then retire the old.

**Threat model.** Protects against anyone who can write the database but does not hold
the key: edited excerpts, hashes or statuses, forged rows, seals copied between rows,
rows moved under another id. Does not protect against: a holder of the key (they can
seal anything: keep it out of the agent's reach, e.g. not in an environment a tool
subprocess inherits); deleting rows, seals or marks (an artifact then is unknown or
unverified: the check fails closed, but it is not reported as tampering); rolling the
whole database back to an earlier state (artifacts are immutable, so this only loses
rows); and callers of :meth:`ArtifactLedger.put`, which is trusted code: it seals what
it is given, and trustgate only gives it what it acquired itself.
"""

from __future__ import annotations

import hmac
import logging
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from trustgate._claims import Locator
from trustgate._findings import Finding
from trustgate.errors import (
    ArtifactIntegrityError,
    EvidenceRefused,
    GitError,
    LedgerConflict,
    LedgerTampered,
)
from trustgate.evidence.artifacts import (
    Artifact,
    Connector,
    FileSource,
    _canonical,
    acquire_external,
)
from trustgate.evidence.keys import (
    EPHEMERAL_KEY,
    KEY_ENV,
    KEY_FILE_ENV,
    KeyArg,
    SealKey,
    resolve_key,
)

__all__ = [
    "EPHEMERAL_KEY",
    "KEY_ENV",
    "KEY_FILE_ENV",
    "ArtifactLedger",
    "ArtifactStatus",
    "InMemoryLedger",
    "SqliteLedger",
]

logger = logging.getLogger(__name__)

EffectiveVerification = Literal["verified", "unverified", "tampered"]
_VERIFIER = "reverify"
_SEAL_CONTEXT = b"trustgate-ledger-seal-v1\x00"
# mark statuses: the source changed under a verified artifact / the stored row was edited
_SOURCE_CHANGED = "tampered"
_ROW_TAMPERED = "ledger_tampered"


@dataclass(frozen=True, slots=True)
class ArtifactStatus:
    """What a stored artifact counts as now, and why.

    ``code`` is ``None`` for a verified or a plainly unverified artifact, ``"unsealed"``
    for a verified row without a seal under this ledger's key, ``"ledger_tampered"``
    for a row that fails its integrity data, ``"tampered"`` for one whose source
    changed since acquisition (see :meth:`ArtifactLedger.reverify`).
    """

    artifact: Artifact | None
    verification: EffectiveVerification | None
    code: str | None = None
    reason: str | None = None


def parse_row(row_id: str, body: str, content_hash: str | None) -> Artifact:
    """An artifact from a stored row, or ``LedgerTampered`` when the row is not one."""
    try:
        artifact = Artifact.model_validate_json(body)
    except ValidationError as exc:
        raise LedgerTampered(
            f"artifact {row_id[:12]}: the stored row is not an artifact "
            f"({exc.error_count()} error(s): {exc.errors()[0]['msg']})"
        ) from None
    if artifact.id != row_id:
        raise LedgerTampered(
            f"artifact {row_id[:12]}: the stored row holds artifact {artifact.id[:12]}"
        )
    if content_hash != artifact.content_hash:
        raise LedgerTampered(
            f"artifact {row_id[:12]}: the row's content_hash column does not match its body"
        )
    return artifact


class ArtifactLedger(ABC):
    """Append-only store of artifacts, keyed by their coordinate-derived id.

    Args:
        key: the key seals are made under (see the module docstring); default from
            ``TRUSTGATE_LEDGER_KEY`` / ``TRUSTGATE_LEDGER_KEY_FILE``. Required for a
            ledger other processes read; ``EPHEMERAL_KEY`` for a random one.
        allow_readable_key_file: accept a key file group or others can read.
    """

    _seal_key: SealKey

    def __init__(self, *, key: KeyArg = None, allow_readable_key_file: bool = False) -> None:
        self._set_key(key, allow_readable_key_file=allow_readable_key_file)

    def _set_key(
        self,
        key: KeyArg,
        *,
        required_for: str | None = None,
        allow_readable_key_file: bool = False,
    ) -> str:
        self._seal_key = resolve_key(
            key, required_for=required_for, allow_readable_key_file=allow_readable_key_file
        )
        return self._seal_key.origin

    @property
    def seal_key(self) -> SealKey:
        """The key this ledger seals under (its ``key_id`` is public; the secret is not
        shown in its repr)."""
        return self._keyed_key()

    def _keyed_key(self) -> SealKey:
        if not hasattr(self, "_seal_key"):  # a subclass that did not call __init__
            self._set_key(None)
        return self._seal_key

    def _keyed(self) -> tuple[bytes, str]:
        k = self._keyed_key()
        return k.secret, k.key_id

    def _mac(self, artifact: Artifact) -> str:
        return self._keyed_key().mac(_SEAL_CONTEXT, _canonical(artifact.model_dump(mode="json")))

    # -- writing -----------------------------------------------------------------

    def put(self, artifact: Artifact) -> Artifact:
        """Store ``artifact`` unless its id is already held; return what is stored.

        Offering different content under an existing id raises ``LedgerConflict``; an
        artifact whose id or hash does not match its own fields raises
        ``ArtifactIntegrityError`` before anything is written; a stored row that fails
        its integrity data raises ``LedgerTampered``. The stored artifact is sealed
        under this ledger's key (the caller vouches that it acquired the bytes).
        """
        artifact.check_integrity()
        stored = self._insert_if_absent(artifact)
        self._check_row(stored)
        if not stored.same_content(artifact):
            raise LedgerConflict(
                f"artifact {artifact.id[:12]} is already stored with different content; "
                "artifacts are immutable"
            )
        self._seal(stored)
        return stored

    def _seal(self, artifact: Artifact) -> None:
        _, key_id = self._keyed()
        self._add_seal(artifact.id, key_id, self._mac(artifact))

    # -- reading -----------------------------------------------------------------

    def _check_row(self, artifact: Artifact) -> bool:
        """Raise ``LedgerTampered`` unless the row fits its integrity data and any seal
        under this key; returns whether such a seal exists."""
        try:
            artifact.check_integrity()
        except ArtifactIntegrityError as exc:
            raise LedgerTampered(str(exc)) from None
        _, key_id = self._keyed()
        mac = self._get_seal(artifact.id, key_id)
        if mac is None:
            return False
        if not hmac.compare_digest(mac, self._mac(artifact)):
            raise LedgerTampered(
                f"artifact {artifact.id[:12]}: the row does not match its seal (a field was "
                "edited after it was stored)"
            )
        return True

    def inspect(self, artifact_id: str) -> ArtifactStatus:
        """The artifact as stored, what it counts as now, and why (re-checked now).

        A row that fails its integrity data is also marked, so restoring it later does
        not make it trusted again.
        """
        try:
            artifact = self._fetch(artifact_id)
            if artifact is None:
                return ArtifactStatus(None, None)
            sealed = self._check_row(artifact)
        except LedgerTampered as exc:
            reason = exc.reason
            self._mark_tampered(artifact_id, reason, _ROW_TAMPERED)
            return ArtifactStatus(None, "tampered", _ROW_TAMPERED, reason)
        mark = self._get_mark(artifact_id)
        if mark is not None:
            return ArtifactStatus(artifact, "tampered", mark[0], mark[1])
        if artifact.verification == "unverified":
            return ArtifactStatus(artifact, "unverified")
        if not sealed:
            return ArtifactStatus(
                artifact,
                "unverified",
                "unsealed",
                f"{artifact.uri} carries no seal under this ledger's key (stored by another "
                "key, another process without one, or forged); reverify() re-reads its source",
            )
        return ArtifactStatus(artifact, "verified")

    def get(self, artifact_id: str) -> Artifact | None:
        """The stored artifact, re-checked on this read.

        Raises ``LedgerTampered`` when the row fails its integrity data. A verified row
        without a seal under this ledger's key is returned as ``unverified``: its status
        cannot be vouched for (see :meth:`inspect` for the reason).
        """
        status = self.inspect(artifact_id)
        if status.code == _ROW_TAMPERED:
            raise LedgerTampered(status.reason or "stored row fails its integrity data")
        artifact = status.artifact
        if artifact is not None and status.code == "unsealed":
            return artifact.model_copy(update={"verification": "unverified"})
        return artifact

    def __contains__(self, artifact_id: object) -> bool:
        """Whether a row is stored under the id (tampered or not)."""
        if not isinstance(artifact_id, str):
            return False
        try:
            return self._fetch(artifact_id) is not None
        except LedgerTampered:
            return True

    def __iter__(self) -> Iterator[Artifact]:
        """Every artifact, each re-checked as by :meth:`get` (a tampered row raises)."""
        for artifact_id in self._ids():
            artifact = self.get(artifact_id)
            if artifact is not None:
                yield artifact

    def verification(self, artifact_id: str) -> EffectiveVerification | None:
        """What the artifact counts as now: tampering outranks the stored status, and
        ``verified`` needs a valid seal under this ledger's key."""
        return self.inspect(artifact_id).verification

    def reverify(
        self,
        artifact_id: str,
        workspace: FileSource | None = None,
        connectors: Mapping[str, Connector] = {},
    ) -> Finding:
        """Re-check the stored row, then re-read the coordinate without any cache.

        A row that fails its integrity data fails ``ledger_tampered``. A source whose
        hash changed (or can no longer be read) fails ``tampered`` and marks the
        artifact, so it no longer counts as verified for trust bars. A match seals the
        row under this ledger's key (re-establishing a status sealed under another).
        """
        status = self.inspect(artifact_id)
        if status.code == _ROW_TAMPERED:
            return Finding.failed(
                _VERIFIER, _ROW_TAMPERED, status.reason or "", subject=artifact_id
            )
        artifact = status.artifact
        if artifact is None:
            return Finding.failed(
                _VERIFIER,
                "unknown_artifact",
                f"no artifact {artifact_id!r} in the ledger",
                subject=artifact_id,
            )
        if status.code == _SOURCE_CHANGED:
            return Finding.failed(
                _VERIFIER, _SOURCE_CHANGED, status.reason or "", subject=artifact.id
            )
        if artifact.verification == "unverified":
            return Finding.failed(
                _VERIFIER,
                "unverified_evidence",
                f"{artifact.uri} was never verified; there are no bytes to compare",
                subject=artifact.id,
            )
        try:
            if artifact.kind == "file":
                if workspace is None:
                    return Finding.failed(
                        _VERIFIER,
                        "no_source",
                        "reverifying a file artifact needs the workspace",
                        subject=artifact.id,
                    )
                fresh = workspace.acquire(
                    Locator(
                        path=artifact.path or "",
                        start_line=artifact.start_line,
                        end_line=artifact.end_line,
                        revision=artifact.revision,
                    )
                )
            else:
                fresh = acquire_external(artifact.source, artifact.uri, connectors)
                if fresh.verification != "verified":
                    return Finding.failed(
                        _VERIFIER,
                        "no_source",
                        f"no connector for {artifact.source!r} to refetch {artifact.uri}",
                        subject=artifact.id,
                    )
        except (EvidenceRefused, GitError) as exc:
            reason = f"{artifact.uri} can no longer be read: {exc}"
            self._mark_tampered(artifact.id, reason)
            return Finding.failed(
                _VERIFIER, "tampered", reason, subject=artifact.id, detail={"uri": artifact.uri}
            )
        if fresh.content_hash != artifact.content_hash:
            reason = (
                f"{artifact.uri} changed since acquisition: sha256 "
                f"{(artifact.content_hash or '')[:12]} -> {(fresh.content_hash or '')[:12]}"
            )
            self._mark_tampered(artifact.id, reason)
            return Finding.failed(
                _VERIFIER,
                "tampered",
                reason,
                subject=artifact.id,
                detail={
                    "uri": artifact.uri,
                    "expected": artifact.content_hash,
                    "actual": fresh.content_hash,
                },
            )
        self._seal(artifact)
        return Finding.ok(
            _VERIFIER,
            f"{artifact.uri} still hashes to {(artifact.content_hash or '')[:12]}",
            subject=artifact.id,
        )

    # -- storage (one implementation per backend) ---------------------------------

    @abstractmethod
    def _fetch(self, artifact_id: str) -> Artifact | None:
        """The stored row as an artifact (``parse_row``); ``LedgerTampered`` if it is
        not one."""

    @abstractmethod
    def _ids(self) -> list[str]:
        """Every stored id, oldest first."""

    @abstractmethod
    def _insert_if_absent(self, artifact: Artifact) -> Artifact: ...

    @abstractmethod
    def _get_seal(self, artifact_id: str, key_id: str) -> str | None: ...

    @abstractmethod
    def _add_seal(self, artifact_id: str, key_id: str, mac: str) -> None:
        """Store a seal unless one under ``key_id`` is already held (never overwrite)."""

    @abstractmethod
    def _mark_tampered(self, artifact_id: str, reason: str, status: str = "tampered") -> None: ...

    @abstractmethod
    def _get_mark(self, artifact_id: str) -> tuple[str, str] | None:
        """``(status, reason)`` of the artifact's tamper mark, if any."""


class InMemoryLedger(ArtifactLedger):
    """A ledger in a dict, for tests and notebooks (sealed under a random key unless
    one is given: it lives no longer than the process anyway)."""

    def __init__(self, *, key: KeyArg = None, allow_readable_key_file: bool = False) -> None:
        super().__init__(key=key, allow_readable_key_file=allow_readable_key_file)
        self._lock = threading.Lock()
        self._items: dict[str, Artifact] = {}
        self._seals: dict[tuple[str, str], str] = {}
        self._tampered: dict[str, tuple[str, str]] = {}

    def _fetch(self, artifact_id: str) -> Artifact | None:
        with self._lock:
            artifact = self._items.get(artifact_id)
        if artifact is not None and artifact.id != artifact_id:
            raise LedgerTampered(
                f"artifact {artifact_id[:12]}: the entry holds artifact {artifact.id[:12]}"
            )
        return artifact

    def _ids(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def _insert_if_absent(self, artifact: Artifact) -> Artifact:
        with self._lock:
            return self._items.setdefault(artifact.id, artifact)

    def _get_seal(self, artifact_id: str, key_id: str) -> str | None:
        with self._lock:
            return self._seals.get((artifact_id, key_id))

    def _add_seal(self, artifact_id: str, key_id: str, mac: str) -> None:
        with self._lock:
            self._seals.setdefault((artifact_id, key_id), mac)

    def _mark_tampered(self, artifact_id: str, reason: str, status: str = "tampered") -> None:
        with self._lock:
            self._tampered.setdefault(artifact_id, (status, reason))

    def _get_mark(self, artifact_id: str) -> tuple[str, str] | None:
        with self._lock:
            return self._tampered.get(artifact_id)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS trustgate_artifacts (
    id TEXT PRIMARY KEY,
    content_hash TEXT,
    acquired_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trustgate_artifact_marks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    marked_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trustgate_artifact_seals (
    id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    mac TEXT NOT NULL,
    PRIMARY KEY (id, key_id)
);
"""


class SqliteLedger(ArtifactLedger):
    """The embedded default: artifacts in a SQLite table beside LangGraph's checkpoints.

    Put-if-absent is ``INSERT ... ON CONFLICT(id) DO NOTHING`` followed by reading the
    stored row, so concurrent writers (threads or processes) agree on one artifact.
    Seals live in ``trustgate_artifact_seals`` (one per artifact and key id).

    A ledger on a file (or on a connection to one) is read by other processes and
    after a restart, so it needs a configured key (``key=``, ``TRUSTGATE_LEDGER_KEY``
    or ``TRUSTGATE_LEDGER_KEY_FILE``); ``:memory:`` takes a random one.
    """

    def __init__(
        self,
        path: str | Path | sqlite3.Connection = ":memory:",
        *,
        key: KeyArg = None,
        allow_readable_key_file: bool = False,
    ) -> None:
        where = _sqlite_file(path)
        self._set_key(
            key,
            required_for=None if where is None else f"the SQLite ledger {where!r}",
            allow_readable_key_file=allow_readable_key_file,
        )
        if isinstance(path, sqlite3.Connection):
            self._conn = path
        else:
            if where is not None:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), check_same_thread=False, timeout=30, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._lock = threading.Lock()
        with self._lock:
            self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def _fetch(self, artifact_id: str) -> Artifact | None:
        rows = self._query(
            "SELECT id, body, content_hash FROM trustgate_artifacts WHERE id = ?", (artifact_id,)
        )
        return parse_row(*rows[0]) if rows else None

    def _ids(self) -> list[str]:
        rows = self._query("SELECT id FROM trustgate_artifacts ORDER BY acquired_at, id")
        return [r[0] for r in rows]

    def __len__(self) -> int:
        return int(self._query("SELECT count(*) FROM trustgate_artifacts")[0][0])

    def _insert_if_absent(self, artifact: Artifact) -> Artifact:
        with self._lock:
            self._conn.execute(
                "INSERT INTO trustgate_artifacts (id, content_hash, acquired_at, body) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
                (
                    artifact.id,
                    artifact.content_hash,
                    artifact.acquired_at.isoformat(),
                    artifact.model_dump_json(),
                ),
            )
        stored = self._fetch(artifact.id)
        if stored is None:  # pragma: no cover - a row just inserted or kept cannot vanish
            raise LedgerTampered(f"artifact {artifact.id[:12]} vanished from the ledger")
        return stored

    def _get_seal(self, artifact_id: str, key_id: str) -> str | None:
        rows = self._query(
            "SELECT mac FROM trustgate_artifact_seals WHERE id = ? AND key_id = ?",
            (artifact_id, key_id),
        )
        return str(rows[0][0]) if rows else None

    def _add_seal(self, artifact_id: str, key_id: str, mac: str) -> None:
        self._query(
            "INSERT INTO trustgate_artifact_seals (id, key_id, mac) VALUES (?, ?, ?) "
            "ON CONFLICT(id, key_id) DO NOTHING",
            (artifact_id, key_id, mac),
        )

    def _mark_tampered(self, artifact_id: str, reason: str, status: str = "tampered") -> None:
        self._query(
            "INSERT INTO trustgate_artifact_marks (id, status, reason, marked_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
            (artifact_id, status, reason, datetime.now(UTC).isoformat()),
        )

    def _get_mark(self, artifact_id: str) -> tuple[str, str] | None:
        rows = self._query(
            "SELECT status, reason FROM trustgate_artifact_marks WHERE id = ?", (artifact_id,)
        )
        return (str(rows[0][0]), str(rows[0][1])) if rows else None


def _sqlite_file(path: str | Path | sqlite3.Connection) -> str | None:
    """The file a SQLite ledger lives in, or ``None`` for an in-memory database."""
    if isinstance(path, sqlite3.Connection):
        try:
            rows = path.execute("PRAGMA database_list").fetchall()
        except sqlite3.Error as exc:
            logger.debug("cannot tell which file a SQLite connection is on: %s", exc)
            return "a SQLite connection"
        main = next((r[2] for r in rows if r[1] == "main"), "")
        return str(main) or None
    text = str(path)
    if text in ("", ":memory:") or text.startswith("file::memory:"):
        return None
    return text
