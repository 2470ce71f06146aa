"""The report log written by the gate itself: ``guard(..., report_log=...)``.

Where the graph is served by LangGraph's agent server, the server brings its own
checkpointer, so a ``ReportingSaver`` cannot stand between the graph and its saver; the
gate records every crossing into the log itself. Released crossings are logged before
anything is released (a log that fails releases nothing), halted ones before the halt
is raised; one row per report id, whoever else writes the same log.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.callbacks import (
    BaseCallbackHandler,
    adispatch_custom_event,
    dispatch_custom_event,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from test_record_durable import Watching
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, Report, TrustGate
from trustgate._report import gate_json
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.graph import TrustReports, _gatelog
from trustgate.persistence import InMemoryReportHistory, ReportingSaver, SqliteReportHistory
from trustgate.persistence._log import ReportRow
from trustgate.policies import Override
from trustgate.readers import FromKey
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"


class S(TypedDict, total=False):
    question: str
    answer: str
    notes: str
    acted: Annotated[list[str], operator.add]


def _check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("ledger", "unsupported", "names a record no source has")]
    return [Finding.ok("ledger")]


def _agent(state: S) -> dict[str, Any]:
    q = state.get("question", "")
    if q.startswith("halt"):
        return {"answer": "fine", "notes": LIE}  # a part no gate reads: the crossing halts
    return {"answer": LIE if q.startswith("override") else "fine"}


def _acted(state: S) -> dict[str, Any]:
    return {"acted": ["acted"]}


def _builder(act: Any = _acted) -> StateGraph:
    g = StateGraph(S)
    g.add_node("agent", _agent)
    g.add_node("act", act)
    g.add_edge(START, "agent")
    g.add_edge("agent", "act")
    g.add_edge("act", END)
    return g


GATE = TrustGate(
    "facts",
    reads=FromKey("answer"),
    verifiers=[FunctionVerifier(_check, name="ledger")],
    policy=Override("answer", "withheld"),
)


def _app(report_log: Any, checkpointer: Any = None, act: Any = _acted, **kw: Any) -> Any:
    return trustgate.guard(_builder(act), {"agent": GATE}, report_log=report_log, **kw).compile(
        checkpointer=checkpointer
    )


def _runs(app: Any, thread: str = "t") -> list[str]:
    """pass, override, halt on one thread; the id of each crossing's report."""
    config = {"configurable": {"thread_id": thread}}
    ids = []
    for q in ("pass", "override", "halt"):
        try:
            app.invoke({"question": q}, config)
        except GateHalted as halted:
            ids.append(halted.report.id)
        else:
            ids.append(trustgate.reports(app, config)[-1].id)
    return ids


class FailingLog(InMemoryReportHistory):
    """A log whose database went away."""

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        raise ConnectionError("database gone")


# --- every crossing, released or halted, reaches the log ------------------------------


@pytest.mark.parametrize("checkpointer", [None, InMemorySaver], ids=["no-saver", "saver"])
def test_every_crossing_is_logged_by_the_gate(checkpointer: Any) -> None:
    log = InMemoryReportHistory()
    app = _app(log, checkpointer() if checkpointer else None)
    config = {"configurable": {"thread_id": "t"}}
    decisions = []
    for q in ("pass", "override", "halt"):
        try:
            app.invoke({"question": q}, config)
        except GateHalted as halted:
            decisions.append(halted.report.decision)
    assert decisions == ["halted"]
    logged = log.history()
    assert [r.decision for r in logged] == ["pass", "modified", "halted"]
    assert {r.gate for r in logged} == {"facts"}
    if checkpointer is not None:
        assert [r.thread_id for r in logged] == ["t"] * 3
        assert [r.id for r in logged] == _ids_on_record(app, config)


def _ids_on_record(app: Any, config: Any) -> list[str]:
    return [r.id for r in trustgate.reports(app, config)]


async def test_every_crossing_is_logged_by_the_gate_async() -> None:
    log = InMemoryReportHistory()
    app = _app(log, InMemorySaver())
    config = {"configurable": {"thread_id": "a"}}
    for q in ("pass", "override"):
        await app.ainvoke({"question": q}, config)
    with pytest.raises(GateHalted) as halted:
        await app.ainvoke({"question": "halt"}, config)
    logged = await log.ahistory(thread="a")
    assert [r.decision for r in logged] == ["pass", "modified", "halted"]
    assert logged[-1].id == halted.value.report.id


# --- recorded before released -------------------------------------------------------


