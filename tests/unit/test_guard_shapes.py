"""guard() on graph shapes beyond the seed ones: every lie held, every honest run unchanged."""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from _gate_support import LIE, REPLAY, TRUTH, Review, State, cfg, inspector, reviewer_graph
from langchain_core.messages import AnyMessage
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import CachePolicy, Command, RetryPolicy, Send, interrupt
from pydantic import BaseModel
from typing_extensions import TypedDict

from trustgate import TrustGate, reports
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.graph import TrustReports, guard
from trustgate.policies import Halt
from trustgate.readers import FromKey
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.base import EvidenceSources, FromContext

LIAR = "return 42"


def _user(values: Any) -> str:
    """What user channels hold, without the reports (whose job is to quote claims)."""
    if isinstance(values, dict):
        return repr({k: _user(v) for k, v in values.items() if k != "trust_reports"})
    if isinstance(values, (list, tuple)):
        return repr([_user(v) for v in values])
    return repr(values)


def _no_private(values: Any) -> None:
    assert "__trustgate" not in repr(values)


def _producer(model: Any, key: str = "review") -> Any:
    def node(state: Any) -> dict[str, Any]:
        return {key: model.with_structured_output(Review).invoke("review"), "log": [key]}

    return node


# --- START / END -------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "verdict"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
def test_guarded_node_from_start_straight_to_end(data: dict[str, Any], verdict: str) -> None:
    g = StateGraph(State)
    g.add_node("reviewer", _producer(lying_model(data)))
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", END)
    app = guard(g, {"reviewer": inspector()}).compile(checkpointer=InMemorySaver())
    out = app.invoke({"log": []}, cfg())
    assert out["review"].verdict == verdict
    assert out["log"] == ["review"]
    assert [r.released for r in reports(app, cfg())] == [True]
    _no_private(app.get_state(cfg()).values)


def test_last_node_before_end_halts_with_nothing_in_state() -> None:
    g = StateGraph(State)
    g.add_node("prep", lambda s: {"log": ["prep"]})
    g.add_node("reviewer", _producer(lying_model(LIE)))
    g.add_edge(START, "prep")
    g.add_edge("prep", "reviewer")
    g.add_edge("reviewer", END)
    app = guard(g, {"reviewer": inspector(Halt())}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted):
        app.invoke({"log": []}, cfg())
    values = app.get_state(cfg()).values
    assert values["log"] == ["prep"] and "review" not in values
    _no_private(values)


# --- parallel branches joined by a waiting edge --------------------------------------------


class Pair(TypedDict, total=False):
    a: Review
    b: Review
    log: Annotated[list[str], operator.add]
    trust_reports: TrustReports


def _gate(name: str, key: str, policy: Any = None) -> TrustGate:
    return TrustGate(
        name,
        reads=FromKey(key, model=Review),
        verifiers=[REPLAY],
        policy=policy or Halt(),
        passthrough=["log"],
    )


