"""A release delivered again after each of several crashes counts every delivery.

A crash after the release and before the task's own writes were saved makes LangGraph
run the task again, and the gate delivers its recorded release again, saving the report
(``deliveries`` one higher) beside the task before it releases. That save went under the
task id of the first release record, which a saver keeps as first written (a write with
the same task and index is not replaced), so the count was always worked out from the
first record: a second crash during the redelivery left a report that said two
deliveries after three. Each delivery is now saved under a task id of its own and the
next one counts from the highest saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, LastAIText, TrustGate
from trustgate.persistence import ReportingSaver, SqliteReportHistory
from trustgate.testing import honest_model

ANSWER = "The refund is not approved yet."


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    acted: Annotated[list[str], lambda a, b: [*(a or []), *(b or [])]]


class CrashAfterDelivery(InMemorySaver):
    """Every write fails once the gate saved ``crash_at`` more deliveries beside its task
    (the worker died right after it recorded a release, before anything else landed)."""

    def __init__(self) -> None:
        super().__init__()
        self.crash_at: int | None = None
        self.dead = False

    def put_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if self.dead:
            raise KeyboardInterrupt("the worker was killed")
        super().put_writes(config, writes, task_id, task_path)
        delivered = any(
            c == "trust_reports" and any(r.get("released") for r in v) for c, v in writes
        )
        if "~trustgate~" in task_id and delivered and self.crash_at is not None:
            self.crash_at -= 1
            self.dead = self.crash_at == 0

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.dead:
            raise KeyboardInterrupt("the worker was killed")
        return super().put(config, checkpoint, metadata, new_versions)

    def crash_after(self, deliveries: int | None) -> None:
        self.crash_at, self.dead = deliveries, False


def _app(saver: Any, acted: list[str]) -> Any:
    model = honest_model(ANSWER)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def act(state: S) -> dict[str, Any]:
        acted.append(state["messages"][-1].text)
        return {"acted": ["acted"]}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_node("act", act)
    g.add_edge(START, "agent")
    g.add_edge("agent", "act")
    g.add_edge("act", END)
    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(lambda c, e: [Finding.ok("answer")], name="answer")],
    )
    return trustgate.guard(g, {"agent": gate}).compile(checkpointer=saver)


@pytest.mark.parametrize("crashes", [2, 3])
def test_every_delivery_after_a_crash_is_counted(crashes: int, tmp_path: Path) -> None:
    inner = CrashAfterDelivery()
    log = SqliteReportHistory(tmp_path / "reports.db")
    saver = ReportingSaver(inner, log)
    config = {"configurable": {"thread_id": "again"}}
    acted: list[str] = []
    inner.crash_after(1)
    with pytest.raises(KeyboardInterrupt):
        _app(saver, acted).invoke(
            {"messages": [HumanMessage("refund?")]}, config, durability="sync"
        )
    for _ in range(crashes - 1):  # each resume delivers again, then dies again
        inner.crash_after(1)
        with pytest.raises(KeyboardInterrupt):
            _app(saver, acted).invoke(None, config, durability="sync")
    inner.crash_after(None)
    out = _app(saver, acted).invoke(None, config, durability="sync")
    assert out["acted"] == ["acted"] and acted == [ANSWER]
    (report,) = trustgate.reports(_app(saver, acted), config)
    assert report.deliveries == crashes + 1
    (logged,) = log.history(thread="again")
    assert logged.id == report.id and logged.deliveries == crashes + 1