@pytest.mark.parametrize("durability", [None, "async", "exit", "sync"])
def test_the_report_is_in_the_log_before_anything_acts_on_the_release(
    durability: str | None,
) -> None:
    """The successor and the stream consumer see the crossing already logged, without a
    checkpointer and whatever durability the run chose with one (``async`` saves a
    step's writes while the next step runs)."""
    log = InMemoryReportHistory()
    seen_by_successor: list[int] = []

    def act(state: S) -> dict[str, Any]:
        seen_by_successor.append(log.count())
        return {"acted": ["acted"]}

    app = _app(log, None if durability is None else InMemorySaver(), act=act)
    config = {"configurable": {"thread_id": f"order-{durability}"}}
    kw = {} if durability is None else {"durability": durability}
    seen_by_consumer = [
        log.count()
        for chunk in app.stream({"question": "override"}, config, **kw)
        if "agent" in chunk
    ]
    assert seen_by_successor == [1] and seen_by_consumer == [1]
    assert [r.decision for r in log.history()] == ["modified"]


class OrderedLog(InMemoryReportHistory):
    """A log that notes, in one list with what was released, when it took a report."""

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    def _insert(self, rows: Sequence[ReportRow]) -> int:
        self.events.append("logged")
        return super()._insert(rows)


class Released(BaseCallbackHandler):
    """Notes each custom callback event when the gate releases it to the handlers."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def on_custom_event(self, name: str, data: Any, **kw: Any) -> None:
        self.events.append(f"released {name}")


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_the_log_takes_the_report_before_the_gate_releases_what_it_held(run: str) -> None:
    """The gate holds what the node emits (here a callback event) until it decides;
    the log has the report before the gate hands the event on."""
    events: list[str] = []

    def agent(state: S) -> dict[str, Any]:
        dispatch_custom_event("said", {"answer": "fine"})
        return {"answer": "fine"}

    async def aagent(state: S) -> dict[str, Any]:
        await adispatch_custom_event("said", {"answer": "fine"})
        return {"answer": "fine"}

    g = StateGraph(S)
    g.add_node("agent", agent if run == "sync" else aagent)
    g.add_edge(START, "agent")
    app = trustgate.guard(g, {"agent": GATE}, report_log=OrderedLog(events)).compile(
        checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "held"}, "callbacks": [Released(events)]}
    if run == "sync":
        app.invoke({"question": "pass"}, config)
    else:
        await app.ainvoke({"question": "pass"}, config)
    assert events == ["logged", "released said"]


async def test_the_report_is_in_the_log_before_anything_acts_on_the_release_async() -> None:
    log = InMemoryReportHistory()
    seen_by_successor: list[int] = []

    async def act(state: S) -> dict[str, Any]:
        seen_by_successor.append(len(await log.ahistory()))
        return {"acted": ["acted"]}

    app = _app(log, InMemorySaver(), act=act)
    config = {"configurable": {"thread_id": "order"}}
    seen_by_consumer = [
        len(await log.ahistory())
        async for chunk in app.astream({"question": "pass"}, config)
        if "agent" in chunk
    ]
    assert seen_by_successor == [1] and seen_by_consumer == [1]


@pytest.mark.parametrize("checkpointer", [None, InMemorySaver], ids=["no-saver", "saver"])
def test_a_log_that_cannot_record_releases_nothing(checkpointer: Any) -> None:
    app = _app(FailingLog(), checkpointer() if checkpointer else None)
    config = {"configurable": {"thread_id": "gone"}}
    streamed = []
    with pytest.raises(ConnectionError) as failed:
        for chunk in app.stream({"question": "pass"}, config):
            streamed.append(chunk)
    notes = " ".join(failed.value.__notes__)
    assert "nothing was released" in notes and "report log could not record" in notes
    assert not any("agent" in c or "act" in c for c in streamed)
    if checkpointer is not None:
        assert "answer" not in app.get_state(config).values
        assert not app.get_state(config).values.get("acted")


async def test_a_log_that_cannot_record_releases_nothing_async() -> None:
    app = _app(FailingLog(), InMemorySaver())
    config = {"configurable": {"thread_id": "gone"}}
    with pytest.raises(ConnectionError):
        await app.ainvoke({"question": "override"}, config)
    assert not (await app.aget_state(config)).values.get("acted")


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_a_halt_the_log_cannot_record_fails_loudly(run: str) -> None:
    """Nothing is released either way; the run fails with the log's error, which names
    the crossing it could not record, and the halt it would have raised is its context."""
    app = _app(FailingLog(), InMemorySaver())
    config = {"configurable": {"thread_id": "h"}}
    with pytest.raises(ConnectionError) as failed:
        if run == "sync":
            app.invoke({"question": "halt"}, config)
        else:
            await app.ainvoke({"question": "halt"}, config)
    assert any("report log could not record" in n for n in failed.value.__notes__)
    assert "answer" not in app.get_state(config).values


# --- one row per crossing, whoever writes the log -----------------------------------


def test_the_gate_and_a_reporting_saver_on_one_log_keep_one_row_per_crossing() -> None:
    log = InMemoryReportHistory()
    saver = ReportingSaver(InMemorySaver(), log)
    app = _app(log, saver)
    ids = _runs(app)
    saver.reconcile({"configurable": {"thread_id": "t"}})
    assert log.count() == 3
    assert [r.id for r in log.history(thread="t")] == ids


def test_two_logs_on_one_sqlite_file_keep_one_row_per_crossing(tmp_path: Path) -> None:
    """The gate writes the file by its URL, a ReportingSaver through a log of its own
    (another process's, say): the database decides, one row per id."""
    path = tmp_path / "trustgate.db"
    saver_log = SqliteReportHistory(path)
    saver = ReportingSaver(InMemorySaver(), saver_log)
    app = _app(f"sqlite:///{path}", saver)
    ids = _runs(app)
    saver.reconcile({"configurable": {"thread_id": "t"}})
    assert saver_log.count() == 3
    assert [r.id for r in saver_log.history(thread="t")] == ids


def test_a_release_delivered_again_after_a_crash_keeps_one_row_counting_both() -> None:
    """The worker dies after the gate released and before LangGraph saved the task's own
    writes; the worker that picks the thread up delivers the recorded release again.
    The log keeps one row for the crossing, which counts both deliveries."""
    log = InMemoryReportHistory()
    saver = Watching()
    config = {"configurable": {"thread_id": "crash"}}
    saver.die_after_release = True
    with pytest.raises(KeyboardInterrupt):
        _app(log, saver).invoke({"question": "override"}, config)
    saver.revive()
    (first,) = log.history(thread="crash")
    assert first.deliveries == 1
    out = _app(log, saver).invoke(None, config)  # the worker that picks the thread up
    assert out["answer"] == "withheld" and out["acted"] == ["acted"]
    (again,) = log.history(thread="crash")
    assert again.id == first.id and again.deliveries == 2
    assert log.count() == 1


# --- only what a gate sealed ---------------------------------------------------------


class SealedState(TypedDict, total=False):
    question: str
    answer: str
    trust_reports: TrustReports


def _forged(thread: str) -> dict[str, Any]:
    return Report(
        gate="facts", node="agent", decision="pass", released=True, thread_id=thread
    ).to_json_dict()


def test_the_log_holds_only_what_the_gate_sealed() -> None:
    """Another node and the caller's input put reports of their own in
    ``trust_reports``; the gate's log and a ReportingSaver on the same log record the
    gate's crossings only."""
    log = InMemoryReportHistory()
    g = StateGraph(SealedState)
    g.add_node("agent", _agent)
    g.add_node("forger", lambda s: {"trust_reports": [_forged("t")]})
    g.add_edge(START, "agent")
    g.add_edge("agent", "forger")
    g.add_edge("forger", END)
    saver = ReportingSaver(InMemorySaver(), log)
    app = trustgate.guard(g, {"agent": GATE}, report_log=log).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"question": "override", "trust_reports": [_forged("t")]}, config)
    saver.reconcile(config)
    logged = log.history(thread="t")
    assert [r.decision for r in logged] == ["modified"]
    assert [r.id for r in logged] == [r.id for r in trustgate.reports(app, config)]
    assert log.count() == 1