def _pair_graph(a: dict[str, Any], b: dict[str, Any]) -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(Pair)
    g.add_node("a", _producer(lying_model(a), "a"))
    g.add_node("b", _producer(lying_model(b), "b"))
    g.add_node("join", lambda s: {"log": [f"join:{s['a'].verdict}/{s['b'].verdict}"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "join")
    g.add_edge("join", END)
    return g


def test_parallel_guarded_nodes_join_honest() -> None:
    app = guard(_pair_graph(TRUTH, TRUTH), {"a": _gate("ga", "a"), "b": _gate("gb", "b")})
    out = app.compile().invoke({"log": []})
    assert out["log"][-1] == "join:APPROVE/APPROVE"
    assert sorted(r.gate for r in out["trust_reports"]) == ["ga", "gb"]


def test_parallel_guarded_nodes_one_lying_join_never_runs() -> None:
    app = guard(_pair_graph(TRUTH, LIE), {"a": _gate("ga", "a"), "b": _gate("gb", "b")}).compile(
        checkpointer=InMemorySaver()
    )
    seen: list[Any] = []
    with pytest.raises(GateHalted) as info:
        for part in app.stream({"log": []}, cfg(), stream_mode=["updates", "values"]):
            seen.append(part)
    assert info.value.report.gate == "gb"
    assert LIAR not in _user([p[1] for p in seen])
    values = app.get_state(cfg()).values
    assert "b" not in values
    assert not any(e.startswith("join") for e in values["log"])
    _no_private(values)


def test_parallel_guarded_nodes_one_lying_overridden_join_sees_gated() -> None:
    from trustgate.policies import Override

    app = guard(
        _pair_graph(TRUTH, LIE),
        {"a": _gate("ga", "a"), "b": _gate("gb", "b", Override("b.verdict", "REQUEST_CHANGES"))},
    ).compile()
    out = app.invoke({"log": []})
    assert out["log"][-1] == "join:APPROVE/REQUEST_CHANGES"


class PairIssues(TypedDict, total=False):
    a: Review
    log: Annotated[list[str], operator.add]
    trust_issues: list[str]
    trust_reports: TrustReports


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        ((TRUTH,), ["pass"]),
        ((LIE, TRUTH), ["rerendered", "pass"]),
        ((LIE, LIE), ["rerendered", "halted"]),
    ],
)
def test_rerender_in_a_joined_branch_join_waits_for_the_release(
    replies: tuple[dict[str, Any], ...], expected: list[str]
) -> None:
    from trustgate.policies import Rerender

    model = lying_model(*replies)
    g = StateGraph(PairIssues)
    g.add_node("a", _producer(model, "a"))
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("join", lambda s: {"log": [f"join:{s['a'].cites if 'a' in s else None}"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "join")
    gate = _gate("ga", "a", Rerender(to="a", then=Halt()))
    app = guard(g, {"a": gate}).compile(checkpointer=InMemorySaver())
    if expected[-1] == "halted":
        with pytest.raises(GateHalted):
            app.invoke({"log": []}, cfg())
        values = app.get_state(cfg()).values
        assert not any(e.startswith("join") for e in values["log"]) and "a" not in values
    else:
        out = app.invoke({"log": []}, cfg())
        assert [e for e in out["log"] if e.startswith("join")] == ["join:['a.py:return 1']"]
    assert [r.decision for r in reports(app, cfg())] == expected
    assert app.get_graph().draw_mermaid() == g.compile().get_graph().draw_mermaid()


# --- self-loop through a conditional edge ---------------------------------------------------


def test_self_loop_router_reads_gated_field() -> None:
    model = lying_model(LIE, LIE, TRUTH)
    routed: list[str] = []

    def route(state: State) -> Literal["reviewer", "__end__"]:
        routed.append(state["review"].verdict)
        return END if state["review"].verdict == "APPROVE" else "reviewer"

    g = StateGraph(State)
    g.add_node("reviewer", _producer(model))
    g.add_edge(START, "reviewer")
    g.add_conditional_edges("reviewer", route)
    out = guard(g, {"reviewer": inspector()}).compile().invoke({"log": []})
    assert routed == ["REQUEST_CHANGES", "REQUEST_CHANGES", "APPROVE"]
    assert [r.decision for r in out["trust_reports"]] == ["modified", "modified", "pass"]


# --- conditional edges: path map, Literal, list and Send ----------------------------------


@pytest.mark.parametrize("style", ["map", "literal", "list"])
@pytest.mark.parametrize(("data", "dest"), [(LIE, "reject"), (TRUTH, "accept")])
def test_conditional_edge_styles(style: str, data: dict[str, Any], dest: str) -> None:
    def by_map(state: State) -> str:
        return "yes" if state["review"].verdict == "APPROVE" else "no"

    def by_literal(state: State) -> Literal["accept", "reject"]:
        return "accept" if state["review"].verdict == "APPROVE" else "reject"

    def by_list(state: State) -> list[str]:
        return ["accept" if state["review"].verdict == "APPROVE" else "reject"]

    g = StateGraph(State)
    g.add_node("reviewer", _producer(lying_model(data)))
    g.add_node("accept", lambda s: {"log": ["accept"]})
    g.add_node("reject", lambda s: {"log": ["reject"]})
    g.add_edge(START, "reviewer")
    if style == "map":
        g.add_conditional_edges("reviewer", by_map, {"yes": "accept", "no": "reject"})
    elif style == "literal":
        g.add_conditional_edges("reviewer", by_literal)
    else:
        g.add_conditional_edges("reviewer", by_list, ["accept", "reject"])
    app = guard(g, {"reviewer": inspector()}).compile()
    out = app.invoke({"log": []})
    assert out["log"] == ["review", dest]
    assert app.get_graph().draw_mermaid() == g.compile().get_graph().draw_mermaid()


class Fan(TypedDict, total=False):
    reviews: Annotated[list[Review], operator.add]
    log: Annotated[list[str], operator.add]
    trust_reports: TrustReports


def _fan_gate() -> TrustGate:
    return TrustGate(
        "inspector",
        reads=lambda u: (u.get("reviews") or [None])[0],
        verifiers=[REPLAY],
        policy=Halt(),
    )


@pytest.mark.parametrize("kind", ["list", "send"])
def test_router_fans_out_to_guarded_node(kind: str) -> None:
    def reviewer(arg: Any) -> dict[str, Any]:
        i = arg.get("i", 0) if isinstance(arg, dict) else 0
        return {"reviews": [Review(**TRUTH, summary=f"r{i}")]}  # type: ignore[misc]

    def fan(state: Fan) -> Any:
        if kind == "list":
            return ["reviewer", "other"]
        return [Send("reviewer", {"i": i}) for i in range(3)]

    g = StateGraph(Fan)
    g.add_node("reviewer", lambda a: {"reviews": [Review(**TRUTH)]})
    g.add_node("other", lambda s: {"log": ["other"]})
    g.add_conditional_edges(START, fan, ["reviewer", "other"])
    out = guard(g, {"reviewer": _fan_gate()}).compile().invoke({"reviews": []})
    n = 1 if kind == "list" else 3
    assert len(out["reviews"]) == n
    assert [r.decision for r in out["trust_reports"]] == ["pass"] * n


def test_router_send_to_guarded_node_one_lie_halts() -> None:
    def fan(state: Fan) -> list[Send]:
        return [Send("reviewer", {"i": i}) for i in range(3)]

    def reviewer(arg: dict[str, int]) -> dict[str, Any]:
        return {"reviews": [Review(**(LIE if arg["i"] == 2 else TRUTH))]}  # type: ignore[arg-type]

    g = StateGraph(Fan)
    g.add_node("reviewer", reviewer)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_conditional_edges(START, fan, ["reviewer"])
    g.add_edge("reviewer", "after")
    app = guard(g, {"reviewer": _fan_gate()}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted):
        app.invoke({"reviews": []}, cfg())
    values = app.get_state(cfg()).values
    assert LIAR not in _user(values) and "after" not in values.get("log", [])


# --- state kinds: dataclass, pydantic, input/output schemas, context ----------------------


@dataclass
class DState:
    review: Review | None = None
    log: Annotated[list[str], operator.add] = dataclasses.field(default_factory=list)
    trust_reports: TrustReports = dataclasses.field(default_factory=list)


class PState(BaseModel):
    review: Review | None = None
    log: Annotated[list[str], operator.add] = []
    trust_reports: TrustReports = []


@pytest.mark.parametrize("schema", [DState, PState])
@pytest.mark.parametrize(("data", "verdict"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
def test_dataclass_and_pydantic_state(schema: Any, data: dict[str, Any], verdict: str) -> None:
    model = lying_model(data)

    def reviewer(state: Any) -> dict[str, Any]:
        assert isinstance(state, schema)
        return {"review": model.with_structured_output(Review).invoke("x"), "log": ["r"]}

    def route(state: Any) -> Literal["publish"]:
        assert isinstance(state, schema) and state.review is not None
        return "publish"

    def publish(state: Any) -> dict[str, Any]:
        return {"log": [f"publish:{state.review.verdict}"]}

    g = StateGraph(schema)
    g.add_node("reviewer", reviewer)
    g.add_node("publish", publish)
    g.add_edge(START, "reviewer")
    g.add_conditional_edges("reviewer", route)
    app = guard(g, {"reviewer": inspector()}).compile(checkpointer=InMemorySaver())
    out = app.invoke(schema(), cfg())
    assert out["log"] == ["r", f"publish:{verdict}"]
    assert out["review"].verdict == verdict
    assert [r.released for r in reports(app, cfg())] == [True]
    _no_private(out)
    _no_private(app.get_state(cfg()).values)


class In(TypedDict):
    question: str


class Out(TypedDict, total=False):
    answer: str
    trust_reports: TrustReports


class Full(TypedDict, total=False):
    question: str
    review: Review
    answer: str
    log: Annotated[list[str], operator.add]
    trust_reports: TrustReports


@pytest.mark.parametrize(("data", "answer"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
def test_input_and_output_schemas(data: dict[str, Any], answer: str) -> None:
    model = lying_model(data)

    def reviewer(state: Full) -> dict[str, Any]:
        assert state["question"] == "q"
        return {"review": model.with_structured_output(Review).invoke("x")}

    g = StateGraph(Full, input_schema=In, output_schema=Out)
    g.add_node("reviewer", reviewer)
    g.add_node("answer", lambda s: {"answer": s["review"].verdict})
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "answer")
    app = guard(g, {"reviewer": inspector()}).compile()
    out = app.invoke({"question": "q"})
    assert set(out) <= {"answer", "trust_reports"}
    assert out["answer"] == answer
    assert len(out["trust_reports"]) == 1


@pytest.mark.parametrize("how", ["annotation", "input_schema"])
@pytest.mark.parametrize(("data", "dest"), [(LIE, "reject"), (TRUTH, "accept")])
def test_node_taking_input_schema_router_reads_gated_write(
    how: str, data: dict[str, Any], dest: str
) -> None:
    """A node reading only the input schema; its router reads what the node wrote."""
    model = lying_model(data, repeat_last=True)

    def first(state: In) -> dict[str, Any]:
        return {"review": model.with_structured_output(Review).invoke(state["question"])}

    def plain(state):  # type: ignore[no-untyped-def]
        return first(state)

    def route(state):  # type: ignore[no-untyped-def]  # no annotation: LangGraph passes the write through
        return "accept" if state["review"].verdict == "APPROVE" else "reject"

    g = StateGraph(Full, input_schema=In, output_schema=Out)
    if how == "annotation":
        g.add_node("reviewer", first)
    else:
        g.add_node("reviewer", plain, input_schema=In)
    g.add_node("accept", lambda s: {"answer": "accept"})
    g.add_node("reject", lambda s: {"answer": "reject"})
    g.add_edge(START, "reviewer")
    g.add_conditional_edges("reviewer", route, ["accept", "reject"])
    assert g.compile().invoke({"question": "q"})["answer"] == "accept"  # ungated: the lie wins
    app = guard(g, {"reviewer": inspector()}).compile()
    out = app.invoke({"question": "q"})
    assert out["answer"] == dest


@dataclass
class Ctx:
    files: dict[str, str]


@pytest.mark.parametrize(("files", "ok"), [({"a.py": "return 1"}, True), ({"a.py": "x"}, False)])
def test_context_schema_with_evidence_from_context(files: dict[str, str], ok: bool) -> None:
    gate = TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[REPLAY],
        policy=Halt(),
        evidence=EvidenceSources(extra={"files": FromContext("files")}),
        passthrough=["log"],
    )
    g = StateGraph(State, context_schema=Ctx)
    g.add_node("reviewer", _producer(lying_model(TRUTH)))
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": gate}).compile(checkpointer=InMemorySaver())
    if ok:
        assert app.invoke({"log": []}, cfg(), context=Ctx(files))["review"].verdict == "APPROVE"
    else:
        with pytest.raises(GateHalted):
            app.invoke({"log": []}, cfg(), context=Ctx(files))
        assert "review" not in app.get_state(cfg()).values


# --- a guarded node that interrupts --------------------------------------------------------


@pytest.mark.parametrize(("answer", "verdict"), [("lie", "REQUEST_CHANGES"), ("truth", "APPROVE")])
def test_guarded_node_interrupts_then_gate_checks_resumed_update(answer: str, verdict: str) -> None:
    runs: list[str] = []

    def reviewer(state: State) -> dict[str, Any]:
        runs.append("start")
        choice = interrupt({"question": "which?"})
        runs.append(choice)
        return {"review": Review(**(LIE if choice == "lie" else TRUTH)), "log": ["r"]}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_node("publish", lambda s: {"log": [f"publish:{s['review'].verdict}"]})
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "publish")
    # the node's own question to a person is its output too: declared, it may surface
    gate = inspector(passthrough=("log", "interrupt"))
    app = guard(g, {"reviewer": gate}).compile(checkpointer=InMemorySaver())
    first = app.invoke({"log": []}, cfg())
    assert "__interrupt__" in first and "review" not in first
    assert reports(app, cfg()) == []
    out = app.invoke(Command(resume=answer), cfg())
    assert runs == ["start", "start", answer]
    assert out["log"] == ["r", f"publish:{verdict}"]
    assert [r.decision for r in reports(app, cfg())] == ["modified" if answer == "lie" else "pass"]


def test_guarded_node_interrupt_then_halt() -> None:
    def reviewer(state: State) -> dict[str, Any]:
        interrupt("ok?")
        return {"review": Review(**LIE)}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_node("publish", lambda s: {"log": ["publish"]})
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "publish")
    gate = inspector(Halt(), passthrough=("log", "interrupt"))
    app = guard(g, {"reviewer": gate}).compile(checkpointer=InMemorySaver())
    app.invoke({"log": []}, cfg())
    with pytest.raises(GateHalted):
        app.invoke(Command(resume=True), cfg())
    values = app.get_state(cfg()).values
    assert "review" not in values and values["log"] == []


def test_undeclared_pause_of_a_guarded_node_halts_before_anyone_sees_it() -> None:
    """What a node shows a person through ``interrupt()`` is output the gate did not
    read: unless declared (``passthrough=["interrupt"]``), the pause never surfaces."""
    shown = "Approve the refund against ledger entry ZX-4417?"

    def reviewer(state: State) -> dict[str, Any]:
        interrupt(shown)
        return {"review": Review(**TRUTH)}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector(Halt())}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted) as err:
        app.invoke({"log": []}, cfg())
    assert "interrupt" in str(err.value.report.findings)
    snapshot = app.get_state(cfg())
    assert not [i for t in snapshot.tasks for i in t.interrupts]
    assert shown not in repr(snapshot.values)


