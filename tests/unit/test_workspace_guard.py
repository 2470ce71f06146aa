"""The path guard: every refusal has its own code; what stays inside is read normally."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from trustgate.errors import ConfigurationError, EvidenceRefused, TrustgateError
from trustgate.files import Workspace


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "app.py").write_text("alpha line\nbeta line\ngamma line\n")
    (root / "src" / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (root / "docs" / "guide.md").write_text("# Guide\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    return root


def refused(ws: Workspace, path: object) -> str:
    with pytest.raises(EvidenceRefused) as info:
        ws.read_lines(path)  # type: ignore[arg-type]
    assert isinstance(info.value, TrustgateError)
    assert not isinstance(info.value, OSError)
    assert info.value.message
    return info.value.code


def test_reads_plain_file(tree: Path) -> None:
    assert Workspace(tree).read_lines("src/app.py") == ("alpha line", "beta line", "gamma line")


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/etc/passwd", "absolute_path"),
        ("\\windows\\system32", "absolute_path"),
        ("C:/Windows/win.ini", "absolute_path"),
        ("../secret.txt", "path_traversal"),
        ("src/../../secret.txt", "path_traversal"),
        ("src/app.py\x00.txt", "nul_byte"),
        ("", "invalid_path"),
        ("   ", "invalid_path"),
        (".", "not_a_file"),
        ("src", "not_a_file"),
        ("src/missing.py", "file_missing"),
        ("src/app.py/child", "file_missing"),
        (42, "invalid_path"),
    ],
)
def test_refusals(tree: Path, path: object, code: str) -> None:
    assert refused(Workspace(tree), path) == code


def test_inner_dotdot_that_stays_inside_is_fine(tree: Path) -> None:
    assert Workspace(tree).read_lines("src/pkg/../app.py")[0] == "alpha line"


def test_symlink_to_outside_file_refused(tree: Path) -> None:
    os.symlink(tree.parent / "secret.txt", tree / "src" / "leak.txt")
    assert refused(Workspace(tree), "src/leak.txt") == "outside_workspace"


def test_symlinked_directory_escape_at_depth(tree: Path) -> None:
    outside = tree.parent / "outside" / "deep"
    outside.mkdir(parents=True)
    (outside / "x.py").write_text("print('x')\n")
    os.symlink(tree.parent / "outside", tree / "src" / "pkg" / "ext")
    assert refused(Workspace(tree), "src/pkg/ext/deep/x.py") == "outside_workspace"


def test_symlink_chain_escaping_refused(tree: Path) -> None:
    os.symlink(tree.parent / "secret.txt", tree / "hop2")
    os.symlink("hop2", tree / "hop1")
    os.symlink("../hop1", tree / "src" / "start")
    assert refused(Workspace(tree), "src/start") == "outside_workspace"


def test_symlinks_inside_root_are_followed(tree: Path) -> None:
    os.symlink("app.py", tree / "src" / "alias.py")
    os.symlink("pkg", tree / "src" / "pkglink")
    os.symlink("../src", tree / "docs" / "code")
    ws = Workspace(tree)
    assert ws.read_lines("src/alias.py")[1] == "beta line"
    assert ws.read_lines("src/pkglink/mod.py")[1] == "    return 1"
    assert ws.read_lines("docs/code/pkg/mod.py")[0] == "def f():"


def test_dangling_and_looping_symlinks(tree: Path) -> None:
    os.symlink("nowhere.py", tree / "src" / "dangling.py")
    os.symlink("loop_b", tree / "loop_a")
    os.symlink("loop_a", tree / "loop_b")
    ws = Workspace(tree)
    assert refused(ws, "src/dangling.py") == "file_missing"
    assert refused(ws, "loop_a") == "symlink_loop"


def test_symlink_swapped_after_first_read_is_caught(tree: Path) -> None:
    ws = Workspace(tree)
    link = tree / "src" / "current.py"
    os.symlink("app.py", link)
    assert ws.read_lines("src/current.py")[0] == "alpha line"
    link.unlink()
    os.symlink(tree.parent / "secret.txt", link)
    assert refused(ws, "src/current.py") == "outside_workspace"


def test_file_swapped_for_symlink_with_same_name_is_caught(tree: Path) -> None:
    ws = Workspace(tree)
    assert ws.read_lines("src/app.py")  # cached now
    (tree / "src" / "app.py").unlink()
    os.symlink(tree.parent / "secret.txt", tree / "src" / "app.py")
    assert refused(ws, "src/app.py") == "outside_workspace"


def test_scopes(tree: Path) -> None:
    ws = Workspace(tree, scopes=["src"])
    assert ws.read_lines("src/pkg/mod.py")
    assert refused(ws, "docs/guide.md") == "outside_scope"
    os.symlink("../docs/guide.md", tree / "src" / "guide_link.md")
    assert refused(ws, "src/guide_link.md") == "outside_scope"
    # a scope prefix is a path component, not a string prefix
    (tree / "srcx").mkdir()
    (tree / "srcx" / "a.txt").write_text("a\n")
    assert refused(ws, "srcx/a.txt") == "outside_scope"


def test_scope_validation(tree: Path) -> None:
    with pytest.raises(ConfigurationError):
        Workspace(tree, scopes=["../elsewhere"])
    with pytest.raises(ConfigurationError):
        Workspace(tree / "missing")
    assert Workspace(tree, scopes=["."]).read_lines("docs/guide.md")


def test_size_cap(tree: Path) -> None:
    (tree / "big.txt").write_text("x" * 2048)
    assert refused(Workspace(tree, max_bytes=1024), "big.txt") == "too_large"
    assert Workspace(tree, max_bytes=4096).read_lines("big.txt")


def test_binary_and_invalid_utf8(tree: Path) -> None:
    (tree / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tree / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    ws = Workspace(tree)
    assert refused(ws, "img.png") == "binary_file"
    assert refused(ws, "latin1.txt") == "not_utf8"


def test_fifo_is_not_a_file_and_does_not_block(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    assert refused(Workspace(tree), "pipe") == "not_a_file"


def test_unreadable_file(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root in CI, where chmod 0 does not stop a read: simulate EACCES.
    import errno

    real_open = os.open

    def deny(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == "locked.txt":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    (tree / "locked.txt").write_text("x\n")
    monkeypatch.setattr(os, "open", deny)
    assert refused(Workspace(tree), "locked.txt") == "unreadable"


def test_line_endings_and_bom(tree: Path) -> None:
    (tree / "crlf.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\nfour\x0cstill four")
    lines = Workspace(tree).read_lines("crlf.txt")
    assert lines == ("one", "two", "three", "four\x0cstill four")


def test_cache_follows_file_changes(tree: Path) -> None:
    ws = Workspace(tree)
    assert ws.read_lines("src/app.py")[0] == "alpha line"
    path = tree / "src" / "app.py"
    path.write_text("changed line\n")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert ws.read_lines("src/app.py") == ("changed line",)


def test_concurrent_reads_are_consistent(tree: Path) -> None:
    ws = Workspace(tree)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(200):
                assert ws.read_lines("src/app.py")[2] == "gamma line"
                assert ws.read_lines("src/pkg/mod.py")[0] == "def f():"
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def _rewrite_in_place_keeping_mtime(path: Path, text: str) -> None:
    """What `cp -p`, `tar -x` or `touch -r` leave behind: new bytes, same size, old mtime."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    with open(path, "r+b") as fh:  # same inode, same size
        fh.write(text.encode())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
    )


