"""A small guarded graph and worker entry points for the persistence tests and the bench.

Also: a graph that follows the gate-inside-the-task contract with no gate machinery
(so the savers are tested against the contract, not one gate design), and every
saver kind wrapped in a ReportingSaver behind one sync/async interface.

Everything here is importable by a freshly spawned process (``multiprocessing``
with the ``spawn`` start method): the worker functions take only picklable
arguments and open their own database connection, exactly as a separate worker
machine would.
"""

from __future__ import annotations

import operator
import os
import time
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate._findings import Finding
from trustgate._gate import TrustGate
from trustgate._report import REPORTS_KEY, Report, TrustReports, gate_json
from trustgate.errors import GateHalted
from trustgate.graph import guard
from trustgate.policies import Halt, Override, Review
from trustgate.verifiers.base import Evidence, FunctionVerifier

__all__ = [
    "HONEST",
    "LIE",
    "SAVER_KINDS",
    "InTaskState",
    "Opened",
    "State",
    "build_graph",
    "build_in_task_graph",
    "cfg",
    "open_saver",
    "saver_reports",
    "worker_acquire",
    "worker_ainvoke",
    "worker_aresume",
    "worker_invoke",
    "worker_resume",
]

HONEST = "the fix is in a.py"
LIE = "LIE: the fix is already merged"


class State(TypedDict, total=False):
    text: str
    verdict: str
    log: Annotated[list[str], operator.add]
    trust_reports: TrustReports


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _check(marker: str | None, sleep: float) -> Any:
    def no_lies(claims: Any, evidence: Evidence) -> list[Finding]:
        if marker is not None:
            # proof that the process is inside the gate when it gets killed
            Path(marker).write_text(str(os.getpid()))
            time.sleep(sleep)
        if isinstance(claims, str) and claims.startswith("LIE"):
            return [Finding.failed("no_lies", "invented", "the claim is not supported")]
        return [Finding.ok("no_lies")]

    # A verifier told to stay inside the gate (the kill test) gets an explicit time
    # limit well past its sleep: the gate's default (30 s) can fire in a cold spawned
    # worker on a loaded machine before the test has seen the pre-gate checkpoint and
    # killed it, and the worker would then die of a verifier_timeout halt instead.
    limit = None if marker is None else sleep + 600.0
    return FunctionVerifier(no_lies, name="no_lies", timeout=limit)


def build_graph(
    *,
    policy: str = "override",
    guarded: bool = True,
    marker: str | None = None,
    sleep: float = 0.0,
) -> StateGraph[Any, Any, Any, Any]:
    """writer (the 'model') → publish; a gate on writer when ``guarded``."""

    def writer(state: State) -> dict[str, Any]:
        return {"text": state.get("text", HONEST), "log": [f"writer@{os.getpid()}"]}

    def publish(state: State) -> dict[str, Any]:
        return {"verdict": "published", "log": [f"publish@{os.getpid()}"]}

    g = StateGraph(State)
    g.add_node("writer", writer)
    g.add_node("publish", publish)
    g.add_edge(START, "writer")
    g.add_edge("writer", "publish")
    g.add_edge("publish", END)
    if not guarded:
        return g
    gate = TrustGate(
        "checker",
        reads="text",
        verifiers=[_check(marker, sleep)],
        policy={"review": Review(), "halt": Halt()}.get(policy, Override("text", "[removed]")),
        passthrough=["log"],
    )
    return guard(g, {"writer": gate})


def worker_invoke(url: str, thread: str, text: str, policy: str, marker: str | None) -> None:
    """Start a run (process A of the review / kill tests)."""
    from trustgate.persistence import connect

    with connect(url) as db:
        app = build_graph(policy=policy, marker=marker, sleep=3600.0 if marker else 0.0).compile(
            checkpointer=db.checkpointer, store=db.store
        )
        app.invoke({"text": text, "log": []}, cfg(thread))


