"""audit(): model crossings found statically and by a sample run, never by node names."""

from __future__ import annotations

import functools
from typing import Any, Literal

import pytest
from _gate_support import LIE, TRUTH, inspector, reviewer_graph
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.errors import ConfigurationError, LangGraphCompatibilityError
from trustgate.graph import AuditedCrossing, AuditResult, TrustGateMiddleware, audit, guard
from trustgate.pipelines import PIPELINES, load
from trustgate.policies import Halt, Override
from trustgate.readers import FromKey, LastAIText, ToolCallArgs
from trustgate.testing import ScriptedChatModel, honest_model
from trustgate.verifiers.base import Evidence, FunctionVerifier


class S(TypedDict, total=False):
    text: str
    other: str
    n: int


def _ok(claims: Any, evidence: Evidence) -> list[Finding]:
    return [Finding.ok("ok")]


def gate(name: str, key: str = "text") -> TrustGate:
    return TrustGate(
        name,
        reads=FromKey(key),
        verifiers=[FunctionVerifier(_ok, name="ok")],
        policy=Override(key, "withheld"),
    )


# a module-level model, reached only through the node function's globals
GLOBAL_MODEL = honest_model("from the global model", repeat_last=True)


def step1(state: S) -> dict[str, Any]:
    return {"text": GLOBAL_MODEL.invoke("go").text}


def llm(state: S) -> dict[str, Any]:
    """Named like a model, calls none."""
    return {"other": (state.get("text") or "").upper()}


def _make_model() -> ScriptedChatModel:
    return ScriptedChatModel(responses=["made at call time"], repeat_last=True)


def hidden(state: S) -> dict[str, Any]:
    """A model built inside the call: only a sample run sees it."""
    return {"text": _make_model().invoke("go").text}


def by_node(result: list[AuditedCrossing]) -> dict[str, AuditedCrossing]:
    return {c.node: c for c in result}


def paths(c: AuditedCrossing) -> set[tuple[str | None, str, bool, str | None]]:
    return {(p.target, p.kind, p.guarded, p.gate) for p in c.paths}


def linear() -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_node("llm", llm)
    g.add_edge(START, "step1")
    g.add_edge("step1", "llm")
    g.add_edge("llm", END)
    return g


# --- detection --------------------------------------------------------------------------


def test_unguarded_model_node_flagged_by_its_global_not_its_name() -> None:
    result = audit(linear())
    assert isinstance(result, AuditResult) and result.sample_run is None
    assert [c.node for c in result] == ["step1"]  # "llm" calls no model: not flagged
    (c,) = result
    assert c.found_by == "static" and not c.guarded
    assert paths(c) == {("llm", "plain", False, None)}
    assert "GLOBAL_MODEL" in c.detail[0] and "ScriptedChatModel" in c.detail[0]
    assert result.unguarded == [c]


def test_guarded_graph_clean_builder_and_compiled_alike() -> None:
    guarded = guard(linear(), {"step1": gate("check")})
    for graph in (guarded, guarded.compile(), guard(linear().compile(), {"step1": gate("check")})):
        (c,) = audit(graph)
        assert c.node == "step1" and c.guarded
        assert paths(c) == {("llm", "plain", True, "check")}
        assert c.paths[0].via == "step1" and c.status == "guarded" and c.gates == ("check",)


def test_sample_run_finds_step1_and_a_model_built_at_call_time() -> None:
    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_node("hidden", hidden)
    g.add_node("llm", llm)
    g.add_edge(START, "step1")
    g.add_edge("step1", "hidden")
    g.add_edge("hidden", "llm")
    g.add_edge("llm", END)
    static = by_node(audit(g))
    # a model class constructed inside the node's call is a run-time model: found
    assert set(static) == {"step1", "hidden"}
    assert "constructed at run time" in static["hidden"].detail[0]
    result = audit(g, {"text": "x"})
    found = by_node(result)
    assert set(found) == {"step1", "hidden"}
    assert found["step1"].found_by == "static+sample_run"
    assert found["hidden"].found_by == "static+sample_run"
    assert paths(found["hidden"]) == {("llm", "plain", False, None)}
    assert result.sample_run is not None and result.sample_run.outcome == "finished"
    assert set(result.sample_run.model_nodes) == {"step1", "hidden"}
    assert result.sample_run.unattributed == 0


