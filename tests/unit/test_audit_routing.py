"""audit(): a model called inside a routing function is a crossing of its own.

A conditional edge's path function runs in the node's task after the node's gates have
released its output, so a grader model there (the agentic-RAG tutorial's
``grade_documents``) decides the route with no gate in the way, whatever gates the node
carries. The audit finds such a model (statically and in the sample run), reports the
routing function ``unguarded`` and says how to close it.
"""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from shapes import agentic_rag
from typing_extensions import TypedDict

from trustgate import Finding, TrustGate
from trustgate._audit._crossings import ROUTING_FIX
from trustgate.cli import main
from trustgate.graph import AuditedCrossing, audit, guard
from trustgate.readers import FunctionReader
from trustgate.testing import ScriptedChatModel, honest_model
from trustgate.verifiers.base import FunctionVerifier

MODEL_NODES = ("generate_query_or_respond", "generate_answer")


def _ok(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("ok")]


def _gate(node: str) -> TrustGate:
    """A gate that reads the node's whole update and verifies it (passes)."""
    return TrustGate(
        f"gate_{node}",
        reads=FunctionReader(lambda update: dict(update) or None),
        verifiers=[FunctionVerifier(_ok, name="ok")],
        passthrough=["goto", "send", "custom"],
    )


def _fully_gated(shape: Any) -> Any:
    """Every node of the shape that runs a model or a tool, gated."""
    return guard(shape.builder, {n: _gate(n) for n in (*MODEL_NODES, "retrieve")})


def routing(result: list[AuditedCrossing]) -> list[AuditedCrossing]:
    return [c for c in result if c.routing is not None]


def test_the_grader_in_grade_documents_is_an_unguarded_crossing() -> None:
    shape = agentic_rag.build()
    result = audit(shape.builder)
    assert "retrieve" in {x.node for x in result}  # the node the grader's edge leaves
    (c,) = routing(result)
    assert (c.node, c.routing, c.found_by, c.status) == (
        "retrieve",
        "grade_documents",
        "static",
        "unguarded",
    )
    assert {(p.target, p.kind, p.status) for p in c.paths} == {
        ("generate_answer", "conditional", "unguarded"),
        ("rewrite_question", "conditional", "unguarded"),
    }
    assert c.found == "routing function 'grade_documents' of 'retrieve' calls ScriptedChatModel"
    assert any("closure 'grader'" in d for d in c.detail)
    assert {p.fix for p in c.paths} == {ROUTING_FIX}
    assert "Command(goto=...)" in ROUTING_FIX and "Routes()" in ROUTING_FIX
    # the retrieve node itself calls no model: it is not a crossing
    assert "retrieve" not in {x.node for x in result if x.routing is None}


def test_gating_every_node_leaves_the_grader_open_and_a_lying_grader_still_routes() -> None:
    honest = agentic_rag.build("honest")
    result = audit(_fully_gated(honest), honest.inputs)
    assert result.status == "unguarded"  # not a false all-clear
    assert result.sample_run is not None and result.sample_run.outcome == "finished"
    assert {c.node for c in result if c.routing is None} == set(MODEL_NODES)
    assert all(c.guarded for c in result if c.routing is None)
    (c,) = routing(result)
    assert c.found_by == "static+sample_run" and c.status == "unguarded"
    assert result.status == "unguarded"
    assert result.sample_run.model_routing == ("retrieve:grade_documents",)
    assert "retrieve" not in result.sample_run.model_nodes
    reasons = {p.reason for p in c.paths}
    assert reasons == {
        "it runs after the gates of its node have released the node's output, so the gate "
        "on 'retrieve' ('gate_retrieve') does not hold what it decides"
    }
    # and it is no idle warning: with every node gated, the lying grader still picks the
    # route (the shipping page is graded relevant, the question is never rewritten)
    lying = agentic_rag.build("lying")
    app = _fully_gated(lying).compile(checkpointer=lying.checkpointer())
    state = lying.run(app)
    assert [r.args["query"] for r in lying.recorder.tool_runs] == ["returns"]
    assert "rewrite_question" not in {n.node for n in lying.recorder.node_inputs}
    assert "90 days" in agentic_rag.answer(state)


