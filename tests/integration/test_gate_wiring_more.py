"""guard() corners: waiting edges, context evidence, schemas without trust_reports,
strict msgpack checkpoints, pydantic state."""

from __future__ import annotations

import operator
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
from _gate_support import LIE, TRUTH, Review, cfg, inspector, reviewer_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate, reports
from trustgate.errors import GateHalted
from trustgate.graph import guard
from trustgate.policies import Halt
from trustgate.readers import FromKey
from trustgate.testing import lying_model
from trustgate.verifiers.base import Evidence, EvidenceSources, FromContext, FunctionVerifier


class JoinState(TypedDict, total=False):
    review: Review
    log: Annotated[list[str], operator.add]


def _join_graph(data: dict[str, Any]) -> StateGraph[Any, Any, Any, Any]:
    def reviewer(state: JoinState) -> dict[str, Any]:
        return {"review": Review(**data), "log": ["reviewer"]}

    def linter(state: JoinState) -> dict[str, Any]:
        return {"log": ["linter"]}

    def merge(state: JoinState) -> dict[str, Any]:
        return {"log": [f"merge:{state['review'].verdict}"]}

    g = StateGraph(JoinState)
    g.add_node("reviewer", reviewer)
    g.add_node("linter", linter)
    g.add_node("merge", merge)
    g.add_edge(START, "reviewer")
    g.add_edge(START, "linter")
    g.add_edge(["reviewer", "linter"], "merge")
    g.add_edge("merge", END)
    return g


def test_waiting_edge_waits_for_the_gate() -> None:
    app = guard(_join_graph(LIE), {"reviewer": inspector()}).compile()
    out = app.invoke({"log": []})
    assert sorted(out["log"][:2]) == ["linter", "reviewer"]
    assert out["log"][-1] == "merge:REQUEST_CHANGES"  # merge saw the gated verdict


def test_waiting_edge_target_never_runs_after_a_halt() -> None:
    app = guard(_join_graph(LIE), {"reviewer": inspector(Halt())}).compile(
        checkpointer=InMemorySaver()
    )
    with pytest.raises(GateHalted):
        app.invoke({"log": []}, cfg())
    values = app.get_state(cfg()).values
    assert not any(entry.startswith("merge") for entry in values["log"])
    assert "review" not in values
    assert [r.decision for r in reports(app, cfg())] == ["halted"]


@dataclass
class Ctx:
    files: dict[str, str]


def test_evidence_from_runtime_context_one_graph_many_repositories() -> None:
    def replay(claims: Any, evidence: Evidence) -> list[Finding]:
        files = evidence.require("files")
        return [
            Finding.ok("replay")
            if all(c.partition(":")[2] in files.get(c.partition(":")[0], "") for c in claims.cites)
            else Finding.failed("replay", "content_mismatch", "not in this repository")
        ]

    gate = TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[FunctionVerifier(replay, name="replay")],
        policy=Halt(),
        evidence=EvidenceSources(extra={"files": FromContext("files")}),
        passthrough=["log"],
    )
    app = guard(reviewer_graph(lying_model(TRUTH, TRUTH)), {"reviewer": gate}).compile()
    ok = app.invoke({"log": []}, context=Ctx(files={"a.py": "return 1"}))
    assert ok["review"].verdict == "APPROVE"
    with pytest.raises(GateHalted):
        app.invoke({"log": []}, context=Ctx(files={"a.py": "return 2"}))


def test_state_without_trust_reports_channel() -> None:
    class Plain(TypedDict, total=False):
        review: Review
        log: Annotated[list[str], operator.add]

    def reviewer(state: Plain) -> dict[str, Any]:
        return {"review": Review(**LIE)}

    g = StateGraph(Plain)
    g.add_node("reviewer", reviewer)
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector()}).compile(checkpointer=InMemorySaver())
    out = app.invoke({"log": []}, cfg())
    assert set(out) == {"review", "log"}  # the user's output schema is unchanged
    assert out["review"].verdict == "REQUEST_CHANGES"
    assert [r.decision for r in reports(app, cfg())] == ["modified"]


class PState(BaseModel):
    review: Review | None = None
    log: Annotated[list[str], operator.add] = []


def test_pydantic_state_and_router() -> None:
    def reviewer(state: PState) -> dict[str, Any]:
        return {"review": Review(**LIE), "log": ["r"]}

    def route(state: PState) -> str:
        assert isinstance(state, PState)
        return "ok" if state.review and state.review.verdict == "APPROVE" else "no"

    g = StateGraph(PState)
    g.add_node("reviewer", reviewer)
    g.add_node("ok", lambda s: {"log": ["ok"]})
    g.add_node("no", lambda s: {"log": ["no"]})
    g.add_edge(START, "reviewer")
    g.add_conditional_edges("reviewer", route, ["ok", "no"])
    out = guard(g, {"reviewer": inspector()}).compile().invoke(PState())
    assert out["log"] == ["r", "no"]


