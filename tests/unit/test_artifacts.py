"""Frozen evidence (seed 001): exact bytes, coordinate ids, put-if-absent, tamper, trust bars."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest
from _support import write_tree

from trustgate.errors import (
    ArtifactIntegrityError,
    ClaimParseError,
    EvidenceRefused,
    LedgerConflict,
)
from trustgate.evidence.ledger import EPHEMERAL_KEY, ArtifactLedger
from trustgate.files import (
    Artifact,
    GroundedValue,
    InMemoryLedger,
    Locator,
    SqliteLedger,
    TrustBar,
    Workspace,
    acquire_external,
    acquire_locators,
    artifact_id,
    check_artifact_refs,
    meets_trust_bar,
)

TEXT = "line one\r\nline two\nline three\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    write_tree(
        tmp_path, {"a.txt": TEXT, "b.txt": TEXT, "src/x.py": "x = 1\n", "docs/d.md": "doc\n"}
    )
    return Workspace(tmp_path, scopes=["a.txt", "b.txt", "src"])


@pytest.fixture(params=["memory", "sqlite"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> ArtifactLedger:
    if request.param == "memory":
        return InMemoryLedger()
    return SqliteLedger(tmp_path / "db" / "ledger.db")


def test_excerpt_is_exact_bytes_with_terminators(ws: Workspace) -> None:
    art = ws.acquire(Locator(path="a.txt", start_line=1, end_line=2))
    assert art.excerpt == "line one\r\nline two\n"
    assert art.content_hash == hashlib.sha256(b"line one\r\nline two\n").hexdigest()
    whole = ws.acquire(Locator(path="./a.txt"))
    assert whole.excerpt == TEXT and whole.path == "a.txt"
    assert whole.start_line is None and whole.end_line is None


def test_id_is_canonical_coordinate_hash(ws: Workspace) -> None:
    art = ws.acquire(Locator(path="a.txt", start_line=2))
    coordinate = {
        "kind": "file",
        "revision": None,
        "path": "a.txt",
        "start_line": 2,
        "end_line": 2,
        "content_hash": art.content_hash,
    }
    canon = json.dumps(coordinate, sort_keys=True, separators=(",", ":")).encode()
    assert art.id == hashlib.sha256(canon).hexdigest() == artifact_id(coordinate)


def test_same_bytes_different_coordinates_distinct_ids(ws: Workspace) -> None:
    a = ws.acquire(Locator(path="a.txt"))
    b = ws.acquire(Locator(path="b.txt"))
    assert a.content_hash == b.content_hash and a.id != b.id
    assert ws.acquire(Locator(path="a.txt", start_line=1, end_line=1)).id != a.id


@pytest.mark.parametrize(
    ("locator", "code"),
    [
        (Locator(path="docs/d.md"), "outside_scope"),
        (Locator(path="a.txt", start_line=0), "line_out_of_range"),
        (Locator(path="a.txt", start_line=2, end_line=1), "line_out_of_range"),
        (Locator(path="a.txt", start_line=3, end_line=4), "line_out_of_range"),
        (Locator(path="../a.txt"), "path_traversal"),
        (Locator(path="missing.txt"), "file_missing"),
    ],
)
def test_acquire_refusals(ws: Workspace, locator: Locator, code: str) -> None:
    with pytest.raises(EvidenceRefused) as info:
        ws.acquire(locator)
    assert info.value.code == code


def test_locator_shape() -> None:
    # a trustgate error, not pydantic's ValidationError (a ValueError)
    with pytest.raises(ClaimParseError, match="end_line given without start_line") as info:
        Locator(path="a", end_line=3)
    assert not isinstance(info.value, ValueError)
    with pytest.raises(ClaimParseError, match="START <= END"):
        Locator.parse("a.py:5-3")
    assert Locator.parse("a.txt") == Locator(path="a.txt")
    assert Locator.parse("a.txt:3") == Locator(path="a.txt", start_line=3)
    assert Locator.parse("dir:x/a.txt:3-9") == Locator(path="dir:x/a.txt", start_line=3, end_line=9)


def test_put_if_absent_keeps_first(ws: Workspace, ledger: ArtifactLedger) -> None:
    first = ws.acquire(Locator(path="a.txt"), ledger)
    second = ws.acquire(Locator(path="a.txt"), ledger)
    assert second.acquired_at == first.acquired_at
    assert len(list(ledger)) == 1 and first.id in ledger


def test_different_bytes_under_existing_id_refused(ws: Workspace, ledger: ArtifactLedger) -> None:
    art = ws.acquire(Locator(path="a.txt"), ledger)
    forged = art.model_copy(
        update={"excerpt": "forged\n", "content_hash": hashlib.sha256(b"forged\n").hexdigest()}
    )
    with pytest.raises(ArtifactIntegrityError):
        ledger.put(forged)  # id no longer derives from the coordinate
    sneaky = art.model_copy(update={"verification": "unverified"})
    with pytest.raises(LedgerConflict):
        ledger.put(sneaky)
    assert ledger.get(art.id) == art


def test_agent_excerpt_never_stored(ledger: ArtifactLedger) -> None:
    fake = Artifact(
        id="0" * 64,
        kind="file",
        uri="file:a.txt",
        source="workspace",
        path="a.txt",
        content_hash="1" * 64,
        excerpt="what the agent says",
        verification="verified",
    )
    with pytest.raises(ArtifactIntegrityError):
        ledger.put(fake)
    assert len(list(ledger)) == 0


def test_concurrent_acquisition_one_artifact(ws: Workspace, ledger: ArtifactLedger) -> None:
    barrier = threading.Barrier(8)
    results: list[Artifact] = []
    lock = threading.Lock()

    def worker() -> None:
        barrier.wait()
        art = ws.acquire(Locator(path="a.txt", start_line=1), ledger)
        with lock:
            results.append(art)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(list(ledger)) == 1
    assert len({(r.id, r.acquired_at) for r in results}) == 1


def test_reverify_catches_tampering(ws: Workspace, ledger: ArtifactLedger) -> None:
    art = ws.acquire(Locator(path="src/x.py"), ledger)
    assert ws.read_lines("src/x.py")  # warm the cache: reverify must not use it
    assert ledger.reverify(art.id, ws).passed
    bars = [TrustBar(field="root_cause")]
    patch = {"root_cause": GroundedValue(value="x", artifacts=[art.id])}
    assert all(f.passed for f in meets_trust_bar(patch, ledger, bars))
    Path(ws.root, "src/x.py").write_text("x = 2\n")  # same size, maybe same mtime tick
    finding = ledger.reverify(art.id, ws)
    assert finding.code == "tampered"
    assert ledger.verification(art.id) == "tampered"
    assert [f.code for f in meets_trust_bar(patch, ledger, bars)] == ["unverified_evidence"]


def test_reverify_deleted_file_and_unknown_id(ws: Workspace, ledger: ArtifactLedger) -> None:
    art = ws.acquire(Locator(path="src/x.py"), ledger)
    Path(ws.root, "src/x.py").unlink()
    assert ledger.reverify(art.id, ws).code == "tampered"
    assert ledger.reverify("nope", ws).code == "unknown_artifact"


class DictConnector:
    name = "wiki"

    def __init__(self, pages: dict[str, bytes]) -> None:
        self.pages = pages

    def fetch(self, uri: str) -> bytes:
        return self.pages[uri]


def test_external_artifacts(ledger: ArtifactLedger) -> None:
    wiki = DictConnector({"wiki://runbook": b"restart the pool\n"})
    art = ledger.put(acquire_external("wiki", "wiki://runbook", [wiki]))
    assert art.verification == "verified" and art.excerpt == "restart the pool\n"
    assert ledger.reverify(art.id, connectors={"wiki": wiki}).passed
    wiki.pages["wiki://runbook"] = b"edited\n"
    assert ledger.reverify(art.id, connectors={"wiki": wiki}).code == "tampered"
    ticket = ledger.put(acquire_external("jira", "jira://INC-1"))
    assert ticket.verification == "unverified" and ticket.excerpt is None
    assert ticket.content_hash is None
    with pytest.raises(EvidenceRefused) as info:
        acquire_external("wiki", "wiki://missing", [wiki])
    assert info.value.code == "fetch_failed"


def test_trust_bars(ws: Workspace, ledger: ArtifactLedger) -> None:
    verified = ws.acquire(Locator(path="src/x.py"), ledger)
    unverified = ledger.put(acquire_external("slack", "slack://C1/p1"))
    bars = {"root_cause": "verified", "impact": "unverified", "notes": "none"}
    patch = {
        "root_cause": {"value": "pool", "artifacts": [unverified.id]},
        "impact": {"value": "9.2s", "artifacts": [unverified.id]},
        "notes": {"value": "n/a"},
        "owner": {"value": "team", "artifacts": []},
        "summary": {"value": "x", "artifacts": ["made-up-id"]},
        "trigger": "not a grounded value",
    }
    found = {
        (f.subject, f.code if not f.passed else "pass")
        for f in meets_trust_bar(patch, ledger, bars)
    }
    assert found == {
        ("root_cause", "unverified_evidence"),
        ("impact", "pass"),
        ("notes", "pass"),
        ("owner", "no_evidence"),
        ("summary: made-up-id", "unknown_artifact"),
        ("summary", "no_evidence"),
        ("trigger", "malformed_claim"),
    }
    both = {"root_cause": {"value": "pool", "artifacts": [unverified.id, verified.id]}}
    assert all(f.passed for f in meets_trust_bar(both, ledger, bars))
    assert [f.code for f in check_artifact_refs(["made-up-id"], ledger)] == ["unknown_artifact"]


def test_acquire_locators_findings(ws: Workspace, ledger: ArtifactLedger) -> None:
    arts, found = acquire_locators(
        [{"path": "a.txt", "start_line": 1}, {"path": "docs/d.md"}, {"start_line": 3}], ws, ledger
    )
    assert len(arts) == 1
    assert [f.code if not f.passed else "pass" for f in found] == [
        "pass",
        "outside_scope",
        "malformed_claim",
    ]


def test_sqlite_ledger_survives_reopen(ws: Workspace, tmp_path: Path) -> None:
    """With the same key the verified status survives a reopen; under another key (here
    an ephemeral one) it is unverified until reverify() re-reads the source."""
    path = tmp_path / "l.db"
    key = "0123456789abcdef0123456789abcdef"
    art = ws.acquire(Locator(path="a.txt"), SqliteLedger(path, key=key))
    again = SqliteLedger(path, key=key)
    assert again.get(art.id) == art
    keyless = SqliteLedger(path, key=EPHEMERAL_KEY)
    assert keyless.get(art.id) == art.model_copy(update={"verification": "unverified"})
    assert keyless.reverify(art.id, ws).passed
    assert keyless.get(art.id) == art