def worker_resume(url: str, thread: str, resume: Any, policy: str) -> None:
    """Resume a run another process started (process B)."""
    from langgraph.types import Command

    from trustgate.persistence import connect

    with connect(url) as db:
        app = build_graph(policy=policy).compile(checkpointer=db.checkpointer, store=db.store)
        app.invoke(Command(resume=resume) if resume is not None else None, cfg(thread))


def worker_acquire(url: str, root: str, barrier: Any, out: Any) -> None:
    """Acquire one locator and put it in the shared ledger right after the barrier."""
    from trustgate._claims import Locator
    from trustgate.errors import LedgerConflict
    from trustgate.evidence.ledger_postgres import PostgresLedger
    from trustgate.evidence.workspace import Workspace

    ledger = PostgresLedger(url)
    try:
        mine = Workspace(root).acquire(Locator(path="a.py", start_line=1, end_line=2))
        barrier.wait(timeout=60)  # both processes hold an artifact before either inserts
        stored = ledger.put(mine)
        forged = stored.model_copy(update={"verification": "unverified"})
        try:
            ledger.put(forged)
            refused = False
        except LedgerConflict:
            refused = True
        out.put(
            {
                "pid": os.getpid(),
                "mine": mine.model_dump_json(),
                "stored": stored.model_dump_json(),
                "refused": refused,
            }
        )
    finally:
        ledger.close()


async def _ainvoke_main(url: str, thread: str, text: str, policy: str) -> None:
    from trustgate.persistence import aconnect

    async with aconnect(url) as db:
        app = build_graph(policy=policy).compile(checkpointer=db.checkpointer, store=db.store)
        await app.ainvoke({"text": text, "log": []}, cfg(thread))


def worker_ainvoke(url: str, thread: str, text: str, policy: str) -> None:
    """Start a run on the async savers (process A)."""
    import asyncio

    asyncio.run(_ainvoke_main(url, thread, text, policy))


async def _aresume_main(url: str, thread: str, resume: Any, policy: str) -> None:
    from langgraph.types import Command

    from trustgate.persistence import aconnect

    async with aconnect(url) as db:
        app = build_graph(policy=policy).compile(checkpointer=db.checkpointer, store=db.store)
        await app.ainvoke(Command(resume=resume) if resume is not None else None, cfg(thread))


def worker_aresume(url: str, thread: str, resume: Any, policy: str) -> None:
    """Resume on the async savers a run another process started (process B)."""
    import asyncio

    asyncio.run(_aresume_main(url, thread, resume, policy))


# -- the gate-inside-the-task contract -----------------------------------------------
#
# A gate that runs inside the guarded node's own task writes its report(s) as that
# task's writes to ``trust_reports`` (through the task's send function) and, when it
# halts, raises GateHalted afterwards: the report then exists only in the failed
# task's pending writes. This graph does exactly that with no gate machinery, so the
# savers are tested against the contract whichever gate design is wired.


class InTaskState(TypedDict, total=False):
    text: str
    verdict: str
    side: str
    log: Annotated[list[str], operator.add]
    trust_reports: TrustReports


def _send(config: RunnableConfig, writes: list[tuple[str, Any]]) -> None:
    from langgraph._internal._constants import CONFIG_KEY_SEND

    config["configurable"][CONFIG_KEY_SEND](writes)