def _runtime_grader(state: Any, config: RunnableConfig) -> Literal["a", "b"]:
    """A routing function whose model comes with the run's configuration: only a sample
    run sees it."""
    model = config["configurable"]["grader"]
    return "a" if model.invoke("grade").text == "a" else "b"


class S(TypedDict, total=False):
    text: str


def _pick(state: S) -> dict[str, Any]:
    return {"text": "picked"}


def test_a_model_built_in_a_routing_function_is_found_by_the_sample_run() -> None:
    g = StateGraph(S)
    g.add_node("pick", _pick)
    g.add_node("a", lambda s: {})
    g.add_node("b", lambda s: {})
    g.add_edge(START, "pick")
    g.add_conditional_edges("pick", _runtime_grader)
    g.add_edge("a", END)
    g.add_edge("b", END)
    gated = guard(g, {"pick": _gate("pick")})
    assert audit(gated) == []  # statically: nothing
    grader = ScriptedChatModel(responses=["a"], repeat_last=True)
    result = audit(gated, {"text": ""}, config={"configurable": {"grader": grader}})
    assert grader.calls == []  # the sample run asked a stub
    (c,) = result  # the sample run's model run belongs to the routing function, not 'pick'
    assert (c.node, c.routing, c.found_by, c.status) == (
        "pick",
        "_runtime_grader",
        "sample_run",
        "unguarded",
    )
    assert {p.target for p in c.paths} == {"a", "b"}
    assert result.status == "unguarded"


GRADER = honest_model("left", repeat_last=True)


def _start_router(state: S) -> Literal["left", "right"]:
    return "left" if GRADER.invoke(state.get("text") or "").text == "left" else "right"


def test_a_routing_function_at_start_is_named_so() -> None:
    g = StateGraph(S)
    g.add_node("left", lambda s: {})
    g.add_node("right", lambda s: {})
    g.add_conditional_edges(START, _start_router)
    g.add_edge("left", END)
    g.add_edge("right", END)
    (c,) = audit(g)
    assert c.node == START and c.routing == "_start_router" and c.status == "unguarded"
    assert c.found == "routing function '_start_router' at START calls ScriptedChatModel"


def test_a_routing_function_inside_a_subgraph_opens_the_subgraph_node() -> None:
    inner = agentic_rag.build().builder.compile()
    g = StateGraph(agentic_rag.MessagesState)
    g.add_node("rag", inner)
    g.add_edge(START, "rag")
    g.add_edge("rag", END)
    (c,) = audit(g)
    assert c.node == "rag" and c.status == "unguarded"
    assert any("routing function 'grade_documents'" in d for d in c.detail)


GRAPHS = """
from shapes import agentic_rag
from trustgate._findings import Finding
from trustgate._gate import TrustGate
from trustgate.graph import guard
from trustgate.readers import FunctionReader
from trustgate.verifiers.base import FunctionVerifier


def _gate(node):
    return TrustGate(
        f"gate_{node}",
        reads=FunctionReader(lambda update: dict(update) or None),
        verifiers=[FunctionVerifier(lambda c, e: [Finding.ok("ok")], name="ok")],
        passthrough=["goto", "send", "custom"],
    )


def gated():
    shape = agentic_rag.build()
    nodes = ("generate_query_or_respond", "generate_answer", "retrieve")
    return guard(shape.builder, {n: _gate(n) for n in nodes})
"""


@pytest.fixture
def mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"routing_graphs_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(GRAPHS))
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


def test_cli_exits_1_on_every_node_gated_and_names_the_routing_function(
    mod: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", f"{mod}:gated"]) == 1
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("retrieve (routing ")]
    assert len(rows) == 2 and all("UNGUARDED" in r for r in rows)
    assert all(
        "routing function 'grade_documents' of 'retrieve' calls ScriptedChatModel" in r
        and ROUTING_FIX in r
        for r in rows
    )
    assert "verdict: UNGUARDED" in out