def test_guarded_graph_checkpoints_under_strict_msgpack(tmp_path: Path) -> None:
    """Reports, staged writes and a review interrupt survive LANGGRAPH_STRICT_MSGPACK."""
    code = textwrap.dedent(
        """
        import logging, sys
        sys.path[:0] = ["tests/integration", "tests"]
        blocked = []
        class H(logging.Handler):
            def emit(self, record):
                if "Blocked" in record.getMessage():
                    blocked.append(record.getMessage())
        logging.getLogger("langgraph").addHandler(H())
        from langgraph.checkpoint.serde import _msgpack
        assert _msgpack.STRICT_MSGPACK_ENABLED
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.types import Command
        from _gate_support import LIE, cfg, inspector, reviewer_graph
        from trustgate.policies import Review
        from trustgate._report import Report, reports
        from trustgate.testing import lying_model
        from trustgate.graph import guard
        with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
            app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Review())})
            app = app.compile(checkpointer=saver)
            app.invoke({"log": []}, cfg())
            app.invoke(Command(resume={"type": "approve", "by": "alice"}), cfg())
            (r,) = reports(app, cfg())
            assert isinstance(r, Report) and r.approval.who == "alice", r
        print("OK", blocked)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "strict.db")],
        env={**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OK" in proc.stdout


def test_halt_never_retried_nor_caught_by_graph_defaults() -> None:
    from langgraph.types import RetryPolicy

    calls: list[int] = []

    def counting(claims: Any, evidence: Evidence) -> list[Finding]:
        calls.append(1)
        return [Finding.failed("replay", "content_mismatch", "invented")]

    gate = TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[FunctionVerifier(counting, name="replay")],
        policy=Halt(),
        passthrough=["log"],
    )
    handled: list[str] = []
    g = reviewer_graph(lying_model(LIE))
    g.set_node_defaults(
        retry_policy=RetryPolicy(max_attempts=5, initial_interval=0.01, retry_on=lambda e: True),
        error_handler=lambda state: handled.append("caught") or {},
    )
    app = guard(g, {"reviewer": gate}).compile()
    with pytest.raises(GateHalted):
        app.invoke({"log": []})
    assert calls == [1]  # one inspection, no retry of the gate or the halt
    assert handled == []  # a user's default error handler does not swallow a halt


def test_several_gates_on_one_node_and_guard_twice() -> None:
    from trustgate.policies import Override

    first = inspector()
    second = TrustGate(
        "verdict_words",
        reads=FromKey("review", model=Review),
        verifiers=[
            FunctionVerifier(
                lambda c, e: [
                    Finding.ok("words")
                    if c.verdict in ("APPROVE", "REQUEST_CHANGES")
                    else Finding.failed("words", "unknown_verdict", c.verdict)
                ],
                name="words",
            )
        ],
        policy=Override("review.verdict", "REQUEST_CHANGES"),
        passthrough=["log"],  # what no gate of the node reads, every gate declares
    )
    model = lying_model({**TRUTH, "verdict": "LGTM"}, repeat_last=True)
    once = guard(reviewer_graph(model), {"reviewer": [first, second]})
    out = once.compile().invoke({"log": []})
    assert out["review"].verdict == "REQUEST_CHANGES"
    assert [(r.gate, r.decision) for r in out["trust_reports"]] == [
        ("inspector", "pass"),
        ("verdict_words", "modified"),
    ]
    twice = guard(once, {"publish": TrustGate("publish_gate", passthrough=["log"])})
    assert trustgate.guarded_nodes(twice) == {
        "reviewer": ("inspector", "verdict_words"),
        "publish": ("publish_gate",),
    }
    out2 = twice.compile().invoke({"log": []})
    assert [r.gate for r in out2["trust_reports"]] == ["inspector", "verdict_words", "publish_gate"]


@pytest.mark.parametrize("kind", ["raises", "hangs"])
def test_broken_verifier_in_a_graph_halts_and_releases_nothing(kind: str) -> None:
    import time

    def broken(claims: Any, evidence: Evidence) -> list[Finding]:
        if kind == "raises":
            raise OSError("verifier crashed")
        time.sleep(2)
        return [Finding.ok("slow")]

    gate = TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[FunctionVerifier(broken, name="broken", timeout=0.2)],
        policy=Halt(),
        passthrough=["log"],
    )
    app = guard(reviewer_graph(lying_model(TRUTH)), {"reviewer": gate}).compile(
        checkpointer=InMemorySaver()
    )
    with pytest.raises(GateHalted) as info:
        app.invoke({"log": []}, cfg(kind))
    report = info.value.report
    assert report.error is not None and "broken" in report.error
    assert [f.code for f in report.failed] == [
        "verifier_error" if kind == "raises" else "verifier_timeout"
    ]
    values = app.get_state(cfg(kind)).values
    assert "review" not in values and values["log"] == []
    assert [r.decision for r in reports(app, cfg(kind))] == ["halted"]
