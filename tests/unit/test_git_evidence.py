"""Revisions, diffs and hashes from real git repositories built in temp dirs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from _support import APP_PY, MakeRepo, git

from trustgate.errors import EvidenceRefused, GitError
from trustgate.files import (
    ChangeClaim,
    HashClaim,
    Locator,
    Workspace,
    check_change_claim,
    check_hash_claim,
)


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    root = make_repo({"app.py": APP_PY, "docs/a.md": "# A\nfirst\n", "docs/b.md": "# B\n"})
    os.symlink("a.md", root / "docs" / "link.md")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "link")
    return root


def test_read_at_revision(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    (repo / "docs" / "a.md").write_text("# A\nsecond\n")
    git(repo, "commit", "-qam", "edit")
    ws = Workspace(repo)
    assert ws.read_text("docs/a.md", first) == "# A\nfirst\n"
    assert ws.read_text("docs/a.md", "HEAD") == "# A\nsecond\n"
    assert ws.read_text("docs/link.md", first) == "# A\nfirst\n"  # in-tree symlink followed


def test_revision_refusals(repo: Path, tmp_path: Path) -> None:
    ws = Workspace(repo)
    with pytest.raises(EvidenceRefused) as e1:
        ws.read_text("docs/missing.md", "HEAD")
    assert e1.value.code == "file_missing"
    with pytest.raises(EvidenceRefused) as e2:
        ws.read_text("docs", "HEAD")
    assert e2.value.code == "not_a_file"
    with pytest.raises(EvidenceRefused) as e3:
        ws.read_text("app.py", "does-not-exist")
    assert e3.value.code == "unknown_revision"
    with pytest.raises(EvidenceRefused) as e4:
        ws.read_text("app.py", "--output=/tmp/x")
    assert e4.value.code == "unknown_revision"
    with pytest.raises(EvidenceRefused) as e5:
        ws.read_text("../app.py", "HEAD")
    assert e5.value.code == "path_traversal"
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(GitError):
        Workspace(plain).read_text("x", "HEAD")


def test_symlink_escaping_at_revision(repo: Path) -> None:
    os.symlink("../../etc/passwd", repo / "docs" / "evil.md")
    os.symlink("/etc/passwd", repo / "abs.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "evil")
    ws = Workspace(repo)
    for path in ("docs/evil.md", "abs.md"):
        with pytest.raises(EvidenceRefused) as info:
            ws.read_text(path, "HEAD")
        assert info.value.code == "outside_workspace"


def test_workspace_in_subdirectory_of_repo(repo: Path) -> None:
    ws = Workspace(repo / "docs")
    assert ws.read_text("a.md", "HEAD") == "# A\nfirst\n"
    (repo / "docs" / "b.md").write_text("# B2\n")
    (repo / "app.py").write_text("changed\n")
    assert ws.changed_files("HEAD") == ["b.md"]


def test_changed_files_from_real_git(repo: Path) -> None:
    ws = Workspace(repo)
    assert ws.changed_files("HEAD") == []
    (repo / "app.py").write_text(APP_PY + "# x\n")
    (repo / "docs" / "b.md").unlink()
    (repo / "new file.py").write_text("x\n")
    git(repo, "mv", "docs/a.md", "docs/renamed.md")
    assert ws.changed_files("HEAD") == [
        "app.py",
        "docs/a.md",
        "docs/b.md",
        "docs/renamed.md",
        "new file.py",
    ]


def test_change_claim(repo: Path) -> None:
    ws = Workspace(repo)
    (repo / "app.py").write_text(APP_PY + "# x\n")
    (repo / "docs" / "b.md").write_text("# B changed\n")
    ok = check_change_claim(ChangeClaim(files=["app.py", "./docs/b.md"]), ws)
    assert all(f.passed for f in ok)
    lie = check_change_claim(ChangeClaim(files=["app.py", "docs/a.md"]), ws)
    assert {(f.code, f.subject) for f in lie if not f.passed} == {
        ("not_in_diff", "docs/a.md"),
        ("undeclared_change", "docs/b.md"),
    }
    assert [f.code for f in check_change_claim(ChangeClaim(files=[]), ws)] == ["no_files"]
    assert [f.code for f in check_change_claim(ChangeClaim(files=["a"], base="nope"), ws)] == [
        "unknown_revision"
    ]


def test_hash_claims(repo: Path) -> None:
    ws = Workspace(repo)
    digest = hashlib.sha256(APP_PY.encode()).hexdigest()
    assert check_hash_claim(HashClaim(path="app.py", sha256=digest), ws).passed
    assert check_hash_claim(HashClaim(path="app.py", sha256="sha256:" + digest.upper()), ws).passed
    assert check_hash_claim(HashClaim(path="app.py", sha256=digest, revision="HEAD"), ws).passed
    (repo / "app.py").write_text("tampered\n")
    assert check_hash_claim(HashClaim(path="app.py", sha256=digest), ws).code == "hash_mismatch"
    assert check_hash_claim(HashClaim(path="app.py", sha256=digest, revision="HEAD"), ws).passed
    assert check_hash_claim(HashClaim(path="app.py", sha256="abc"), ws).code == "malformed_claim"
    assert check_hash_claim(HashClaim(path="../x", sha256=digest), ws).code == "path_traversal"


def test_hash_of_binary_file(repo: Path) -> None:
    data = b"\x00\x01\x02binary"
    (repo / "blob.bin").write_bytes(data)
    claim = HashClaim(path="blob.bin", sha256=hashlib.sha256(data).hexdigest())
    assert check_hash_claim(claim, Workspace(repo)).passed


def test_acquire_at_revision_pins_commit(repo: Path) -> None:
    ws = Workspace(repo)
    head = git(repo, "rev-parse", "HEAD")
    art = ws.acquire(Locator(path="docs/a.md", start_line=2, revision="HEAD"))
    assert art.revision == head and art.excerpt == "first\n"
    assert art.uri == f"git:{head}:docs/a.md#L2"