# --- defer, retry, cache -------------------------------------------------------------------


@pytest.mark.parametrize(("data", "verdict"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
def test_deferred_guarded_node(data: dict[str, Any], verdict: str) -> None:
    g = StateGraph(State)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("b2", lambda s: {"log": ["b2"]})
    g.add_node("reviewer", _producer(lying_model(data)), defer=True)
    g.add_node("publish", lambda s: {"log": [f"publish:{s['review'].verdict}"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge("b", "b2")
    g.add_edge("a", "reviewer")
    g.add_edge("b2", "reviewer")
    g.add_edge("reviewer", "publish")
    app = guard(g, {"reviewer": inspector()}).compile()
    out = app.invoke({"log": []})
    assert out["log"].count("review") == 1
    assert out["log"][-2:] == ["review", f"publish:{verdict}"]
    assert out["log"].index("b2") < out["log"].index("review")


def test_retry_policy_gate_sees_the_successful_attempt() -> None:
    attempts: list[int] = []

    def reviewer(state: State) -> dict[str, Any]:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("flaky")
        return {"review": Review(**LIE), "log": ["r"]}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node(
        "reviewer",
        reviewer,
        retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False),
    )
    g.add_edge(START, "reviewer")
    guarded = guard(g, {"reviewer": inspector()})
    assert guarded.nodes["reviewer"].retry_policy == g.nodes["reviewer"].retry_policy
    out = guarded.compile().invoke({"log": []})
    assert len(attempts) == 2
    assert out["review"].verdict == "REQUEST_CHANGES"
    assert [r.decision for r in out["trust_reports"]] == ["modified"]


def test_cache_policy_guarded_node_is_never_cached() -> None:
    calls: list[int] = []

    def reviewer(state: State) -> dict[str, Any]:
        calls.append(1)
        data = LIE if state.get("rounds") else TRUTH
        return {"review": Review(**data), "log": ["r"]}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node("reviewer", reviewer, cache_policy=CachePolicy())
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector()}).compile(cache=InMemoryCache())
    for _ in range(2):  # a cached write would replay a verdict: each run runs and is checked
        out = app.invoke({"log": [], "rounds": 1})
        assert out["review"].verdict == "REQUEST_CHANGES"
        assert [r.decision for r in out["trust_reports"]] == ["modified"]
    honest = app.invoke({"log": [], "rounds": 0})
    assert honest["review"].verdict == "APPROVE"
    assert [r.decision for r in honest["trust_reports"]] == ["pass"]
    assert len(calls) == 3
    # an unguarded node of the same graph keeps its cache
    assert app.nodes["reviewer"].cache_policy is None


# --- no update -----------------------------------------------------------------------------


@pytest.mark.parametrize("returned", [None, {}])
def test_no_update_fails_no_claims(returned: Any) -> None:
    g = StateGraph(State)
    g.add_node("reviewer", lambda s: returned)
    g.add_node("publish", lambda s: {"log": ["publish"]})
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "publish")
    app = guard(g, {"reviewer": inspector(Halt())}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted) as info:
        app.invoke({"log": []}, cfg())
    assert [f.code for f in info.value.report.failed] == ["no_claims"]
    assert app.get_state(cfg()).values["log"] == []


def test_no_update_with_override_policy_never_passes_silently() -> None:
    g = StateGraph(State)
    g.add_node("reviewer", lambda s: None)
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector()}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted) as info:  # nothing to override: the crossing halts
        app.invoke({"log": []}, cfg())
    assert info.value.report.decision == "halted"
    assert "no_claims" in [f.code for f in info.value.report.failed]
    assert [r.released for r in reports(app, cfg())] == [False]