def test_sample_run_of_the_guarded_graph_does_not_flag_the_gate_or_touch_the_original() -> None:
    saver = InMemorySaver()
    app = guard(reviewer_graph(honest_model(TRUTH)), {"reviewer": inspector()}).compile(
        checkpointer=saver
    )
    result = audit(app, {"log": []})
    assert [(c.node, c.found_by, c.guarded) for c in result] == [
        ("reviewer", "static+sample_run", True)
    ]
    assert list(saver.list(None)) == []  # the sample run used its own checkpointer


def test_partially_guarded_flags_exactly_the_open_one() -> None:
    def first(state: S) -> dict[str, Any]:
        return {"text": model_a.invoke("a").text}

    def second(state: S) -> dict[str, Any]:
        return {"other": model_b.invoke("b").text}

    model_a, model_b = honest_model("a"), honest_model("b")
    g = StateGraph(S)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", END)
    result = audit(guard(g, {"first": gate("g1")}))
    assert [(c.node, c.guarded) for c in result] == [("first", True), ("second", False)]
    assert [c.node for c in result.unguarded] == ["second"]
    assert paths(by_node(result)["second"]) == {(END, "plain", False, None)}


def test_bindings_sequences_partials_and_callable_objects() -> None:
    model = honest_model("x")
    bound = model.bind(stop=["\n"])

    def with_default(state: S, chain: Any = bound) -> dict[str, Any]:
        return {"text": chain.invoke("x").text}

    def with_arg(state: S, chain: Any) -> dict[str, Any]:
        return {"text": chain.invoke("x").text}

    class Node:
        def __init__(self, chain: Any) -> None:
            self.chain = chain

        def __call__(self, state: S) -> dict[str, Any]:
            return {"text": self.chain.invoke("x").text}

    from langchain_core.output_parsers import StrOutputParser

    g = StateGraph(S)
    g.add_node("a", with_default)
    g.add_node("b", functools.partial(with_arg, chain=model | StrOutputParser()))
    g.add_node("c", Node(model.with_retry()))
    g.add_node("d", llm)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", "d")
    g.add_edge("d", END)
    assert [c.node for c in audit(g)] == ["a", "b", "c"]


def test_large_object_graphs_walked_within_a_bound() -> None:
    import time

    def tree(depth: int) -> Any:
        return [{"k": tree(depth - 1)} for _ in range(60)] if depth else object()

    big = tree(3)

    def busy(state: S) -> dict[str, Any]:
        return {"other": str(len(big))}

    g = StateGraph(S)
    g.add_node("busy", busy)
    g.add_edge(START, "busy")
    g.add_edge("busy", END)
    started = time.perf_counter()
    assert audit(g) == []
    assert time.perf_counter() - started < 5


def test_objects_that_refuse_inspection_are_skipped() -> None:
    class Proxy:
        def __getattribute__(self, name: str) -> Any:
            raise RuntimeError("outside of a request context")

    proxy = Proxy()

    def handler(state: S) -> dict[str, Any]:
        return {"other": str(proxy), "text": GLOBAL_MODEL.invoke("x").text}

    g = StateGraph(S)
    g.add_node("handler", handler)
    g.add_edge(START, "handler")
    g.add_edge("handler", END)
    assert [c.node for c in audit(g)] == ["handler"]


def test_a_builder_that_does_not_compile_still_gets_the_static_audit() -> None:
    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_edge("step1", END)  # no entry point: compile() refuses it
    result = audit(g, {"text": "x"})
    assert [c.node for c in result] == ["step1"]
    assert result.sample_run is not None and result.sample_run.outcome == "error"


SELF_APP: Any = None


def peek(state: S) -> dict[str, Any]:
    """Refers to the graph it belongs to; that graph is not its subgraph."""
    return {"other": str(SELF_APP is not None and SELF_APP.get_graph())}


