"""The reference graphs as ``langgraph.json`` serves them record every crossing.

``graphs/*.py`` compile the four pipelines without a checkpointer (the agent server
brings its own) and with ``report_log=True``: the gates write the database
``TRUSTGATE_DATABASE_URL`` names, which ``trustgate.server`` (mounted by the same
``langgraph.json``) serves. ``tests/integration/test_served_graphs.py`` runs them on
``langgraph dev``.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from trustgate.errors import GateHalted
from trustgate.persistence import SqliteReportHistory

ROOT = Path(__file__).resolve().parents[2]
SPEC = json.loads((ROOT / "langgraph.json").read_text())


def test_langgraph_json_mounts_the_report_route() -> None:
    assert SPEC["http"] == {"app": "trustgate.server:app"}


@pytest.mark.parametrize(
    "name, decisions",
    [
        ("code_review", ["modified", "pass"]),
        ("compliance", ["rerendered", "caveated", "rerendered", "pass", "halted"]),
    ],
)
def test_a_reference_graph_records_into_the_log_the_environment_names(
    name: str, decisions: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "served.db"
    monkeypatch.setenv("TRUSTGATE_DATABASE_URL", str(database))
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)
    path, _, attr = SPEC["graphs"][name].partition(":")
    graph: Any = runpy.run_path(str(ROOT / path))[attr]
    assert graph.checkpointer is None  # the server brings its own
    config = {"configurable": {"thread_id": f"served-{name}"}}
    try:
        graph.invoke({}, config)
    except GateHalted as halted:
        assert halted.report.decision == decisions[-1]
    log = SqliteReportHistory(database, read_only=True)  # the route's process, say
    try:
        found = log.history()
    finally:
        log.close()
    assert [r.decision for r in found] == decisions
    assert found.refused == []
