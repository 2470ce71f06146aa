"""Where frozen artifacts are kept: put-if-absent, never overwritten, tamper marks on the side.

Immutability is enforced by the store's own conditional insert, not by get-then-put:
two threads (or, later, two processes) acquiring the same coordinate at once end with
one artifact and the first ``acquired_at``.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from trustgate.errors import EvidenceRefused, GitError, LedgerConflict
from trustgate.evidence.artifacts import Artifact, Connector, acquire_external
from trustgate.findings import Finding

if TYPE_CHECKING:
    from trustgate.evidence.workspace import Workspace

__all__ = ["ArtifactLedger", "InMemoryLedger", "SqliteLedger"]

EffectiveVerification = Literal["verified", "unverified", "tampered"]
_VERIFIER = "reverify"


class ArtifactLedger(ABC):
    """Append-only store of artifacts, keyed by their coordinate-derived id."""

    def put(self, artifact: Artifact) -> Artifact:
        """Store ``artifact`` unless its id is already held; return what is stored.

        Offering different content under an existing id raises ``LedgerConflict``; an
        artifact whose id or hash does not match its own fields raises
        ``ArtifactIntegrityError`` before anything is written.
        """
        artifact.check_integrity()
        stored = self._insert_if_absent(artifact)
        if not stored.same_content(artifact):
            raise LedgerConflict(
                f"artifact {artifact.id[:12]} is already stored with different content; "
                "artifacts are immutable"
            )
        return stored

    def __contains__(self, artifact_id: object) -> bool:
        return isinstance(artifact_id, str) and self.get(artifact_id) is not None

    def verification(self, artifact_id: str) -> EffectiveVerification | None:
        """What the artifact counts as now: a tamper mark outranks the stored status."""
        artifact = self.get(artifact_id)
        if artifact is None:
            return None
        if self._is_tampered(artifact_id):
            return "tampered"
        return artifact.verification

    def reverify(
        self,
        artifact_id: str,
        workspace: Workspace | None = None,
        connectors: Mapping[str, Connector] = {},
    ) -> Finding:
        """Re-read the artifact's coordinate without any cache and compare hashes.

        A mismatch (or a coordinate that can no longer be read) fails ``tampered`` and
        marks the artifact, so it no longer counts as verified for trust bars.
        """
        artifact = self.get(artifact_id)
        if artifact is None:
            return Finding.failed(
                _VERIFIER,
                "unknown_artifact",
                f"no artifact {artifact_id!r} in the ledger",
                subject=artifact_id,
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
                from trustgate.claims import Locator

                fresh = workspace.acquire(
                    Locator(
                        path=artifact.path or "",
                        start_line=artifact.start_line,
                        end_line=artifact.end_line,
                        revision=artifact.revision,
                    ),
                    use_cache=False,
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
        return Finding.ok(
            _VERIFIER,
            f"{artifact.uri} still hashes to {(artifact.content_hash or '')[:12]}",
            subject=artifact.id,
        )

    @abstractmethod
    def get(self, artifact_id: str) -> Artifact | None: ...

    @abstractmethod
    def __iter__(self) -> Iterator[Artifact]: ...

    @abstractmethod
    def _insert_if_absent(self, artifact: Artifact) -> Artifact: ...

    @abstractmethod
    def _mark_tampered(self, artifact_id: str, reason: str) -> None: ...

    @abstractmethod
    def _is_tampered(self, artifact_id: str) -> bool: ...


class InMemoryLedger(ArtifactLedger):
    """A ledger in a dict, for tests and notebooks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Artifact] = {}
        self._tampered: dict[str, str] = {}

    def get(self, artifact_id: str) -> Artifact | None:
        with self._lock:
            return self._items.get(artifact_id)

    def __iter__(self) -> Iterator[Artifact]:
        with self._lock:
            return iter(list(self._items.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def _insert_if_absent(self, artifact: Artifact) -> Artifact:
        with self._lock:
            return self._items.setdefault(artifact.id, artifact)

    def _mark_tampered(self, artifact_id: str, reason: str) -> None:
        with self._lock:
            self._tampered.setdefault(artifact_id, reason)

    def _is_tampered(self, artifact_id: str) -> bool:
        with self._lock:
            return artifact_id in self._tampered


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
"""


class SqliteLedger(ArtifactLedger):
    """The embedded default: artifacts in a SQLite table beside LangGraph's checkpoints.

    Put-if-absent is ``INSERT ... ON CONFLICT(id) DO NOTHING`` followed by reading the
    stored row, so concurrent writers (threads or processes) agree on one artifact.
    """

    def __init__(self, path: str | Path | sqlite3.Connection = ":memory:") -> None:
        if isinstance(path, sqlite3.Connection):
            self._conn = path
        else:
            if str(path) != ":memory:":
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

    def get(self, artifact_id: str) -> Artifact | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT body FROM trustgate_artifacts WHERE id = ?", (artifact_id,)
            ).fetchone()
        return Artifact.model_validate_json(row[0]) if row else None

    def __iter__(self) -> Iterator[Artifact]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT body FROM trustgate_artifacts ORDER BY acquired_at, id"
            ).fetchall()
        return iter([Artifact.model_validate_json(r[0]) for r in rows])

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM trustgate_artifacts").fetchone()[0])

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
            row = self._conn.execute(
                "SELECT body FROM trustgate_artifacts WHERE id = ?", (artifact.id,)
            ).fetchone()
        return Artifact.model_validate_json(row[0])

    def _mark_tampered(self, artifact_id: str, reason: str) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO trustgate_artifact_marks (id, status, reason, marked_at) "
                "VALUES (?, 'tampered', ?, ?) ON CONFLICT(id) DO NOTHING",
                (artifact_id, reason, datetime.now(UTC).isoformat()),
            )

    def _is_tampered(self, artifact_id: str) -> bool:
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM trustgate_artifact_marks WHERE id = ? AND status = 'tampered'",
                (artifact_id,),
            ).fetchone()
        return row is not None