def test_a_node_referring_to_its_own_graph_is_not_a_crossing() -> None:
    global SELF_APP
    g = linear()
    g.add_node("peek", peek)
    g.add_edge("llm", "peek")
    SELF_APP = g.compile()
    try:
        assert [c.node for c in audit(SELF_APP)] == ["step1"]
    finally:
        SELF_APP = None


def test_model_runs_are_attributed_to_the_top_level_node() -> None:
    from trustgate._audit._sample_run import _node_of

    assert _node_of({"langgraph_node": "a"}) == "a"
    assert _node_of({"langgraph_checkpoint_ns": "sub:1|inner:2"}) == "sub"
    assert _node_of({}) is None


# --- paths -------------------------------------------------------------------------------


def test_conditional_edges_and_a_loop() -> None:
    def think(state: S) -> dict[str, Any]:
        return {"text": GLOBAL_MODEL.invoke("x").text, "n": (state.get("n") or 0) + 1}

    def route(state: S) -> Literal["think", "act", "__end__"]:
        return "think" if (state.get("n") or 0) < 2 else END

    def act(state: S) -> dict[str, Any]:
        return {}

    def opaque(state: S) -> str:
        return "act"

    g = StateGraph(S)
    g.add_node("think", think)
    g.add_node("act", act)
    g.add_edge(START, "think")
    g.add_conditional_edges("think", route)
    g.add_edge("act", END)
    (c,) = audit(g)
    want = {("think", "conditional"), ("act", "conditional"), (END, "conditional")}
    assert {(t, k) for t, k, _g, _n in paths(c)} == want and not c.guarded
    (c,) = audit(guard(g, {"think": gate("g")}))
    assert paths(c) == {(t, k, True, "g") for t, k in want} and c.guarded

    unknown = StateGraph(S)
    unknown.add_node("think", think)
    unknown.add_node("act", act)
    unknown.add_edge(START, "think")
    unknown.add_conditional_edges("think", opaque)  # no path map, no annotation
    unknown.add_edge("act", END)
    (c,) = audit(unknown)
    assert paths(c) == {(None, "conditional", False, None)}


def test_command_goto_with_ends_and_waiting_edges() -> None:
    def pick(state: S) -> Command[Literal["left", "right"]]:
        text = GLOBAL_MODEL.invoke("x").text
        return Command(update={"text": text}, goto="left")

    def side(state: S) -> dict[str, Any]:
        return {}

    g = StateGraph(S)
    g.add_node("pick", pick)
    g.add_node("left", side)
    g.add_node("right", side)
    g.add_node("join", side)
    g.add_edge(START, "pick")
    g.add_edge(["pick", "left"], "join")
    g.add_edge("join", END)
    (c,) = audit(g)
    assert paths(c) == {
        ("left", "command", False, None),
        ("right", "command", False, None),
        ("join", "waiting", False, None),
    }
    (c,) = audit(guard(g, {"pick": gate("g")}).compile())
    assert paths(c) == {
        ("left", "command", True, "g"),
        ("right", "command", True, "g"),
        ("join", "waiting", True, "g"),
    }


def test_rerender_back_to_the_producer_is_not_a_release_path() -> None:
    from trustgate.pipelines import compliance

    app = compliance.build()
    c = by_node(audit(app))["executor"]
    assert c.guarded and paths(c) == {("release", "plain", True, "blind_verifier")}
    # the gate's own blind-verifier model runs inside the gate, out of the node's
    # callbacks: not a crossing of its own
    result = audit(app, {})
    assert result.sample_run is not None
    assert set(result.sample_run.model_nodes) == {"planner", "executor"}
    assert {c.node for c in result} == {"planner", "executor"}


