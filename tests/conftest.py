"""Shared fixtures, and the test tiers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest
from _cli_support import TEST_LEDGER_KEY
from _support import MakeRepo, git, write_tree

TIERS = ("unit", "integration", "bypass", "oracle")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test's tier is the folder it lives in (``tests/unit``, ``tests/integration``,
    ``tests/bypass``, ``tests/oracle``): ``-m unit`` selects the folder's tests.

    unit: in-process and quick; integration: real servers (PostgreSQL, Phoenix, MLflow,
    LangGraph's agent server), subprocesses, and the exhaustive equivalence runs over
    generated and corpus inputs; bypass: attacks on the gate, each proving a lie appears
    nowhere; oracle: LangGraph's own suite under always-pass gates.

    A tier marker that disagrees with the folder is a mistake (``-m unit`` would run a
    test that starts a server), reported at collection, as is a test outside the folders.
    """
    for item in items:
        folder = Path(str(item.fspath)).parent.name
        if folder not in TIERS:
            raise pytest.UsageError(f"{item.nodeid} is outside the tier folders {TIERS}")
        marked = {m.name for m in item.iter_markers() if m.name in TIERS} - {folder}
        if marked:
            raise pytest.UsageError(
                f"{item.nodeid} lives in tests/{folder} but is marked {sorted(marked)}"
            )
        item.add_marker(getattr(pytest.mark, folder))


@pytest.fixture(autouse=True)
def _ledger_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A database file (and PostgreSQL) refuses to open without a ledger key, so every
    test runs with one configured (``TRUSTGATE_LEDGER_KEY``, inherited by the processes
    a test starts). Tests of the keyless case delete it."""
    if not (os.environ.get("TRUSTGATE_LEDGER_KEY") or os.environ.get("TRUSTGATE_LEDGER_KEY_FILE")):
        monkeypatch.setenv("TRUSTGATE_LEDGER_KEY", TEST_LEDGER_KEY)
    # a key a test gave a database explicitly is that test's: it seals no other's reports
    from trustgate import _report_seal

    monkeypatch.setattr(_report_seal, "_adopted", [])
    adopted = _report_seal._keys.get((None, None))
    if adopted is not None and adopted.origin == "argument":
        monkeypatch.delitem(_report_seal._keys, (None, None))


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


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)  # never a paid model
    monkeypatch.delenv("TRUSTGATE_DATABASE_URL", raising=False)
    return tmp_path


# --- PostgreSQL (issue 7): one real server per session, a fresh database per test ---
from pg import pg_server, pg_url  # noqa: E402, F401