# --- subgraphs -----------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "verdict"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
def test_gate_inside_subgraph_used_in_parent_with_checkpointer(
    data: dict[str, Any], verdict: str
) -> None:
    inner = guard(reviewer_graph(lying_model(data)), {"reviewer": inspector()}).compile()
    g = StateGraph(State)
    g.add_node("flow", inner)
    g.add_node("after", lambda s: {"log": [f"after:{s['review'].verdict}"]})
    g.add_edge(START, "flow")
    g.add_edge("flow", "after")
    app = g.compile(checkpointer=InMemorySaver())
    out = app.invoke({"log": []}, cfg())
    assert out["review"].verdict == verdict
    assert out["log"][-1] == f"after:{verdict}"
    _no_private(out)
    _no_private(app.get_state(cfg()).values)
    assert [r.gate for r in reports(app, cfg())] == ["inspector"]


def test_gate_inside_subgraph_halt_reaches_parent() -> None:
    inner = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Halt())}).compile()
    g = StateGraph(State)
    g.add_node("flow", inner)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(START, "flow")
    g.add_edge("flow", "after")
    app = g.compile(checkpointer=InMemorySaver())
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream(
            {"log": []}, cfg(), stream_mode=["updates", "values"], subgraphs=True
        ):
            seen.append(part)
    assert LIAR not in _user([p[2] for p in seen])
    _no_private([p[2] for p in seen])
    values = app.get_state(cfg()).values
    assert "review" not in values and "after" not in values["log"]
    (report,) = reports(app, cfg())  # the halted crossing's report is reachable
    assert report.decision == "halted" and not report.released