@pytest.mark.parametrize("run", ["sync", "async"])
@pytest.mark.parametrize("how", ["unsealed", "edited"])
async def test_the_gate_log_refuses_a_report_whose_seal_does_not_hold(how: str, run: str) -> None:
    """What the log is handed must be what a gate sealed; anything else fails before a
    row is written (a crossing released with no row would not be recorded)."""
    log = InMemoryReportHistory()
    (body,) = gate_json([Report(gate="facts", node="agent", decision="pass", released=True)])
    if how == "unsealed":
        body.pop("seal")
    else:
        body["decision"] = "modified"
    config = {"configurable": {"thread_id": "s"}}
    status = {"unsealed": "unsealed", "edited": "forged"}[how]
    with pytest.raises(ConfigurationError, match=f"only reports a gate sealed.* is {status}"):
        if run == "sync":
            _gatelog.GateLog(log).record([body], config)
        else:
            await _gatelog.GateLog(log).arecord([body], config)
    assert log.count() == 0


# --- the log by URL or from the environment -----------------------------------------


def test_report_log_true_opens_the_database_the_environment_names_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "served.db"
    monkeypatch.setenv("TRUSTGATE_DATABASE_URL", str(path))
    app = _app(True, InMemorySaver())  # nothing is opened before a crossing runs
    assert not path.exists()
    ids = _runs(app)
    opened = _gatelog.shared_log(None)
    assert opened is _gatelog.shared_log(str(path))  # one log per database and process
    assert [r.id for r in opened.history(thread="t")] == ids
    reader = SqliteReportHistory(path, read_only=True)  # another process reads it
    assert [r.decision for r in reader.history(thread="t")] == ["pass", "modified", "halted"]
    reader.close()


@pytest.mark.parametrize(
    "value, match",
    [
        (42, "takes a ReportHistory"),
        ("mysql://db/x", "unsupported database URL scheme"),
        ("", "empty database URL"),
    ],
)
def test_report_log_refuses_what_is_no_log(value: Any, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        trustgate.guard(_builder(), {"agent": GATE}, report_log=value)
