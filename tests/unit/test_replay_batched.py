"""A manifest's replay: the passing citations of a file are one finding, every failing
citation its own, each file read once per call and nothing kept for the next call."""

from __future__ import annotations

import os
import shutil
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustgate import EvidenceSources, FromKey, TrustGate
from trustgate.files import (
    ChangesManifest,
    CitationReplay,
    FileCitation,
    SelfReport,
    Workspace,
    replay_citation,
    replay_manifest,
)

A_PY = "import os\n\ndef main():\n    return os.getcwd()\n\nprint(main())\n"


def item(name: str, *cites: tuple[str, int, str]) -> SelfReport:
    return SelfReport(
        item=name,
        status="already_correct",
        evidence=[FileCitation(file=f, line=n, content=c) for f, n, c in cites],
    )


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "a.py").write_text(A_PY)
    (tmp_path / "b.txt").write_text("alpha beta gamma\ndelta epsilon\n")
    return Workspace(tmp_path)


def test_passes_of_one_file_are_one_finding_each_failure_its_own(ws: Workspace) -> None:
    found = replay_manifest(
        [
            item("cwd", ("a.py", 4, "return os.getcwd()")),
            item("invented", ("a.py", 3, "def main(argv):")),
            item("greek", ("b.txt", 1, "alpha beta gamma")),
            item("drifted", ("a.py", 1, "print(main())")),  # 5 lines off: fails
            item("near", ("a.py", 2, "import os"), ("missing.py", 1, "anything at all")),
        ],
        ws,
    )
    assert [(f.code, f.subject) for f in found] == [
        ("ok", "a.py"),
        ("content_mismatch", "invented: a.py:3"),
        ("ok", "b.txt"),
        ("content_mismatch", "drifted: a.py:1"),
        ("file_missing", "near: missing.py:1"),
    ]
    assert found[0].detail == {
        "citations": [
            {"item": "cwd", "line": 4, "matched_line": 4, "drift": 0},
            {"item": "near", "line": 2, "matched_line": 1, "drift": -1},
        ]
    }
    assert "2 citation(s) of 'a.py'" in found[0].message
    assert all(f.blocking for f in found if not f.passed)