class Plain(TypedDict, total=False):
    review: Review
    log: Annotated[list[str], operator.add]


async def test_gate_inside_subgraph_reports_reachable_without_parent_channel() -> None:
    from trustgate import areports

    inner = guard(reviewer_graph(lying_model(LIE, TRUTH)), {"reviewer": inspector()}).compile()
    g = StateGraph(Plain)
    g.add_node("flow", inner)
    g.add_edge(START, "flow")
    app = g.compile(checkpointer=InMemorySaver())
    first = app.invoke({"log": []}, cfg())
    second = await app.ainvoke({"log": []}, cfg())
    assert first["review"].verdict == "REQUEST_CHANGES"
    assert second["review"].verdict == "APPROVE"
    assert set(second) == {"review", "log"}
    assert [r.decision for r in reports(app, cfg())] == ["modified", "pass"]
    assert [r.decision for r in await areports(app, cfg())] == ["modified", "pass"]


@pytest.mark.parametrize(("data", "verdict"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
def test_subgraph_node_guarded_from_parent(data: dict[str, Any], verdict: str) -> None:
    inner = reviewer_graph(lying_model(data)).compile()
    g = StateGraph(State)
    g.add_node("flow", inner)
    g.add_node("after", lambda s: {"log": [f"after:{s['review'].verdict}"]})
    g.add_edge(START, "flow")
    g.add_edge("flow", "after")
    app = guard(g, {"flow": inspector()}).compile(checkpointer=InMemorySaver())
    out = app.invoke({"log": []}, cfg())
    assert out["log"][-1] == f"after:{verdict}"
    assert [r.node for r in reports(app, cfg())] == ["flow"]
    _no_private(app.get_state(cfg()).values)


# --- a node that raises --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_guarded_node_raising_propagates(mode: str) -> None:
    class Boom(RuntimeError):
        pass

    def reviewer(state: State) -> dict[str, Any]:
        raise Boom("model down")

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector()}).compile(checkpointer=InMemorySaver())
    with pytest.raises(Boom):
        if mode == "sync":
            app.invoke({"log": []}, cfg())
        else:
            await app.ainvoke({"log": []}, cfg())
    assert reports(app, cfg()) == []
    assert "review" not in app.get_state(cfg()).values