def test_cache_not_fooled_by_restored_mtime(tree: Path) -> None:
    """A long-lived Workspace sees a same-size in-place rewrite whose mtime was put back."""
    ws = Workspace(tree)
    path = tree / "src" / "app.py"
    assert ws.read_lines("src/app.py")[1] == "beta line"
    _rewrite_in_place_keeping_mtime(path, "alpha line\nBETA LINE\ngamma line\n")
    assert ws.read_lines("src/app.py")[1] == "BETA LINE"


def test_cache_keyed_on_ctime_for_settled_files(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file old enough to be cached is still re-read after the rewrite: ctime, which no
    writer can set back, is part of the key. An unchanged file is served from the cache."""
    from trustgate.evidence import workspace

    monkeypatch.setattr(workspace, "_RACY_NS", 20_000_000)
    ws = Workspace(tree)
    path = tree / "src" / "app.py"
    os.utime(path, ns=(0, 0))  # ctime is now: read as if a second later, past the window
    later = time.time_ns() + 1_000_000_000
    monkeypatch.setattr(workspace, "time", SimpleNamespace(time_ns=lambda: later))
    first = ws.read_lines("src/app.py")
    assert ws.read_lines("src/app.py") is first  # cached
    _rewrite_in_place_keeping_mtime(path, "alpha line\nBETA LINE\ngamma line\n")
    assert ws.read_lines("src/app.py")[1] == "BETA LINE"


def test_cache_does_not_trust_a_file_changed_as_it_was_read(tree: Path) -> None:
    """File times tick coarsely (a few ms), so a file written in the same tick as it was
    read could keep its ctime through a rewrite: such recent files are never cached."""
    ws = Workspace(tree)
    path = tree / "src" / "app.py"
    for i in range(20):
        text = f"alpha line\nbeta  {i:04d}\ngamma line\n"
        path.write_text(text)
        assert ws.read_lines("src/app.py")[1] == f"beta  {i:04d}"