def test_two_spellings_of_a_file_are_one_read_and_one_finding(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = ws._text_lines

    def counting(path: str, **kw: Any) -> tuple[tuple[str, ...], bool]:
        reads.append(path)
        return real(path, **kw)

    monkeypatch.setattr(ws, "_text_lines", counting)
    found = replay_manifest(
        [
            item("one", ("./a.py", 4, "return os.getcwd()")),
            item("two", ("b.txt", 2, "delta epsilon")),
            item("three", ("a.py", 1, "import os")),
            item("four", ("sub/../a.py", 3, "def main():")),
        ],
        ws,
    )
    assert sorted(reads) == ["./a.py", "b.txt"]
    assert [(f.code, f.subject) for f in found] == [("ok", "a.py"), ("ok", "b.txt")]
    assert [c["item"] for c in found[0].detail["citations"]] == ["one", "three", "four"]


def test_refusal_names_each_spelling_as_cited(ws: Workspace) -> None:
    found = replay_manifest(
        [item("x", ("gone.py", 1, "import os")), item("y", ("./gone.py", 2, "def main():"))], ws
    )
    assert [(f.code, f.subject) for f in found] == [
        ("file_missing", "x: gone.py:1"),
        ("file_missing", "y: ./gone.py:2"),
    ]
    assert "'./gone.py'" in found[1].message


def test_a_call_holds_one_files_lines_at_a_time(tmp_path: Path) -> None:
    """Twenty 1 MiB files: the replay never holds more than a couple of them (before,
    the lines of every file cited stayed in memory until the call ended)."""
    line = "x" * 60 + "\n"
    size = 1024 * 1024
    for i in range(20):
        (tmp_path / f"f{i}.txt").write_text(line * (size // len(line)))
    items = [item(f"i{i}", (f"f{i}.txt", 3, "x" * 60)) for i in range(20)]
    ws = Workspace(tmp_path)
    tracemalloc.start()
    try:
        found = replay_manifest(items, ws)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(found) == 20 and all(f.passed for f in found)
    # one file's bytes, text and lines are about 4 MiB; holding every file's lines until
    # the call ends was about 40 MiB
    assert peak < 12 * size


def _rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    st = path.stat()
    assert len(text.encode()) == st.st_size
    with open(path, "r+b") as fh:
        fh.write(text.encode())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_file_changed_between_two_calls_is_read_again(ws: Workspace) -> None:
    items = [item("cwd", ("a.py", 4, "return os.getcwd()"))]
    assert replay_manifest(items, ws)[0].passed
    path = Path(ws.root) / "a.py"
    _rewrite_keeping_size_and_mtime(path, A_PY.replace("getcwd", "getpid"))
    [f] = replay_manifest(items, ws)
    assert (f.code, f.subject) == ("content_mismatch", "cwd: a.py:4")


def test_symlink_swapped_between_two_calls_is_refused(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text(A_PY)
    link = Path(ws.root) / "link.py"
    os.symlink("a.py", link)
    items = [item("cwd", ("link.py", 4, "return os.getcwd()"))]
    try:
        assert replay_manifest(items, ws)[0].passed
        link.unlink()
        os.symlink(outside, link)  # same bytes, outside the root
        [f] = replay_manifest(items, ws)
    finally:
        outside.unlink()
    assert (f.code, f.subject) == ("outside_workspace", "cwd: link.py:4")


def test_between_two_crossings_of_a_gate(ws: Workspace, tmp_path: Path) -> None:
    """The same through a gate's crossings, on one Workspace: an edit and a symlink
    swapped in after a passing crossing are both caught by the next."""
    gate = TrustGate(
        "replay",
        reads=FromKey("manifest", model=ChangesManifest),
        verifiers=[CitationReplay(timeout=None)],
        evidence=EvidenceSources(workspace=ws),
    )
    manifest = ChangesManifest(items=[item("cwd", ("link.py", 4, "return os.getcwd()"))])
    link = Path(ws.root) / "link.py"
    os.symlink("a.py", link)
    assert gate.check({"manifest": manifest}, node="n").report.decision == "pass"
    _rewrite_keeping_size_and_mtime(Path(ws.root) / "a.py", A_PY.replace("getcwd", "getuid"))
    report = gate.check({"manifest": manifest}, node="n").report
    assert [f.code for f in report.findings if f.blocking] == ["content_mismatch"]
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text(A_PY)
    try:
        link.unlink()
        os.symlink(outside, link)
        report = gate.check({"manifest": manifest}, node="n").report
    finally:
        outside.unlink()
    assert [f.code for f in report.findings if f.blocking] == ["outside_workspace"]


# --- the batched verdicts are the per-citation verdicts -------------------------------

LINES = st.lists(
    st.sampled_from(
        [
            "    return validate(payload)",
            "x = 1",
            "}",
            "",
            "   ",
            "caf\u00e9 au lait served",
            "cafe\u0301 au lait",
            "target text here",
            "a\tb\tc\td e f g h",
            "\u3000wide space here\u3000",
            "same text xx",
        ]
    ),
    min_size=0,
    max_size=12,
)
CONTENT = st.sampled_from(
    [
        "return validate(payload)",
        "validate(",
        "x = 1",
        "x",
        "}",
        "   ",
        "caf\u00e9 au lait",
        "cafe\u0301 au lait served",
        "target text here",
        "a\tb\tc\td",
        "b c d e",
        "wide space here",
        "same text xx",
        "not in the file at all",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(LINES, min_size=1, max_size=3),
    crlf=st.booleans(),
    cites=st.lists(
        st.tuples(st.integers(0, 2), st.integers(-1, 14), CONTENT), min_size=1, max_size=12
    ),
    window=st.integers(0, 4),
    min_chars=st.integers(1, 12),
)
def test_manifest_verdicts_equal_replay_citation(
    files: list[list[str]],
    crlf: bool,
    cites: list[tuple[int, int, str]],
    window: int,
    min_chars: int,
) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        end = "\r\n" if crlf else "\n"
        for i, lines in enumerate(files):
            (tmp / f"f{i}.txt").write_bytes("".join(x + end for x in lines).encode())
        ws = Workspace(tmp)
        citations = [
            FileCitation(file=f"f{i % len(files)}.txt", line=n, content=c) for i, n, c in cites
        ]
        items = [
            SelfReport(item=f"c{k}", status="already_correct", evidence=[c])
            for k, c in enumerate(citations)
        ]
        found = replay_manifest(items, ws, window=window, min_chars=min_chars)
        got: dict[str, Any] = {}
        for f in found:
            if f.passed:
                for c in f.detail["citations"]:
                    got[c["item"]] = ("pass", c["matched_line"], c["drift"])
            else:
                got[(f.subject or "").split(":")[0]] = (f.code, f.message, f.detail)
        for k, c in enumerate(citations):
            one = replay_citation(c, ws, window=window, min_chars=min_chars)
            if one.passed:
                want = ("pass", one.detail["matched_line"], one.detail["drift"])
            else:
                want = (one.code, one.message, one.detail)
            assert got[f"c{k}"] == want, (c, one)
        assert len(got) == len(citations)
    finally:
        shutil.rmtree(tmp)
