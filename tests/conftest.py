"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from _support import MakeRepo, git, write_tree


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Create a committed git repository with the given files; returns its root."""
    counter = iter(range(1000))

    def make(files: Mapping[str, str | bytes]) -> Path:
        root = tmp_path / f"repo{next(counter)}"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.email", "t@example.invalid")
        git(root, "config", "user.name", "t")
        git(root, "config", "commit.gpgsign", "false")
        write_tree(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        return root

    return make


# --- PostgreSQL (issue 7): one real server per session, a fresh database per test ---
from pg import pg_server, pg_url  # noqa: E402, F401