# --- sync, async and streams ---------------------------------------------------------------

MODES = ["updates", "values", "messages", "custom"]


class Chat(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    trust_reports: TrustReports


def _messages_graph(text: str) -> StateGraph[Any, Any, Any, Any]:
    model = honest_model(text, repeat_last=True)

    def writer(state: Chat) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(Chat)
    g.add_node("writer", writer)
    g.add_node("after", lambda s: {})
    g.add_edge(START, "writer")
    g.add_edge("writer", "after")
    return g


def _text_gate() -> TrustGate:
    from trustgate import Finding
    from trustgate.readers import LastAIText
    from trustgate.verifiers.base import FunctionVerifier

    def check(claims: Any, evidence: Any) -> list[Finding]:
        if "zebras" in claims:
            return [Finding.failed("facts", "false", "there are no zebras")]
        return [Finding.ok("facts")]

    return TrustGate("facts", reads=LastAIText(), verifiers=[FunctionVerifier(check, name="facts")])


@pytest.mark.parametrize(("text", "ok"), [("It returns 1.", True), ("It returns zebras.", False)])
async def test_streams_sync_and_async(text: str, ok: bool) -> None:

    app = guard(_messages_graph(text), {"writer": _text_gate()}).compile()
    for run in range(2):
        seen: list[Any] = []
        try:
            if run == 0:
                for part in app.stream({"messages": [("user", "hi")]}, stream_mode=MODES):
                    seen.append(part)
            else:
                async for part in app.astream({"messages": [("user", "hi")]}, stream_mode=MODES):
                    seen.append(part)
        except GateHalted:
            assert not ok
        else:
            assert ok
        modes = {p[0] for p in seen}
        # a gate that acted says so on the custom stream; a passing one is silent there
        assert ("custom" in modes) == (not ok)
        shown = _user([p[1] for p in seen if p[0] != "custom"])
        _no_private(shown)
        if ok:
            assert "returns 1" in shown and "messages" in modes
        else:
            assert "zebra" not in shown


@pytest.mark.parametrize(("data", "verdict"), [(LIE, "REQUEST_CHANGES"), (TRUTH, "APPROVE")])
async def test_plain_graph_streams_async(data: dict[str, Any], verdict: str) -> None:
    app = guard(reviewer_graph(lying_model(data)), {"reviewer": inspector()}).compile()
    seen = [p async for p in app.astream({"log": []}, stream_mode=MODES)]
    out = (
        await guard(reviewer_graph(lying_model(data)), {"reviewer": inspector()})
        .compile()
        .ainvoke({"log": []})
    )
    assert out["review"].verdict == verdict
    user = _user([p[1] for p in seen if p[0] in ("updates", "values")])
    assert (verdict == "APPROVE") == ("APPROVE" in user)  # the lie's verdict never shows
    _no_private(user)
    acted = [p[1]["trustgate"].gate for p in seen if p[0] == "custom"]
    assert acted == (["inspector"] if verdict == "REQUEST_CHANGES" else [])


@pytest.mark.parametrize("mode", ["tasks", "debug", "checkpoints"])
def test_task_and_debug_streams_show_no_held_update(mode: str) -> None:
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Halt())}).compile(
        checkpointer=InMemorySaver()
    )
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream({"log": []}, cfg(), stream_mode=mode):
            seen.append(part)
    assert seen

    def strip(value: Any) -> Any:  # reports and the halt's error quote the claim: their job
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("trust_reports", "error")}
        if isinstance(value, (list, tuple)):
            return [strip(v) for v in value]
        return value

    text = repr(strip(seen))
    assert "__trustgate" not in text and LIAR not in text