def build_in_task_graph(
    *, calls: Path | None = None, flaky: Path | None = None
) -> StateGraph[Any, Any, Any, Any]:
    """writer (checked in its own task) → publish; optionally a flaky sibling of writer.

    A text starting with ``LIE`` halts; ``calls`` counts the writer's runs (one
    line per run); ``flaky`` is a marker file: while it exists, the sibling node
    removes it and fails, so the superstep fails once after writer's task succeeded
    (the sibling waits for the writer to finish first, so the order is fixed).
    """
    import threading

    writer_done = threading.Event()

    def writer(state: InTaskState, config: RunnableConfig) -> dict[str, Any]:
        if calls is not None:
            with calls.open("a") as f:
                f.write(f"{os.getpid()}\n")
        text = state.get("text", HONEST)
        lie = text.startswith("LIE")
        report = Report(
            gate="checker",
            node="writer",
            claims=[text],
            findings=[Finding.failed("no_lies", "invented", "the claim is not supported")]
            if lie
            else [Finding.ok("no_lies")],
            decision="halted" if lie else "pass",
            released=not lie,
            thread_id=str(config["configurable"].get("thread_id")),
        )
        _send(config, [(REPORTS_KEY, gate_json([report]))])  # sealed, as a gate does
        writer_done.set()
        if lie:
            raise GateHalted(report)
        return {"text": text, "log": [f"writer@{os.getpid()}"]}

    def sibling(state: InTaskState) -> dict[str, Any]:
        if flaky is not None and flaky.exists():
            writer_done.wait(30)
            time.sleep(0.3)  # let the writer's task return and its writes be saved
            flaky.unlink()
            raise RuntimeError("the sibling failed once")
        return {"side": "done"}

    def publish(state: InTaskState) -> dict[str, Any]:
        return {"verdict": "published", "log": [f"publish@{os.getpid()}"]}

    g = StateGraph(InTaskState)
    g.add_node("writer", writer)
    g.add_node("publish", publish)
    g.add_edge(START, "writer")
    if flaky is not None:
        g.add_node("sibling", sibling)
        g.add_edge(START, "sibling")
        g.add_edge(["writer", "sibling"], "publish")
    else:
        g.add_edge("writer", "publish")
    g.add_edge("publish", END)
    return g


# -- every saver kind, wrapped -------------------------------------------------------

SAVER_KINDS = ("memory", "sqlite", "sqlite-async", "postgres", "postgres-async")


class Opened:
    """A wrapped saver of one kind, its report log, and how to run a graph on it."""

    def __init__(self, kind: str, saver: Any, log: Any, db: Any = None) -> None:
        self.kind = kind
        self.saver = saver
        self.log = log
        self.db = db
        self.is_async = kind.endswith("-async")

    async def invoke(self, app: Any, inputs: Any, config: Any, **kw: Any) -> Any:
        if self.is_async:
            return await app.ainvoke(inputs, config, **kw)
        return app.invoke(inputs, config, **kw)

    async def get_state(self, app: Any, config: Any) -> Any:
        if self.is_async:
            return await app.aget_state(config)
        return app.get_state(config)

    async def history(self, **kw: Any) -> list[Report]:
        if self.is_async:
            out: list[Report] = await self.log.ahistory(**kw)
            return out
        return list(self.log.history(**kw))

    async def reconcile(self, config: Any = None) -> int:
        if self.is_async:
            return int(await self.saver.areconcile(config))
        return int(self.saver.reconcile(config))

    async def close(self) -> None:
        if self.db is None:
            return
        if self.is_async:
            await self.db.aclose()
        else:
            self.db.close()


async def open_saver(kind: str, url: str | None) -> Opened:
    """``memory`` needs no URL; the others take a SQLite path or a postgresql:// URL."""
    from trustgate.persistence import (
        InMemoryReportHistory,
        ReportingSaver,
        aconnect,
        connect,
    )

    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        log = InMemoryReportHistory()
        return Opened(kind, ReportingSaver(InMemorySaver(), log), log)
    assert url is not None
    db = await aconnect(url) if kind.endswith("-async") else connect(url)
    return Opened(kind, db.checkpointer, db.report_log, db)


async def saver_reports(opened: Opened, thread: str) -> dict[str, Report]:
    """Every report the WRAPPED saver's own rows hold for a thread: checkpoint channels
    and pending writes (read around the wrapper, so reading reconciles nothing)."""
    inner = opened.saver.saver
    config = cfg(thread)
    items = [i async for i in inner.alist(config)] if opened.is_async else list(inner.list(config))
    found: dict[str, Report] = {}
    for item in items:
        values = item.checkpoint.get("channel_values") or {}
        for r in values.get(REPORTS_KEY) or []:
            rep = Report.coerce(r)
            found[rep.id] = rep
        for _task, channel, value in item.pending_writes or []:
            if channel == REPORTS_KEY:
                for r in value if isinstance(value, list) else [value]:
                    rep = Report.coerce(r)
                    found[rep.id] = rep
    return found
