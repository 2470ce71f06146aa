"""A comparison against a base finds the repository once: each discovery is a git
process on the crossing's path (a code-review gate's ChangeCheck runs one per crossing)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from _support import MakeRepo

from trustgate.evidence import git


def test_changed_files_discovers_the_repository_once(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.txt": "one\n"})
    (root / "a.txt").write_text("two\n")
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(args: Any, *a: Any, **kw: Any) -> Any:
        calls.append([str(x) for x in args])
        return real(args, *a, **kw)

    monkeypatch.setattr(git.subprocess, "run", counting)
    assert git.changed_files(str(root), "HEAD") == ["a.txt"]
    discoveries = [c for c in calls if "--show-toplevel" in c]
    assert len(discoveries) == 1, calls