def test_subgraph_node_containing_a_model() -> None:
    def inner_builder() -> StateGraph[Any, Any, Any, Any]:
        inner = StateGraph(S)
        inner.add_node("write", step1)
        inner.add_edge(START, "write")
        inner.add_edge("write", END)
        return inner

    def outer(sub: Any) -> StateGraph[Any, Any, Any, Any]:
        g = StateGraph(S)
        g.add_node("sub", sub)
        g.add_node("llm", llm)
        g.add_edge(START, "sub")
        g.add_edge("sub", "llm")
        g.add_edge("llm", END)
        return g

    open_ = outer(inner_builder().compile())
    (c,) = audit(open_)
    assert c.node == "sub" and not c.guarded
    assert "subgraph node 'write'" in c.detail[0]
    result = audit(open_, {"text": "x"})  # the inner model run is credited to "sub"
    assert [(x.node, x.found_by) for x in result] == [("sub", "static+sample_run")]

    gated = outer(guard(inner_builder(), {"write": gate("inner_gate")}).compile())
    (c,) = audit(gated)
    assert c.guarded and paths(c) == {("llm", "plain", True, "inner_gate")}
    # or gated where it is used
    (c,) = audit(guard(open_, {"sub": gate("outer_gate")}))
    assert c.guarded and paths(c) == {("llm", "plain", True, "outer_gate")}


def test_interrupted_and_failing_sample_runs_report_what_was_seen() -> None:
    def ask(state: S) -> dict[str, Any]:
        return {"other": str(interrupt("?"))}

    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_node("ask", ask)
    g.add_edge(START, "step1")
    g.add_edge("step1", "ask")
    g.add_edge("ask", END)
    result = audit(g, {"text": "x"})
    assert [c.node for c in result] == ["step1"]
    assert result.sample_run is not None and result.sample_run.outcome == "interrupted"

    def boom(state: S) -> dict[str, Any]:
        raise RuntimeError("no network")

    g2 = StateGraph(S)
    g2.add_node("step1", step1)
    g2.add_node("boom", boom)
    g2.add_edge(START, "step1")
    g2.add_edge("step1", "boom")
    g2.add_edge("boom", END)
    result = audit(g2, {"text": "x"})
    assert result.sample_run is not None and result.sample_run.outcome == "error"
    assert "no network" in result.sample_run.detail
    assert result.sample_run.model_nodes == ("step1",)


def test_halted_sample_run() -> None:
    from _gate_support import reviewer_graph as rg

    app = guard(rg(honest_model(LIE)), {"reviewer": inspector(Halt())}).compile()
    result = audit(app, {"log": []})
    assert result.sample_run is not None and result.sample_run.outcome == "halted"
    assert [(c.node, c.guarded) for c in result] == [("reviewer", True)]


async def astep(state: S) -> dict[str, Any]:
    return {"text": (await GLOBAL_MODEL.ainvoke("go")).text}


def async_graph() -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(S)
    g.add_node("astep", astep)
    g.add_node("llm", llm)
    g.add_edge(START, "astep")
    g.add_edge("astep", "llm")
    g.add_edge("llm", END)
    return g


def test_async_only_nodes_audited_from_sync_code() -> None:
    result = audit(async_graph(), {"text": "x"})
    assert [(c.node, c.found_by) for c in result] == [("astep", "static+sample_run")]
    assert result.sample_run is not None and result.sample_run.outcome == "finished"


async def test_aaudit_inside_an_event_loop() -> None:
    result = await trustgate.aaudit(guard(async_graph(), {"astep": gate("g")}), {"text": "x"})
    assert [(c.node, c.found_by, c.guarded) for c in result] == [
        ("astep", "static+sample_run", True)
    ]
    assert (await trustgate.aaudit(async_graph())).sample_run is None


def test_callbacks_of_the_caller_still_called() -> None:
    from langchain_core.callbacks import BaseCallbackHandler

    class Count(BaseCallbackHandler):
        def __init__(self) -> None:
            self.nodes: list[str] = []

        def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
            node = (kw.get("metadata") or {}).get("langgraph_node")
            if node is not None and kw.get("name") == node:
                self.nodes.append(node)

    mine = Count()
    audit(linear(), {"text": "x"}, config={"callbacks": [mine], "tags": ["audit"]})
    assert mine.nodes == ["step1", "llm"]


# --- create_agent ----------------------------------------------------------------------------


@tool
def lookup(path: str) -> str:
    """Read a file."""
    return "contents"


def _answer_gate() -> TrustGate:
    return TrustGate(
        "answer", reads=LastAIText(), verifiers=[FunctionVerifier(_ok, name="ok")], policy=Halt()
    )


