"""Frozen evidence: artifacts identified by coordinate + content hash.

The agent supplies a locator; trustgate reads the bytes, hashes them and freezes them.
An artifact's ``id`` is derived from its coordinate and its hash, so two coordinates
holding identical bytes never collapse into one piece of provenance, and changed bytes
at the same coordinate produce a new artifact instead of mutating the old one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from trustgate._claims import Locator
from trustgate.errors import ArtifactIntegrityError, EvidenceRefused

__all__ = [
    "Artifact",
    "ArtifactStore",
    "Connector",
    "FileSource",
    "Verification",
    "acquire_external",
    "artifact_id",
]

Verification = Literal["verified", "unverified"]


def _canonical(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def artifact_id(coordinate: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a coordinate (``kind`` + location + ``content_hash``)."""
    return hashlib.sha256(_canonical(coordinate)).hexdigest()


class Artifact(BaseModel):
    """An immutable piece of evidence: bytes trustgate itself read, hashed at acquisition.

    ``excerpt`` is the exact text of the bytes read (cited lines with their line
    terminators, or the whole file); ``content_hash`` is the sha256 of those bytes.
    An artifact whose connector was not configured holds no excerpt and is
    ``unverified``: an agent's text is never stored as the excerpt.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Literal["file", "external"]
    uri: str
    source: str
    revision: str | None = None
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    content_hash: str | None
    excerpt: str | None
    acquired_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    verification: Verification

    def coordinate(self) -> dict[str, Any]:
        """The fields the id is derived from."""
        if self.kind == "file":
            return {
                "kind": "file",
                "revision": self.revision,
                "path": self.path,
                "start_line": self.start_line,
                "end_line": self.end_line,
                "content_hash": self.content_hash,
            }
        return {
            "kind": "external",
            "source": self.source,
            "uri": self.uri,
            "content_hash": self.content_hash,
        }

    def check_integrity(self) -> None:
        """Raise ``ArtifactIntegrityError`` unless id and hash agree with the fields."""
        if self.excerpt is not None:
            digest = hashlib.sha256(self.excerpt.encode("utf-8")).hexdigest()
            if digest != self.content_hash:
                raise ArtifactIntegrityError(
                    f"artifact {self.id[:12]}: excerpt does not hash to its content_hash"
                )
        elif self.verification == "verified":
            raise ArtifactIntegrityError(
                f"artifact {self.id[:12]}: marked verified but holds no excerpt"
            )
        if artifact_id(self.coordinate()) != self.id:
            raise ArtifactIntegrityError(
                f"artifact {self.id[:12]}: id does not derive from its coordinate and hash"
            )

    def same_content(self, other: Artifact) -> bool:
        return (self.id, self.content_hash, self.excerpt, self.verification) == (
            other.id,
            other.content_hash,
            other.excerpt,
            other.verification,
        )

    def _repr_html_(self) -> str:
        from trustgate._render import artifact_html

        return artifact_html(self)

    def __str__(self) -> str:
        return f"{self.uri} [{self.verification}, sha256:{(self.content_hash or '-')[:12]}]"


def file_artifact(
    *,
    path: str,
    revision: str | None,
    start_line: int | None,
    end_line: int | None,
    data: bytes | memoryview,
    text: str,
    content_hash: str | None = None,
) -> Artifact:
    """The artifact for ``data`` (the exact bytes read) and ``text`` (their decoding).
    ``content_hash`` is their hex sha256 when the reader computed it as it read."""
    if content_hash is None:
        content_hash = hashlib.sha256(data).hexdigest()
    coordinate = {
        "kind": "file",
        "revision": revision,
        "path": path,
        "start_line": start_line,
        "end_line": end_line,
        "content_hash": content_hash,
    }
    fragment = ""
    if start_line is not None:
        fragment = f"#L{start_line}" + (f"-L{end_line}" if end_line != start_line else "")
    uri = f"git:{revision}:{path}{fragment}" if revision else f"file:{path}{fragment}"
    return Artifact(
        id=artifact_id(coordinate),
        kind="file",
        uri=uri,
        source="workspace" if revision is None else "git",
        revision=revision,
        path=path,
        start_line=start_line,
        end_line=end_line,
        content_hash=content_hash,
        excerpt=text,
        verification="verified",
    )


class ArtifactStore(Protocol):
    """Where an acquisition puts what it froze (an ``ArtifactLedger``): the workspace
    needs only this, so the workspace and the ledger do not import each other."""

    def put(self, artifact: Artifact) -> Artifact:
        """Store ``artifact`` unless its id is held; return what is stored."""
        ...


class FileSource(Protocol):
    """What re-reads a file artifact's coordinate (a ``Workspace``), for the ledger's
    ``reverify``."""

    def acquire(self, locator: Locator) -> Artifact:
        """Read and freeze the bytes at ``locator`` now."""
        ...


@runtime_checkable
class Connector(Protocol):
    """Fetches the bytes behind an external URI (a ticket, a wiki page, a search hit).

    The connector is what makes external evidence verifiable: trustgate hashes and
    freezes exactly what it returned.
    """

    name: str

    def fetch(self, uri: str) -> bytes: ...


def acquire_external(
    source: str,
    uri: str,
    connectors: Mapping[str, Connector] | Sequence[Connector] = (),
) -> Artifact:
    """Acquire an external artifact through the connector registered for ``source``.

    Without a connector the artifact holds only its locator (no excerpt at all) and is
    ``unverified``: it can be cited, but it clears no trust bar that needs verification.
    A connector that fails or returns something that is not UTF-8 text is refused.
    """
    if not isinstance(source, str) or not source or not isinstance(uri, str) or not uri:
        raise EvidenceRefused("invalid_locator", "external evidence needs a source and a uri")
    registry = (
        dict(connectors) if isinstance(connectors, Mapping) else {c.name: c for c in connectors}
    )
    connector = registry.get(source)
    if connector is None:
        coordinate = {"kind": "external", "source": source, "uri": uri, "content_hash": None}
        return Artifact(
            id=artifact_id(coordinate),
            kind="external",
            uri=uri,
            source=source,
            content_hash=None,
            excerpt=None,
            verification="unverified",
        )
    try:
        data = connector.fetch(uri)
    except Exception as exc:  # a connector is user code: its failure is a refusal
        raise EvidenceRefused(
            "fetch_failed", f"connector {source!r} could not fetch {uri!r}: {exc}", path=uri
        ) from exc
    if not isinstance(data, (bytes, bytearray)):
        raise EvidenceRefused(
            "fetch_failed",
            f"connector {source!r} returned {type(data).__name__}, not bytes",
            path=uri,
        )
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceRefused(
            "not_utf8", f"{uri!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=uri
        ) from None
    content_hash = hashlib.sha256(data).hexdigest()
    coordinate = {"kind": "external", "source": source, "uri": uri, "content_hash": content_hash}
    return Artifact(
        id=artifact_id(coordinate),
        kind="external",
        uri=uri,
        source=source,
        content_hash=content_hash,
        excerpt=text,
        verification="verified",
    )
