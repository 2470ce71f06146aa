"""Saver delegation against real processes: a PostgreSQL server, and a child process in
LangGraph's strict msgpack mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from _persist_support import LIE, build_graph, cfg
from langgraph.checkpoint.postgres import PostgresSaver

import trustgate
from trustgate.persistence import ReportingSaver

# -- real savers: delegated methods with observable effects ------------------------------


def test_real_postgres_saver_delegation(pg_url: str) -> None:
    with trustgate.persistence.connect(pg_url) as db:
        saver: ReportingSaver = db.checkpointer
        app = build_graph().compile(checkpointer=saver)
        app.invoke({"text": LIE, "log": []}, cfg("p1"))
        before = len(list(saver.list(cfg("p1"))))
        if "prune" in vars(PostgresSaver):  # langgraph-checkpoint-postgres >= 3.1
            saver.prune(["p1"], strategy="keep_latest")
            assert before > 1 and len(list(saver.list(cfg("p1")))) == 1
        else:  # older releases have none: the base class's answer, passed on
            with pytest.raises(NotImplementedError):
                saver.prune(["p1"], strategy="keep_latest")
        assert [r.id for r in trustgate.reports(app, cfg("p1"))] == [
            r.id for r in db.history(thread="p1")
        ]
        saver.delete_thread("p1")
        assert saver.get_tuple(cfg("p1")) is None
        assert len(db.history(thread="p1")) == 1


_STRICT = """
import sys
sys.path.insert(0, sys.argv[1])
from _persist_support import LIE, build_graph, cfg
from langgraph.checkpoint.sqlite import SqliteSaver
import sqlite3, trustgate
from trustgate.persistence import ReportingSaver, SqliteReportHistory
log = SqliteReportHistory(sys.argv[2])
saver = ReportingSaver(SqliteSaver(sqlite3.connect(sys.argv[2], check_same_thread=False)), log)
app = build_graph().compile(checkpointer=saver)
app.invoke({"text": LIE, "log": []}, cfg("s"))
assert app.checkpointer is not saver and isinstance(app.checkpointer, ReportingSaver)
in_state = [r.id for r in trustgate.reports(app, cfg("s"))]
assert in_state and in_state == [r.id for r in log.history(thread="s")], in_state
print("ok")
"""


def test_strict_msgpack_mode_clones_the_saver_and_still_logs(tmp_path: Path) -> None:
    """LangGraph's strict mode compiles with saver.with_allowlist(...): still logged."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"}
    tests = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", _STRICT, tests, str(tmp_path / "s.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"


# -- real savers: delegated methods with observable effects ------------------------------
