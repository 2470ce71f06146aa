"""The workspace and the ledger do not import each other (not even for type checking),
the public names that join them still work, and the dead cache switches are gone."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import trustgate.evidence
from trustgate.files import Artifact, InMemoryLedger, Locator, Workspace

EVIDENCE = Path(trustgate.evidence.__file__).parent


def imported(module: str) -> set[str]:
    """Every module ``trustgate/evidence/<module>.py`` imports, wherever the import is."""
    tree = ast.parse((EVIDENCE / f"{module}.py").read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize(("module", "other"), [("ledger", "workspace"), ("workspace", "ledger")])
def test_workspace_and_ledger_do_not_import_each_other(module: str, other: str) -> None:
    assert f"trustgate.evidence.{other}" not in imported(module)


class Source:
    """A file source that is not a Workspace: reverify needs only ``acquire(locator)``."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.asked: list[Locator] = []

    def acquire(self, locator: Locator) -> Artifact:
        self.asked.append(locator)
        return self.ws.acquire(locator)


def test_reverify_and_acquire_meet_through_their_protocols(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    ws, ledger = Workspace(tmp_path), InMemoryLedger()
    art = ws.acquire(Locator(path="a.txt", start_line=2), ledger)
    assert art.id in ledger and art.excerpt == "two\n"
    source = Source(ws)
    assert ledger.reverify(art.id, source).passed
    assert source.asked == [Locator(path="a.txt", start_line=2, end_line=2)]
    (tmp_path / "a.txt").write_text("one\nTWO\n")
    assert ledger.reverify(art.id, source).code == "tampered"


@pytest.mark.parametrize("method", [Workspace.read_lines, Workspace.acquire])
def test_no_cache_switch_that_does_nothing(method: object) -> None:
    assert "use_cache" not in inspect.signature(method).parameters  # type: ignore[arg-type]
