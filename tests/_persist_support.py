"""A small guarded graph and worker entry points for the persistence tests and the bench.

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

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate.findings import Finding
from trustgate.gate import TrustGate
from trustgate.graph import guard
from trustgate.policy import Halt, Override, Review
from trustgate.report import TrustReports
from trustgate.verifiers.base import Evidence, FunctionVerifier

__all__ = [
    "State",
    "build_graph",
    "cfg",
    "worker_acquire",
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

    return FunctionVerifier(no_lies, name="no_lies")


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
    from trustgate.claims import Locator
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
