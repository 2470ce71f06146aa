"""The PostgreSQL saver is wrapped by delegation, as the SQLite one is (a real server)."""

from __future__ import annotations

import pytest
from _persist_support import LIE, build_graph, cfg
from langgraph.checkpoint.postgres import PostgresSaver

import trustgate
from trustgate.persistence import ReportingSaver

# -- real savers: delegated methods with observable effects ------------------------------


@pytest.mark.integration  # a real PostgreSQL
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
