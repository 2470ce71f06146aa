"""Reports: the model, the append channel, checkpoint round-trips (strict msgpack too)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from trustgate import Finding
from trustgate._report import (
    OverrideRecord,
    Report,
    TrustReports,
    add_reports,
    gate_json,
    reports,
    reports_from_state,
)


class State(TypedDict, total=False):
    x: int
    trust_reports: TrustReports


def _report(n: int = 1) -> Report:
    return Report(
        gate="g",
        node="n",
        claims=[{"item": "a", "n": n}],
        findings=[Finding.failed("v", "content_mismatch", "nope", subject="a.py")],
        decision="modified",
        overrides=[
            OverrideRecord(
                kind="field_override",
                target="verdict",
                before="APPROVE",
                after="REQUEST_CHANGES",
                reason="v/content_mismatch",
            )
        ],
        released=True,
        thread_id="t1",
        attempt=n,
    )


def _graph(checkpointer: Any) -> Any:
    """Two nodes standing in for gates: they write sealed reports, as a gate does (one
    as the JSON form, one as the typed report)."""

    def node(state: State) -> dict[str, Any]:
        return {"x": 1, "trust_reports": gate_json([_report()])}

    def node2(state: State) -> dict[str, Any]:
        return {"trust_reports": [Report.coerce(gate_json([_report(2)])[0])]}

    g = StateGraph(State)
    g.add_node("node", node)
    g.add_node("node2", node2)
    g.add_edge(START, "node")
    g.add_edge("node", "node2")
    return g.compile(checkpointer=checkpointer)


def test_reducer_appends_sealed_reports_and_rebuilds_dicts() -> None:
    r, other = _report(), _report(2)
    sealed = gate_json([r, other])
    out = add_reports([sealed[0]], sealed[1])
    assert [x.id for x in out] == [r.id, other.id]
    assert all(isinstance(x, Report) for x in out)
    assert add_reports(None, None) == []
    assert r.failed and not r.passed
    # an unsealed report (any node, the input) is refused; the same id again replaces
    assert add_reports(out, [_report(3).to_json_dict()]) == out
    again = gate_json([other.model_copy(update={"deliveries": 2})])
    assert [x.deliveries for x in add_reports(out, again)] == [1, 2]


def test_verdict_excludes_ids_and_clock() -> None:
    a, b = _report(), _report()
    assert a.id != b.id
    assert a.verdict() == b.verdict()
    assert "started_at" not in a.verdict() and "id" not in a.verdict()


def _check_roundtrip(graph: Any) -> None:
    cfg: Any = {"configurable": {"thread_id": "t1"}}
    out = graph.invoke({"x": 0}, cfg)
    assert [r.attempt for r in out["trust_reports"]] == [1, 2]
    got = reports(graph, cfg)
    assert [type(r) for r in got] == [Report, Report]
    assert got[0].findings[0].code == "content_mismatch"
    assert got[0].overrides[0].after == "REQUEST_CHANGES"
    assert got[1].verdict() == _report(2).verdict()
    # channel values restored from the checkpoint are typed again
    snap = graph.get_state(cfg)
    assert all(isinstance(r, Report) for r in snap.values["trust_reports"])
    assert reports_from_state(snap) == got


def test_roundtrip_strict_serializer_in_memory() -> None:
    _check_roundtrip(_graph(InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))))


def test_roundtrip_sqlite(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.db")) as saver:
        _check_roundtrip(_graph(saver))


def test_roundtrip_with_strict_msgpack_env(tmp_path: Any) -> None:
    """The env switch is read at import time, so prove it in a fresh interpreter."""
    code = textwrap.dedent(
        """
        import logging, sys
        from langgraph.checkpoint.serde import _msgpack
        assert _msgpack.STRICT_MSGPACK_ENABLED
        blocked = []
        class H(logging.Handler):
            def emit(self, record):
                if "Blocked" in record.getMessage():
                    blocked.append(record.getMessage())
        logging.getLogger("langgraph").addHandler(H())
        from langgraph.checkpoint.sqlite import SqliteSaver
        sys.path[:0] = ["tests/integration", "tests"]
        import test_gate_report as t
        with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
            t._check_roundtrip(t._graph(saver))
        assert not blocked, blocked
        print("OK")
        """
    )
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "OK" in proc.stdout


def test_reports_from_plain_dict_state() -> None:
    from trustgate import Report
    from trustgate.graph import reports_from_state

    r = Report(gate="g", node="n", decision="pass", released=True)
    (sealed,) = gate_json([r])
    assert [x.id for x in reports_from_state({"trust_reports": [sealed]})] == [r.id]
    found = reports_from_state({"trust_reports": [r.to_json_dict()]})
    assert found == [] and [row.status for row in found.refused] == ["unsealed"]
    assert reports_from_state({}) == []
    assert "<table" in r._repr_html_()
