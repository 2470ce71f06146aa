"""Stored rows are not trusted (issue 12, item 2): every read re-checks what it serves.

Each test edits rows of a real SQLite file or a real PostgreSQL database with SQL, the
way someone with write access to the database would, and asserts the ledger notices:
an edited excerpt or status is ``ledger_tampered``, never ``verified``; a forged row
without this ledger's seal is at most ``unverified``.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import write_tree

from trustgate.errors import ArtifactIntegrityError, ConfigurationError, LedgerKeyError
from trustgate.evidence.artifacts import artifact_id
from trustgate.evidence.ledger import EPHEMERAL_KEY, KEY_ENV, KEY_FILE_ENV, ArtifactLedger
from trustgate.files import Locator, SqliteLedger, Workspace, acquire_external
from trustgate.verifiers.base import Evidence
from trustgate.verifiers.files.checks import GroundingCheck
from trustgate.verifiers.files.trust import meets_trust_bar

KEY = b"k3y-for-tests-0123456789abcdef!!"
TEXT = "pool_size: 5\nmax_overflow: 0\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    write_tree(tmp_path / "repo", {"config/db.yaml": TEXT})
    return Workspace(tmp_path / "repo")


class Backend:
    """A ledger plus raw SQL on the database under it."""

    def __init__(
        self,
        name: str,
        open_ledger: Callable[..., ArtifactLedger],
        sql: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]],
    ) -> None:
        self.name = name
        self.open = open_ledger
        self.sql = sql

    def set_body_field(self, art_id: str, field: str, value: Any) -> None:
        """Edit one field of the stored JSON body, as a database user would."""
        import json

        (body,) = self.sql("SELECT body FROM trustgate_artifacts WHERE id = {p}", (art_id,))[0]
        data = json.loads(body)
        data[field] = value
        self.sql(
            "UPDATE trustgate_artifacts SET body = {p} WHERE id = {p}", (json.dumps(data), art_id)
        )


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        path = tmp_path / "ledger.db"

        def sql(query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            conn = sqlite3.connect(path, isolation_level=None)
            try:
                return conn.execute(query.replace("{p}", "?"), args).fetchall()
            finally:
                conn.close()

        opened: list[SqliteLedger] = []

        def open_sqlite(**kw: Any) -> ArtifactLedger:
            ledger = SqliteLedger(path, **kw)
            opened.append(ledger)
            return ledger

        yield Backend("sqlite", open_sqlite, sql)
        for ledger in opened:
            ledger.close()
        return
    import psycopg

    from trustgate.evidence.ledger_postgres import PostgresLedger

    url = request.getfixturevalue("pg_url")

    def pg_sql(query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(query.replace("{p}", "%s"), args)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    pg_opened: list[PostgresLedger] = []

    def open_pg(**kw: Any) -> ArtifactLedger:
        ledger = PostgresLedger(url, **kw)
        pg_opened.append(ledger)
        return ledger

    yield Backend("postgres", open_pg, pg_sql)
    for ledger in pg_opened:
        ledger.close()


def _acquire(ws: Workspace, ledger: ArtifactLedger) -> str:
    art = ws.acquire(Locator(path="config/db.yaml", start_line=1), ledger)
    assert ledger.verification(art.id) == "verified"
    return art.id


def _bar(ledger: ArtifactLedger, art_id: str) -> list[str]:
    patch = {"db_pool_size": {"value": 5, "artifacts": [art_id]}}
    return [f.code for f in meets_trust_bar(patch, ledger, {"db_pool_size": "verified"})]


def test_edited_excerpt_is_tampered_on_every_read(backend: Backend, ws: Workspace) -> None:
    ledger = backend.open(key=KEY)
    art_id = _acquire(ws, ledger)
    backend.set_body_field(art_id, "excerpt", "pool_size: 50\n")

    with pytest.raises(ArtifactIntegrityError, match="ledger_tampered"):
        ledger.get(art_id)
    assert ledger.verification(art_id) == "tampered"
    assert "ledger_tampered" in _bar(ledger, art_id)
    assert "ok" not in _bar(ledger, art_id)
    finding = ledger.reverify(art_id, ws)  # the file itself is unchanged
    assert (finding.passed, finding.code) == (False, "ledger_tampered")
    assert art_id in ledger  # the row is there; it is just not trusted


def test_edited_excerpt_and_hash_break_the_id(backend: Backend, ws: Workspace) -> None:
    ledger = backend.open(key=KEY)
    art_id = _acquire(ws, ledger)
    forged = "pool_size: 50\n"
    backend.set_body_field(art_id, "excerpt", forged)
    backend.set_body_field(art_id, "content_hash", hashlib.sha256(forged.encode()).hexdigest())
    assert ledger.verification(art_id) == "tampered"
    assert ledger.reverify(art_id, ws).code == "ledger_tampered"


def test_status_flips_are_detected(backend: Backend, ws: Workspace) -> None:
    ledger = backend.open(key=KEY)
    art_id = _acquire(ws, ledger)
    ticket = ledger.put(acquire_external("tickets", "TCK-1"))  # no connector: unverified
    assert ledger.verification(ticket.id) == "unverified"

    backend.set_body_field(ticket.id, "verification", "verified")
    assert ledger.verification(ticket.id) == "tampered"
    assert "ledger_tampered" in _bar(ledger, ticket.id)

    backend.set_body_field(art_id, "verification", "unverified")
    assert ledger.verification(art_id) == "tampered"

    # a status flip on a row whose excerpt and id are made consistent: only the seal
    # (a MAC under a key the database does not hold) can tell, and it does
    backend.set_body_field(art_id, "verification", "verified")
    backend.set_body_field(art_id, "acquired_at", "2001-01-01T00:00:00Z")
    assert ledger.verification(art_id) == "tampered"


def test_forged_row_is_never_verified(backend: Backend, ws: Workspace) -> None:
    """A complete, self-consistent row inserted with SQL carries no valid seal."""
    ledger = backend.open(key=KEY)
    real_id = _acquire(ws, ledger)
    (body,) = backend.sql("SELECT body FROM trustgate_artifacts WHERE id = {p}", (real_id,))[0]
    import json

    data = json.loads(body)
    forged_text = "pool_size: 500\n"
    data["excerpt"] = forged_text
    data["content_hash"] = hashlib.sha256(forged_text.encode()).hexdigest()
    data["start_line"] = data["end_line"] = 2
    coordinate = {
        k: data[k] for k in ("kind", "revision", "path", "start_line", "end_line", "content_hash")
    }
    data["id"] = artifact_id(coordinate)
    backend.sql(
        "INSERT INTO trustgate_artifacts (id, content_hash, acquired_at, body) "
        "VALUES ({p}, {p}, {p}, {p})",
        (data["id"], data["content_hash"], data["acquired_at"], json.dumps(data)),
    )
    assert ledger.verification(data["id"]) == "unverified"
    assert _bar(ledger, data["id"]) == ["unverified_evidence"]
    assert ledger.get(data["id"]).verification == "unverified"  # type: ignore[union-attr]

    # the real artifact's seal copied onto the forged row does not fit it
    seals = backend.sql(
        "SELECT key_id, mac FROM trustgate_artifact_seals WHERE id = {p}", (real_id,)
    )
    for key_id, mac in seals:
        backend.sql(
            "INSERT INTO trustgate_artifact_seals (id, key_id, mac) VALUES ({p}, {p}, {p})",
            (data["id"], key_id, mac),
        )
    assert ledger.verification(data["id"]) == "tampered"
    assert "ledger_tampered" in _bar(ledger, data["id"])


def test_row_moved_under_another_id_is_tampered(backend: Backend, ws: Workspace) -> None:
    ledger = backend.open(key=KEY)
    art_id = _acquire(ws, ledger)
    other = "f" * 64
    backend.sql("UPDATE trustgate_artifacts SET id = {p} WHERE id = {p}", (other, art_id))
    assert ledger.verification(other) == "tampered"
    assert ledger.verification(art_id) is None


def test_garbage_body_is_tampered_not_a_crash(backend: Backend, ws: Workspace) -> None:
    ledger = backend.open(key=KEY)
    art_id = _acquire(ws, ledger)
    backend.sql("UPDATE trustgate_artifacts SET body = {p} WHERE id = {p}", ("{not json", art_id))
    assert ledger.verification(art_id) == "tampered"
    with pytest.raises(ArtifactIntegrityError, match="ledger_tampered"):
        ledger.get(art_id)
    with pytest.raises(ArtifactIntegrityError, match="ledger_tampered"):
        list(ledger)
    findings = GroundingCheck({"f": "verified"}).verify(
        {"f": {"value": 1, "evidence": [art_id]}}, Evidence(workspace=ws, ledger=ledger)
    )
    assert "ledger_tampered" in [f.code for f in findings]
    assert not any(f.passed and f.subject == "f" for f in findings)


def test_reacquiring_onto_a_tampered_row_is_a_finding(backend: Backend, ws: Workspace) -> None:
    ledger = backend.open(key=KEY)
    art_id = _acquire(ws, ledger)
    backend.set_body_field(art_id, "excerpt", "pool_size: 50\n")
    findings = GroundingCheck({"f": "verified"}).verify(
        {"f": {"value": 5, "evidence": [{"path": "config/db.yaml", "start_line": 1}]}},
        Evidence(workspace=ws, ledger=ledger),
    )
    assert "ledger_tampered" in [f.code for f in findings]
    assert not [f for f in findings if f.subject == "f" and f.passed]


def test_key_outside_the_database(
    backend: Backend, ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seals made under a key survive a restart only with the key; without it (or with
    another) a verified row counts as unverified until reverify() re-reads the source."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)
    art_id = _acquire(ws, backend.open(key=KEY))

    assert backend.open(key=KEY).verification(art_id) == "verified"
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    assert backend.open().verification(art_id) == "verified"
    monkeypatch.delenv(KEY_ENV)
    key_file = tmp_path / "ledger.key"
    key_file.write_bytes(KEY + b"\n")
    key_file.chmod(0o600)
    monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
    assert backend.open().verification(art_id) == "verified"
    monkeypatch.delenv(KEY_FILE_ENV)

    other = backend.open(key=b"another-key-another-key-another!")
    assert other.verification(art_id) == "unverified"
    assert other.reverify(art_id, ws).passed  # re-read from the source: sealed again
    assert other.verification(art_id) == "verified"
    assert backend.open(key=KEY).verification(art_id) == "verified"  # first seal still good

    with pytest.raises(LedgerKeyError, match=KEY_ENV):  # no key anywhere: refused
        backend.open()
    ephemeral = backend.open(key=EPHEMERAL_KEY)  # asked for: a random one for this object
    assert ephemeral.verification(art_id) == "unverified"

    with pytest.raises(ConfigurationError):
        backend.open(key=b"short")
