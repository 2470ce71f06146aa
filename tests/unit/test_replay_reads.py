"""What one replay costs the file system: the root and each directory opened once per
call, each file one open, one fstat and one read; and the shortcut that decides
whether content is too vague agrees with the definition it stands in for."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trustgate.evidence import _paths
from trustgate.files import FileCitation, SelfReport, Workspace, replay_manifest
from trustgate.verifiers.files import citations


def tree(root: Path, dirs: int, per_dir: int) -> list[SelfReport]:
    items = []
    for d in range(dirs):
        for f in range(per_dir):
            rel = f"pkg{d:03d}/sub/mod_{f}.py"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(f"def f_{d}_{f}():\n    return compute({d}, {f})\n")
            items.append(
                SelfReport(
                    item=f"i{d}.{f}",
                    status="already_correct",
                    evidence=[FileCitation(file=rel, line=2, content=f"return compute({d}, {f})")],
                )
            )
    return items


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(os, name)

    def count(*args: Any, **kw: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(os, name, count)
    return calls


def test_each_directory_is_opened_once_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = tree(tmp_path, dirs=3, per_dir=5)
    ws = Workspace(tmp_path)
    opens = counting(monkeypatch, "open")
    found = replay_manifest(items, ws)
    assert all(f.passed for f in found) and len(found) == 15
    # the root, pkg000..pkg002 and their sub/ once each, then one open per file
    assert sorted(o for o in opens if not str(o).endswith(".py")) == sorted(
        [ws.root, "pkg000", "pkg001", "pkg002", "sub", "sub", "sub"]
    )
    assert len([o for o in opens if str(o).endswith(".py")]) == 15
    replay_manifest(items, ws)
    assert len(opens) == 2 * 22  # nothing kept for the next call


def test_a_file_is_one_read_when_it_ends_where_fstat_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = tree(tmp_path, dirs=2, per_dir=4)
    reads = counting(monkeypatch, "read")
    assert all(f.passed for f in replay_manifest(items, Workspace(tmp_path)))
    assert len(reads) == 8


def test_directory_descriptors_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_paths, "_MAX_DIRS", 4)
    items = tree(tmp_path, dirs=6, per_dir=2)
    held: set[int] = set()
    most = 0
    real_open, real_close = os.open, os.close

    def opening(*args: Any, **kw: Any) -> int:
        nonlocal most
        fd = real_open(*args, **kw)
        held.add(fd)
        most = max(most, len(held))
        return fd

    def closing(fd: int) -> None:
        held.discard(fd)
        real_close(fd)

    monkeypatch.setattr(os, "open", opening)
    monkeypatch.setattr(os, "close", closing)
    found = replay_manifest(items, Workspace(tmp_path))
    assert all(f.passed for f in found) and len(found) == 12
    assert not held  # every descriptor closed at the end of the call
    assert most <= 4 + 2  # the kept directories, the root, the file being read


@given(st.text(max_size=40), st.integers(min_value=0, max_value=12))
def test_vagueness_shortcut_is_the_definition(content: str, min_chars: int) -> None:
    want = len(content) >= min_chars and len("".join(content.split())) >= min_chars
    assert citations._long(content, min_chars) is want


@pytest.mark.parametrize("space", [" ", "\t", "\xa0", "\u2003", "\u3000", "\x1f", "\u2028"])
def test_vagueness_counts_every_kind_of_whitespace(space: str) -> None:
    padded = space.join("abcd")  # 4 letters and 3 spaces: vague at 8
    assert not citations._long(padded, 8)
    assert citations._long(padded + "efgh", 8)