def test_create_agent_without_and_with_the_middleware() -> None:
    bare = create_agent(honest_model("done", repeat_last=True), [lookup])
    (c,) = audit(bare)
    assert c.node == "model" and not c.guarded
    assert paths(c) == {("tools", "conditional", False, None), (END, "conditional", False, None)}
    result = audit(bare, {"messages": [HumanMessage("hi")]})
    assert [(x.node, x.found_by) for x in result] == [("model", "static+sample_run")]

    mw = TrustGateMiddleware(model_gates=[_answer_gate()])
    agent = create_agent(honest_model("done", repeat_last=True), [lookup], middleware=[mw])
    result = audit(agent, {"messages": [HumanMessage("hi")]})
    (c,) = result  # the middleware and its gate's model are not crossings
    assert c.node == "model" and c.guarded
    # the model gates run around the model call, inside the model node
    assert {p.via for p in c.paths} == {"model"}
    assert {(p.target, p.gate) for p in c.paths} >= {("tools", "answer"), (END, "answer")}


def test_create_agent_guarded_with_guard() -> None:
    agent = create_agent(honest_model("done", repeat_last=True), [lookup])
    guarded = guard(agent, {"model": _answer_gate()})
    result = audit(guarded, {"messages": [HumanMessage("hi")]})
    ((c),) = result
    assert c.node == "model" and c.found_by == "static+sample_run" and c.guarded
    assert paths(c) == {
        ("tools", "conditional", True, "answer"),
        (END, "conditional", True, "answer"),
    }
    assert not audit(agent)[0].guarded  # the original is untouched


def test_create_agent_tool_gates_guard_only_the_path_to_the_tools() -> None:
    tool_gate = TrustGate(
        "tool_gate", reads=ToolCallArgs(), verifiers=[FunctionVerifier(_ok, name="ok")]
    )
    agent = create_agent(
        honest_model("done"), [lookup], middleware=[TrustGateMiddleware(tool_gates=[tool_gate])]
    )
    (c,) = audit(agent)
    by_target = {p.target: p for p in c.paths}
    assert by_target["tools"].guarded and by_target["tools"].gate == "tool_gate"
    assert not by_target[END].guarded  # the final answer itself is not checked
    assert not c.guarded


def test_agent_as_a_subgraph_node() -> None:
    agent = create_agent(honest_model("done", repeat_last=True), [])
    g = StateGraph(S)
    g.add_node("helper", agent)
    g.add_edge(START, "helper")
    g.add_edge("helper", END)
    (c,) = audit(g)
    assert c.node == "helper" and not c.guarded


# --- the reference pipelines ---------------------------------------------------------------

# Model crossings the reference pipelines leave without a gate (reported to the lead):
# the code-review builder's manifest goes straight to the inspector model, and the
# compliance planner's brief and plan go straight to the executor.
KNOWN_OPEN = {"code_review": {"builder"}, "compliance": {"planner"}}


@pytest.mark.parametrize("name", PIPELINES)
def test_reference_pipelines(name: str) -> None:
    app = load(name).build()
    result = audit(app)
    assert result, name
    assert {c.node for c in result.unguarded} == KNOWN_OPEN.get(name, set())
    for c in result:
        assert all(p.target is not None for p in c.paths)
        if c.node not in KNOWN_OPEN.get(name, set()):
            assert c.guarded and all(p.gate for p in c.paths)


def test_reference_pipeline_sample_run_agrees() -> None:
    from trustgate.pipelines import postmortem

    result = audit(postmortem.build(personality="honest"), {})
    assert [(c.node, c.found_by, c.guarded) for c in result] == [
        ("drafter", "static+sample_run", True)
    ]


# --- input checks ----------------------------------------------------------------------------


def test_not_a_graph_and_internal_shapes_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError):
        audit(object())
    g = linear()
    monkeypatch.setattr(g, "edges", list(g.edges))
    with pytest.raises(LangGraphCompatibilityError):
        audit(g)


def test_exported_at_top_level() -> None:
    assert trustgate.audit is audit
    assert set(trustgate.__all__) >= {"audit", "aaudit"}
    assert trustgate.graph.AuditedCrossing is AuditedCrossing
    assert not hasattr(trustgate, "AuditedCrossing")  # a family's name, not the root's
