"""guard(): real gate nodes inside existing graphs, with lying models stopped."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from _gate_support import (
    LIE,
    REPLAY,
    TRUTH,
    FanState,
    Review,
    State,
    cfg,
    inspector,
    reviewer_graph,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Send
from typing_extensions import TypedDict

from trustgate import Cut, Finding, Report, TrustGate, reports
from trustgate._compat import check_builder
from trustgate.errors import ConfigurationError, GateHalted, LangGraphCompatibilityError
from trustgate.graph import TrustReports, guard, guarded_nodes
from trustgate.policies import OVERRIDE_NOTE, Halt, Override
from trustgate.testing import lying_model
from trustgate.verifiers.base import Evidence, FunctionVerifier


def test_override_mutation_verdict_flipped_before_downstream_reads_it() -> None:
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke({"log": []}, cfg())
    assert out["review"].verdict == "REQUEST_CHANGES"
    assert out["review"].summary.endswith(OVERRIDE_NOTE)
    assert out["log"] == ["reviewer", "publish:REQUEST_CHANGES"]
    (report,) = reports(app, cfg())
    assert report.decision == "modified" and report.released
    assert report.overrides[0].before == "APPROVE"
    assert report.node == "reviewer" and report.gate == "inspector"
    assert report.thread_id == "t" and report.step is not None


def test_honest_run_passes_untouched() -> None:
    app = guard(reviewer_graph(lying_model(TRUTH)), {"reviewer": inspector()}).compile()
    out = app.invoke({"log": []})
    assert out["review"].verdict == "APPROVE"
    assert [r.decision for r in out["trust_reports"]] == ["pass"]


def test_halt_mutation_checkpoint_kept_nothing_downstream_runs() -> None:
    app = guard(reviewer_graph(lying_model(LIE, LIE)), {"reviewer": inspector(Halt())}).compile(
        checkpointer=InMemorySaver()
    )
    with pytest.raises(GateHalted) as info:
        app.invoke({"log": []}, cfg())
    assert info.value.report.decision == "halted"
    assert [f.code for f in info.value.report.failed] == ["content_mismatch"]
    snap = app.get_state(cfg())
    assert "review" not in snap.values  # the lie never reached user state
    assert snap.values["log"] == []  # reviewer's write held, publish never ran
    # the guarded task stays unfinished (a halt is an outcome, not an error to retry or
    # hand to an error handler); nothing after it ran
    assert snap.next == ("reviewer",) and snap.tasks[0].error is None
    assert [r.decision for r in reports(app, cfg())] == ["halted"]
    assert not any(k.startswith("__trustgate") for k in snap.values)
    with pytest.raises(GateHalted):  # resuming runs the node again: still refused
        app.invoke(None, cfg())
    assert [r.decision for r in reports(app, cfg())] == ["halted", "halted"]
    assert "review" not in app.get_state(cfg()).values


def test_streams_never_show_held_content() -> None:
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Halt())}).compile()
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream({"log": []}, stream_mode=["updates", "values", "custom"]):
            seen.append(part)

    def user_part(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: user_part(v) for k, v in value.items() if k != "trust_reports"}
        return value

    # the reports say what was claimed (that is their job); user channels must not
    text = repr([user_part(p[1]) for p in seen if p[0] != "custom"])
    assert "return 42" not in text and "__trustgate" not in text
    customs = [p[1]["trustgate"] for p in seen if p[0] == "custom"]
    assert [type(r) for r in customs] == [Report]
    assert customs[0].decision == "halted"


def test_original_builder_and_compiled_graph_untouched() -> None:
    builder = reviewer_graph(lying_model(LIE, LIE))
    before = (dict(builder.nodes), set(builder.edges), dict(builder.channels))
    original = builder.compile(checkpointer=InMemorySaver())
    guard(builder, {"reviewer": inspector()})
    guard(original, {"reviewer": inspector()})
    assert (dict(builder.nodes), set(builder.edges), dict(builder.channels)) == before
    out = original.invoke({"log": []}, cfg())
    assert out["review"].verdict == "APPROVE"  # ungated original still lets it through


def test_compiled_graph_settings_preserved() -> None:
    saver, store = InMemorySaver(), InMemoryStore()
    original = (
        reviewer_graph(lying_model(LIE))
        .compile(checkpointer=saver, store=store, interrupt_before=["publish"], name="prs")
        .with_config({"tags": ["prs"], "recursion_limit": 12})
    )
    app = guard(original, {"reviewer": inspector()})
    assert app.checkpointer is saver and app.store is store
    assert app.interrupt_before_nodes == ["publish"] and app.name == "prs"
    assert app.config == original.config
    app.invoke({"log": []}, cfg())
    snap = app.get_state(cfg())
    assert snap.next == ("publish",)  # interrupted before publish, after the gate
    assert snap.values["review"].verdict == "REQUEST_CHANGES"
    # the gate runs inside reviewer: the drawing is the graph's own
    assert app.get_graph().draw_mermaid() == original.get_graph().draw_mermaid()


def test_guarded_nodes_say_where_the_gates_stand() -> None:
    g = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()})
    assert guarded_nodes(g) == {"reviewer": ("inspector",)}
    assert guarded_nodes(g.compile()) == {"reviewer": ("inspector",)}
    assert set(g.nodes) == {"reviewer", "publish"}


def test_conditional_edge_and_loop() -> None:
    """reviewer ⇄ fixer loop: the router reads the gated verdict, never the lie."""
    model = lying_model(LIE, LIE, TRUTH)

    def reviewer(state: State) -> dict[str, Any]:
        return {"review": model.with_structured_output(Review).invoke("x"), "log": ["r"]}

    def fixer(state: State) -> dict[str, Any]:
        return {"log": ["fix"], "rounds": state.get("rounds", 0) + 1}

    def route(state: State) -> str:
        return "done" if state["review"].verdict == "APPROVE" else "fix"

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_node("fixer", fixer)
    g.add_edge(START, "reviewer")
    g.add_conditional_edges("reviewer", route, {"fix": "fixer", "done": END})
    g.add_edge("fixer", "reviewer")
    app = guard(g, {"reviewer": inspector()}).compile()
    out = app.invoke({"log": []})
    assert out["log"] == ["r", "fix", "r", "fix", "r"]
    assert [r.decision for r in out["trust_reports"]] == ["modified", "modified", "pass"]
    assert app.get_graph().draw_mermaid() == g.compile().get_graph().draw_mermaid()


def test_command_goto_is_held_and_reissued_only_on_release() -> None:
    def reviewer(state: State) -> Command[Any]:
        review = Review(**((state.get("rounds") and TRUTH) or LIE))  # type: ignore[arg-type]
        return Command(update={"review": review, "log": ["r"]}, goto="merge")

    def merge(state: State) -> dict[str, Any]:
        return {"log": ["MERGED"]}

    g = StateGraph(State)
    g.add_node("reviewer", reviewer, destinations=("merge",))
    g.add_node("merge", merge)
    g.add_edge(START, "reviewer")
    # the route is the node's own output: declared, it passes with the verified review
    gate = inspector(Halt(), passthrough=("log", "goto"))
    halt_app = guard(g, {"reviewer": gate}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted):
        halt_app.invoke({"log": []}, cfg())
    assert halt_app.get_state(cfg()).values["log"] == []  # merge never ran
    ok = guard(g, {"reviewer": gate}).compile()
    assert ok.invoke({"log": [], "rounds": 1})["log"] == ["r", "MERGED"]
    # undeclared, the route is held: the run halts before merge
    strict = guard(g, {"reviewer": inspector(Halt())}).compile()
    with pytest.raises(GateHalted, match="passthrough=\\['goto'\\]"):
        strict.invoke({"log": [], "rounds": 1})


async def test_async_graph() -> None:
    model = lying_model(LIE)

    async def reviewer(state: State) -> dict[str, Any]:
        review = await model.with_structured_output(Review).ainvoke("x")
        return {"review": review, "log": ["r"]}

    async def publish(state: State) -> dict[str, Any]:
        return {"log": [f"publish:{state['review'].verdict}"]}

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_node("publish", publish)
    g.add_edge(START, "reviewer")
    g.add_edge("reviewer", "publish")
    app = guard(g, {"reviewer": inspector()}).compile()
    out = await app.ainvoke({"log": []})
    assert out["log"] == ["r", "publish:REQUEST_CHANGES"]


def test_send_fan_out_verified_per_task() -> None:
    def start(state: FanState) -> list[Send]:
        return [Send("reviewer", {"i": i}) for i in range(3)]

    def reviewer(arg: dict[str, int]) -> dict[str, Any]:
        data = LIE if arg["i"] == 1 else TRUTH
        return {"reviews": [Review(**data)]}  # type: ignore[arg-type]

    gate = TrustGate(
        "inspector",
        reads=lambda u: (u.get("reviews") or [None])[0],
        verifiers=[REPLAY],
        policy=Override("reviews", []),
    )
    g = StateGraph(FanState)
    g.add_node("reviewer", reviewer)
    g.add_conditional_edges(START, start, ["reviewer"])
    g.add_edge("reviewer", END)
    out = guard(g, {"reviewer": gate}).compile().invoke({"reviews": []})
    assert [r.decision for r in out["trust_reports"]] == ["pass", "modified", "pass"]
    assert len(out["reviews"]) == 2
    assert all(r.cites == ["a.py:return 1"] for r in out["reviews"])


def test_subgraph_node() -> None:
    inner = reviewer_graph(lying_model(LIE)).compile()

    g = StateGraph(State)
    g.add_node("review_flow", inner)
    g.add_edge(START, "review_flow")
    g.add_edge("review_flow", END)
    out = guard(g, {"review_flow": inspector()}).compile().invoke({"log": []})
    assert out["review"].verdict == "REQUEST_CHANGES"
    assert [r.node for r in out["trust_reports"]] == ["review_flow"]


def test_messages_producer_with_rerender_sees_every_issue() -> None:
    from trustgate.policies import Caveat, Rerender
    from trustgate.readers import LastAIText

    class Draft(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        trust_issues: list[str]
        trust_reports: TrustReports

    first = "Retain assets per ISO 27001 9.2 and ISO 27001 9.3 yearly."
    model = lying_model(first, first)

    def writer(state: Draft) -> dict[str, Any]:
        prompt: list[Any] = [SystemMessage("Cite only A.5.9."), HumanMessage("Draft it.")]
        if state.get("trust_issues"):
            prompt.append(HumanMessage("Fix:\n" + "\n".join(state["trust_issues"])))
        return {"messages": [model.invoke(prompt)]}

    def contract(claims: Any, evidence: Evidence) -> list[Finding]:
        bad = [c for c in ("ISO 27001 9.2", "ISO 27001 9.3") if c in claims]
        return [
            Finding.failed(
                "contract",
                "invented_citation",
                f"{c} is not approved",
                subject=c,
                proposals=[Cut(text=t) for t in [c]],
            )
            for c in bad
        ] or [Finding.ok("contract")]

    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(contract, name="contract")],
        policy=Rerender(to="writer", max_attempts=1, then=Caveat()),
    )
    g = StateGraph(Draft)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    out = guard(g, {"writer": gate}).compile().invoke({"messages": [HumanMessage("go")]})
    assert len(model.calls) == 2  # exactly one re-render
    second_input = " ".join(str(m.content) for m in model.calls[1])
    assert "ISO 27001 9.2" in second_input and "ISO 27001 9.3" in second_input
    assert [r.decision for r in out["trust_reports"]] == ["rerendered", "caveated"]
    released = out["messages"][-1].content
    assert released.startswith("> **Caveat:**")
    body = released.split("\n\n", 1)[1]
    assert "9.2" not in body and "9.3" not in body
    assert len([m for m in out["messages"] if isinstance(m, AIMessage)]) == 1
    assert not out.get("trust_issues")  # the issues went to the re-run, never into state


def test_configuration_errors() -> None:
    g = reviewer_graph(lying_model(LIE))
    with pytest.raises(ConfigurationError):
        guard(g, {"nope": inspector()})
    with pytest.raises(ConfigurationError):
        guard(g, {})
    with pytest.raises(ConfigurationError):
        guard(object(), {"reviewer": inspector()})
    with pytest.raises(ConfigurationError, match="again"):
        from trustgate.policies import Rerender

        guard(
            g,
            {"reviewer": TrustGate("x", passthrough=["review"], policy=Rerender(to="publish"))},
        )
    with pytest.raises(ConfigurationError, match="already guarded"):
        guard(guard(g, {"reviewer": inspector()}), {"reviewer": inspector()})
    with pytest.raises(ConfigurationError, match="repeat"):
        guard(g, {"reviewer": [inspector(), inspector()]})


def test_internals_are_checked() -> None:
    g = reviewer_graph(lying_model(LIE))
    check_builder(g)
    broken = reviewer_graph(lying_model(LIE))
    broken.edges = list(broken.edges)  # type: ignore[assignment]
    with pytest.raises(LangGraphCompatibilityError, match="edges"):
        guard(broken, {"reviewer": inspector()})
    broken2 = reviewer_graph(lying_model(LIE))
    broken2.branches = {}  # type: ignore[assignment]
    with pytest.raises(LangGraphCompatibilityError, match="branches"):
        check_builder(broken2)


async def test_200_concurrent_runs_keep_their_own_reports() -> None:
    def reviewer(state: State) -> dict[str, Any]:
        n = state["rounds"]
        data = {
            "verdict": "APPROVE",
            "summary": f"run {n}",
            "cites": [f"a.py:return {1 if n % 2 else 42}"],
        }
        return {"review": Review(**data)}  # type: ignore[arg-type]

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_edge(START, "reviewer")
    app = guard(g, {"reviewer": inspector()}).compile(checkpointer=InMemorySaver())
    outs = await asyncio.gather(
        *(app.ainvoke({"rounds": n, "log": []}, cfg(f"t{n}")) for n in range(200))
    )
    for n, out in enumerate(outs):
        (report,) = out["trust_reports"]
        assert report.thread_id == f"t{n}"
        assert report.claims[0]["summary"] == f"run {n}"
        assert report.decision == ("pass" if n % 2 else "modified")
        assert out["review"].verdict == ("APPROVE" if n % 2 else "REQUEST_CHANGES")
    stored = await asyncio.gather(*(app.aget_state(cfg(f"t{n}")) for n in range(200)))
    assert all(len(s.values["trust_reports"]) == 1 for s in stored)


def test_held_command_send_is_reissued_on_release_only() -> None:
    def reviewer(state: State) -> Command[Any]:
        data = TRUTH if state.get("rounds") else LIE
        return Command(update={"review": Review(**data)}, goto=[Send("notify", {"who": "a"})])  # type: ignore[arg-type]

    def notify(arg: dict[str, str]) -> dict[str, Any]:
        return {"log": [f"notified:{arg['who']}"]}

    g = StateGraph(State)
    g.add_node("reviewer", reviewer)
    g.add_node("notify", notify)
    g.add_edge(START, "reviewer")
    gate = inspector(Halt(), passthrough=("send",))
    ok = guard(g, {"reviewer": gate}).compile()
    assert ok.invoke({"log": [], "rounds": 1})["log"] == ["notified:a"]
    bad = guard(g, {"reviewer": gate}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted):
        bad.invoke({"log": []}, cfg("send"))
    assert bad.get_state(cfg("send")).values["log"] == []


def test_rerender_feedback_as_message() -> None:
    from trustgate.policies import Rerender
    from trustgate.readers import LastAIText

    class Chat(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        trust_reports: TrustReports

    model = lying_model("Per ISO 27001 9.2.", "Per the approved control A.5.9.")

    def writer(state: Chat) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def contract(claims: Any, evidence: Evidence) -> list[Finding]:
        if "9.2" in claims:
            return [Finding.failed("contract", "invented_citation", "9.2 is not approved")]
        return [Finding.ok("contract")]

    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(contract, name="contract")],
        policy=Rerender(to="writer", issues_key=None, as_message=True),
    )
    g = StateGraph(Chat)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    out = guard(g, {"writer": gate}).compile().invoke({"messages": [HumanMessage("draft")]})
    assert "9.2 is not approved" in str(model.calls[1][-1].content)
    assert out["messages"][-1].content == "Per the approved control A.5.9."
    assert [r.decision for r in out["trust_reports"]] == ["rerendered", "pass"]


def test_evidence_state_keys_checked_at_guard_time() -> None:
    from trustgate.verifiers.base import EvidenceSources, FromState

    gate = TrustGate(
        "inspector",
        reads="review",
        verifiers=[REPLAY],
        evidence=EvidenceSources(record=FromState("no_such_key")),
    )
    with pytest.raises(ConfigurationError, match="no_such_key"):
        guard(reviewer_graph(lying_model(LIE)), {"reviewer": gate})