# --- configuration errors ------------------------------------------------------------------


def test_configuration_errors_are_clear() -> None:
    g = reviewer_graph(lying_model(LIE))
    with pytest.raises(ConfigurationError, match="no node 'nope'"):
        guard(g, {"nope": inspector()})
    with pytest.raises(ConfigurationError, match="at least one"):
        guard(g, {})
    for bad in ("inspector", None, 3, [inspector(), "x"], [], {"a": 1}, object()):
        with pytest.raises(ConfigurationError, match="TrustGate"):
            guard(g, {"reviewer": bad})  # type: ignore[dict-item]
    with pytest.raises(ConfigurationError, match="mapping"):
        guard(g, [("reviewer", inspector())])  # type: ignore[arg-type]
    for node in (START, END):
        with pytest.raises(ConfigurationError):
            guard(g, {node: inspector()})


def test_guarding_a_guarded_node_again_is_refused() -> None:
    once = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()})
    with pytest.raises(ConfigurationError, match="already guarded"):
        guard(once, {"reviewer": TrustGate("second", passthrough=["review"])})
    with pytest.raises(ConfigurationError, match="no node 'inspector'"):
        guard(once, {"inspector": TrustGate("second", passthrough=["review"])})


# --- update_state as the guarded node ------------------------------------------------------


@pytest.mark.parametrize(("data", "ok"), [(LIE, False), (TRUTH, True)])
def test_update_state_as_guarded_node_is_applied_like_langgraph(
    data: dict[str, Any], ok: bool
) -> None:
    """``update_state(as_node=...)`` is a person writing state, not the node's model:
    it is applied exactly as LangGraph applies it (a gate guards what the node emits)."""
    app = guard(reviewer_graph(lying_model(TRUTH)), {"reviewer": inspector(Halt())}).compile(
        checkpointer=InMemorySaver(), interrupt_before=["reviewer"]
    )
    plain = reviewer_graph(lying_model(TRUTH)).compile(
        checkpointer=InMemorySaver(), interrupt_before=["reviewer"]
    )
    for graph in (app, plain):
        graph.invoke({"log": []}, cfg())
        graph.update_state(cfg(), {"review": Review(**data), "log": ["edited"]}, as_node="reviewer")
    assert app.get_state(cfg()).values == {
        **plain.get_state(cfg()).values,
        "trust_reports": [],
    }
    assert app.invoke(None, cfg()) == {**plain.invoke(None, cfg()), "trust_reports": []}
    assert reports(app, cfg()) == []
    del ok


# --- review pauses in nested and parallel shapes, streams through subgraphs ----------------


def test_review_gate_inside_subgraph_resumed_through_parent() -> None:
    from trustgate.policies import Review as ReviewPolicy

    calls: list[str] = []
    inner = guard(
        reviewer_graph(lying_model(LIE), calls), {"reviewer": inspector(ReviewPolicy())}
    ).compile()
    g = StateGraph(State)
    g.add_node("flow", inner)
    g.add_edge(START, "flow")
    app = g.compile(checkpointer=InMemorySaver())
    first = app.invoke({"log": []}, cfg())
    assert "__interrupt__" in first and "review" not in first
    out = app.invoke(Command(resume={"type": "approve", "by": "alice"}), cfg())
    assert calls == ["reviewer"]  # the producer did not run again
    assert out["log"] == ["reviewer", "publish:APPROVE"]
    (report,) = reports(app, cfg())
    assert report.decision == "reviewed" and report.approval is not None


def test_parallel_review_gates_pause_together_and_resume() -> None:
    from trustgate.policies import Review as ReviewPolicy

    app = guard(
        _pair_graph(LIE, TRUTH),
        {"a": _gate("ga", "a", ReviewPolicy()), "b": _gate("gb", "b", ReviewPolicy())},
    ).compile(checkpointer=InMemorySaver())
    first = app.invoke({"log": []}, cfg())
    assert len(first["__interrupt__"]) == 1  # only the lying branch pauses
    assert "a" not in first and first["b"].verdict == "APPROVE"
    values = app.get_state(cfg()).values
    assert not any(e.startswith("join") for e in values["log"])
    with pytest.raises(GateHalted):  # a rejection halts: the join never runs
        app.invoke(Command(resume={"type": "reject", "by": "al"}), cfg())
    values = app.get_state(cfg()).values
    assert "a" not in values and not any(e.startswith("join") for e in values["log"])
    assert sorted((r.gate, r.released) for r in reports(app, cfg())) == [
        ("ga", False),
        ("gb", True),
    ]


