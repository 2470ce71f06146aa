"""Recorded before released: a crossing's report is durable before anything acts on the
release, whatever durability the run chose, and a release is delivered once per crossing.

LangGraph's default ``durability="async"`` saves a step's writes while the next step
already runs, so a successor used to act on a released output whose report was still
being written (a worker killed then left an acted-on output with no report), and a
full disk failed the report after the output was released. The gate now writes its
report beside its task, synchronously, before it releases: a save that fails holds
the output back, raising the saver's own error. And a task LangGraph runs again after a crash
that came between the release and the task's own saved writes delivers the recorded
release again instead of deciding anew.
"""

from __future__ import annotations

import errno
import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, LastAIText, TrustGate
from trustgate.testing import honest_model

ANSWER = "The refund is not approved yet."


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    acted: Annotated[list[str], operator.add]


class Watching(InMemorySaver):
    """An in-memory saver that remembers the order of what was written, and can fail:
    ``fail_reports`` the gate's own writes, ``die_after_release`` every write once the
    gate recorded a release (the worker killed right after it released)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, str]] = []
        self.fail_reports: BaseException | None = None
        self.die_after_release = False
        self.dead = False

    def put_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        channels = [c for c, _v in writes]
        beside = "~trustgate~" in task_id
        if beside and self.fail_reports is not None and "trust_reports" in channels:
            raise self.fail_reports
        if self.dead:
            raise KeyboardInterrupt("the worker was killed: nothing it writes lands")
        for c in channels:
            self.events.append(("beside" if beside else "task", c))
        super().put_writes(config, writes, task_id, task_path)
        if beside and self.die_after_release and "__trustgate_release__" in channels:
            self.dead = True

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.dead:
            raise KeyboardInterrupt("the worker was killed: nothing it writes lands")
        return super().put(config, checkpoint, metadata, new_versions)

    def revive(self) -> None:
        self.dead = self.die_after_release = False

    def reports_saved(self) -> int:
        return sum(1 for where, c in self.events if c == "trust_reports")


def _check(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("answer")]


def _graph(model: Any, saver: Watching) -> tuple[Any, list[int]]:
    """agent (guarded) → act; ``act`` records how many reports were saved when it ran."""
    seen: list[int] = []

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def act(state: S) -> dict[str, Any]:
        seen.append(saver.reports_saved())
        return {"acted": ["acted"]}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_node("act", act)
    g.add_edge(START, "agent")
    g.add_edge("agent", "act")
    g.add_edge("act", END)
    gate = TrustGate(
        "answer", reads=LastAIText(), verifiers=[FunctionVerifier(_check, name="answer")]
    )
    return trustgate.guard(g, {"agent": gate}).compile(checkpointer=saver), seen


@pytest.mark.parametrize("durability", ["async", "exit", "sync"])
def test_the_report_is_saved_before_anything_acts_on_the_release(durability: str) -> None:
    saver = Watching()
    app, seen = _graph(honest_model(ANSWER), saver)
    config = {"configurable": {"thread_id": f"d-{durability}"}}
    chunks = []
    for chunk in app.stream({"messages": [HumanMessage("refund?")]}, config, durability=durability):
        chunks.append((saver.reports_saved(), chunk))
    assert seen == [1] or seen[0] >= 1  # the successor ran with the report already saved
    first_update = next(n for n, c in chunks if "agent" in c)
    assert first_update >= 1  # and so did the stream consumer
    assert [r.decision for r in trustgate.reports(app, config)] == ["pass"]


@pytest.mark.parametrize(
    "failure",
    [OSError(errno.ENOSPC, "No space left on device"), ConnectionError("database gone")],
    ids=["disk-full", "database-gone"],
)
def test_a_report_that_cannot_be_saved_releases_nothing(failure: BaseException) -> None:
    saver = Watching()
    saver.fail_reports = failure
    app, seen = _graph(honest_model(ANSWER), saver)
    config = {"configurable": {"thread_id": "full"}}
    streamed = []
    with pytest.raises(type(failure)) as held:
        for chunk in app.stream({"messages": [HumanMessage("refund?")]}, config):
            streamed.append(chunk)
    assert held.value is failure
    assert any("nothing was released" in note for note in failure.__notes__)
    assert seen == []  # nothing downstream ran
    assert not any("agent" in c for c in streamed)  # nothing of the release was streamed
    assert ANSWER not in str(app.get_state(config).values)


async def test_a_report_that_cannot_be_saved_releases_nothing_async() -> None:
    saver = Watching()
    saver.fail_reports = OSError(errno.ENOSPC, "No space left on device")
    app, seen = _graph(honest_model(ANSWER), saver)
    with pytest.raises(OSError):
        await app.ainvoke(
            {"messages": [HumanMessage("refund?")]}, {"configurable": {"thread_id": "a"}}
        )
    assert seen == []


def test_a_task_run_again_after_a_crash_delivers_the_recorded_release() -> None:
    """The crash comes after the gate released (its report and release are saved) and
    before LangGraph saved the task's own writes: the resume runs the task again. The
    recorded release is delivered again: the model is not asked again, nothing is
    decided anew, the crossing keeps one report, which says it was delivered twice."""
    saver = Watching()
    model = honest_model(ANSWER, "A second, different answer.")
    app, _seen = _graph(model, saver)
    config = {"configurable": {"thread_id": "crash"}}
    saver.die_after_release = True
    with pytest.raises(KeyboardInterrupt):
        app.invoke({"messages": [HumanMessage("refund?")]}, config)
    saver.revive()
    assert len(model.calls) == 1
    fresh, seen = _graph(model, saver)  # the worker that picks the thread up
    out = fresh.invoke(None, config)
    assert len(model.calls) == 1  # the model was not asked again
    assert out["messages"][-1].text == ANSWER
    assert out["acted"][-1] == "acted" and seen and seen[-1] >= 1
    (report,) = trustgate.reports(fresh, config)
    assert report.deliveries == 2 and report.released


def test_an_uncrashed_run_delivers_once() -> None:
    saver = Watching()
    app, _seen = _graph(honest_model(ANSWER), saver)
    config = {"configurable": {"thread_id": "once"}}
    app.invoke({"messages": [HumanMessage("refund?")]}, config)
    (report,) = trustgate.reports(app, config)
    assert report.deliveries == 1 and report.crossing is not None


def test_a_forged_release_record_is_not_delivered() -> None:
    """What a release record holds is sealed: one written by anything but the gate (an
    edited checkpoint row) is not delivered; the task decides anew."""
    saver = Watching()
    model = honest_model(ANSWER, ANSWER)
    app, _seen = _graph(model, saver)
    config = {"configurable": {"thread_id": "forged"}}
    saver.die_after_release = True
    with pytest.raises(KeyboardInterrupt):
        app.invoke({"messages": [HumanMessage("refund?")]}, config)
    saver.revive()
    for _key, writes in saver.writes.items():
        for (task, idx), (t, channel, _value, path) in list(writes.items()):
            if channel == "__trustgate_release__":
                kind, data = saver.serde.dumps_typed({"trustgate": "forged"})
                writes[(task, idx)] = (t, channel, (kind, data), path)
    fresh, _seen = _graph(model, saver)
    out = fresh.invoke(None, config)
    assert len(model.calls) == 2  # decided anew
    assert out["messages"][-1].text == ANSWER


def test_a_task_langgraph_runs_again_on_purpose_decides_anew() -> None:
    """A finished task that LangGraph runs again deliberately (time travel from an
    earlier checkpoint) has writes of its own: it decides anew, the recorded release
    is not delivered in its place."""
    saver = Watching()
    model = honest_model(ANSWER, "A second, different answer.")
    app, _seen = _graph(model, saver)
    config = {"configurable": {"thread_id": "travel"}}
    app.invoke({"messages": [HumanMessage("refund?")]}, config)
    history = list(app.get_state_history(config))
    before_agent = next(s for s in history if s.next == ("agent",))
    out = app.invoke(None, before_agent.config)
    assert len(model.calls) == 2  # asked again
    assert out["messages"][-1].text == "A second, different answer."


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_the_report_log_keeps_one_row_that_counts_the_deliveries(
    backend: str, tmp_path: Any
) -> None:
    """The crashed task's report reaches the log on its first delivery; the redelivery
    replaces that row with the report that counts two deliveries: one row per
    crossing, and the log says the output was released twice."""
    from trustgate.persistence import InMemoryReportHistory, ReportingSaver, SqliteReportHistory

    log = (
        InMemoryReportHistory()
        if backend == "memory"
        else SqliteReportHistory(tmp_path / "reports.db")
    )
    watching = Watching()
    saver = ReportingSaver(watching, log)
    model = honest_model(ANSWER, "A second, different answer.")
    config = {"configurable": {"thread_id": "logged"}}
    app, _seen = _graph(model, saver)  # type: ignore[arg-type]
    watching.die_after_release = True
    with pytest.raises(KeyboardInterrupt):
        app.invoke({"messages": [HumanMessage("refund?")]}, config)
    watching.revive()
    (first,) = log.history(thread="logged")
    assert first.deliveries == 1
    fresh, _seen = _graph(model, saver)  # type: ignore[arg-type]
    fresh.invoke(None, config)
    saver.reconcile(config)  # a sweep after the fact changes nothing
    (again,) = log.history(thread="logged")
    assert again.id == first.id and again.deliveries == 2


def test_a_later_run_of_a_thread_this_process_served_is_redelivered_too() -> None:
    """The thread already ran in this process; its second run crashes after the release
    and is resumed here: the recorded release is delivered, not decided anew."""
    saver = Watching()
    model = honest_model(ANSWER, "A second answer.", "A third, never to be asked.")
    app, _seen = _graph(model, saver)
    config = {"configurable": {"thread_id": "twice"}}
    app.invoke({"messages": [HumanMessage("refund?")]}, config)
    saver.die_after_release = True
    with pytest.raises(KeyboardInterrupt):
        app.invoke({"messages": [HumanMessage("and now?")]}, config)
    saver.revive()
    out = app.invoke(None, config)
    assert len(model.calls) == 2
    assert out["messages"][-1].text == "A second answer."
    first, second = trustgate.reports(app, config)
    assert (first.deliveries, second.deliveries) == (1, 2)