@pytest.mark.parametrize(("text", "ok"), [("It returns 1.", True), ("It returns zebras.", False)])
def test_token_stream_through_a_subgraph_with_a_gate(text: str, ok: bool) -> None:

    inner = guard(_messages_graph(text), {"writer": _text_gate()}).compile()
    g = StateGraph(Chat)
    g.add_node("flow", inner)
    g.add_edge(START, "flow")
    app = g.compile()
    seen: list[Any] = []
    try:
        for part in app.stream(
            {"messages": [("user", "hi")]}, stream_mode=["messages", "updates"], subgraphs=True
        ):
            seen.append(part)
    except GateHalted:
        assert not ok
    tokens = "".join(str(p[2][0].content) for p in seen if p[1] == "messages")
    if ok:
        assert tokens == text and len([p for p in seen if p[1] == "messages"]) > 1
    else:
        assert "zebra" not in _user([p[2] for p in seen])


@pytest.mark.parametrize(("text", "ok"), [("It returns 1.", True), ("It returns zebras.", False)])
async def test_astream_events_hold_the_lie(text: str, ok: bool) -> None:

    app = guard(_messages_graph(text), {"writer": _text_gate()}).compile()
    seen: list[Any] = []
    try:
        async for event in app.astream_events({"messages": [("user", "hi")]}, version="v2"):
            seen.append(event)
    except GateHalted:
        assert not ok
    # the gate's own output is its report, which quotes the claim (its job)
    shown = _user([e.get("data") for e in seen if e.get("name") != "facts"])
    assert ("returns 1" in shown) is ok
    assert "zebra" not in shown


async def test_async_guarded_node_interrupt_then_halt() -> None:
    async def reviewer(state: State) -> dict[str, Any]:
        answer = interrupt("which?")
        return {"review": Review(**(LIE if answer == "lie" else TRUTH))}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector(Halt(), passthrough=("log", "interrupt"))}).compile(
        checkpointer=InMemorySaver()
    )
    await app.ainvoke({"log": []}, cfg())
    with pytest.raises(GateHalted):
        await app.ainvoke(Command(resume="lie"), cfg())
    assert "review" not in (await app.aget_state(cfg())).values
    await app.ainvoke({"log": []}, cfg("ok"))
    out = await app.ainvoke(Command(resume="truth"), cfg("ok"))
    assert out["review"].verdict == "APPROVE"


@pytest.mark.parametrize(("answer", "verdict"), [("lie", "REQUEST_CHANGES"), ("truth", "APPROVE")])
def test_guarded_subgraph_node_that_interrupts_inside(answer: str, verdict: str) -> None:
    def reviewer(state: State) -> dict[str, Any]:
        choice = interrupt("which?")
        return {"review": Review(**(LIE if choice == "lie" else TRUTH)), "log": ["r"]}  # type: ignore[arg-type]

    inner = StateGraph(State)
    inner.add_node("reviewer", reviewer)
    inner.add_edge(START, "reviewer")
    g = StateGraph(State)
    g.add_node("flow", inner.compile())
    g.add_node("after", lambda s: {"log": [f"after:{s['review'].verdict}"]})
    g.add_edge(START, "flow")
    g.add_edge("flow", "after")
    app = guard(g, {"flow": inspector(passthrough=("log", "interrupt"))}).compile(
        checkpointer=InMemorySaver()
    )
    first = app.invoke({"log": []}, cfg())
    assert "__interrupt__" in first and "review" not in first
    assert [t.state is not None for t in app.get_state(cfg(), subgraphs=True).tasks] == [True]
    out = app.invoke(Command(resume=answer), cfg())
    assert out["log"] == ["r", f"after:{verdict}"]
    assert [r.node for r in reports(app, cfg())] == ["flow"]


def test_compiled_graph_with_schemas_and_context_keeps_them() -> None:
    gate = TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[REPLAY],
        policy=Halt(),
        evidence=EvidenceSources(extra={"files": FromContext("files")}),
        passthrough=["log"],
    )
    g = StateGraph(Full, input_schema=In, output_schema=Out, context_schema=Ctx)
    g.add_node("reviewer", _producer(lying_model(TRUTH, repeat_last=True)))
    g.add_node("answer", lambda s: {"answer": s["review"].verdict})
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "answer")
    original = g.compile(checkpointer=InMemorySaver())
    app = guard(original, {"reviewer": gate})
    assert app.get_input_jsonschema() == original.get_input_jsonschema()
    assert app.get_output_jsonschema() == original.get_output_jsonschema()
    assert app.get_context_jsonschema() == original.get_context_jsonschema()
    out = app.invoke({"question": "q"}, cfg(), context=Ctx({"a.py": "return 1"}))
    assert out == {"answer": "APPROVE", "trust_reports": out["trust_reports"]}
    with pytest.raises(GateHalted):
        app.invoke({"question": "q"}, cfg("other"), context=Ctx({"a.py": "x"}))
