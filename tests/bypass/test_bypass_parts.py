"""Attacks on decide, apply and account: a policy that changed one part must not release
another, and every part the node emitted is in the ledger.

Each attack runs unguarded first (the lie must show: the control), then guarded; the lie
must appear nowhere outside the audit record. The shapes are the classes the part ledger
closes: a policy that rewrote some other part than the failed one (a caveat on the text
of a message whose tool call failed, a response to a review that left the call, a
per-call review read as one answer, an override of a key written twice, a coerced claim
released raw), and parts accounting did not see (two calls with one id, a write equal to
the state under a reducer, an overwrite that reorders history, a permissive gate beside
a strict one, a streamed chunk's role).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from _bypass_support import find_lies
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Overwrite
from pydantic import BaseModel, ConfigDict
from shapes import Recorder
from test_bypass_attacks import CHECK, LIE, LIE_TEXT, TRUE_TEXT, S, attack, graph
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.drafts import Record
from trustgate.errors import GateHalted
from trustgate.policies import (
    BlockToolCalls,
    Caveat,
    Halt,
    Override,
    Redact,
    Rerender,
    Review,
)
from trustgate.readers import FromKey, LastAIText, ToolCallArgs
from trustgate.verifiers.base import EvidenceSources, FunctionVerifier
from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule

ARGS = {"reference": LIE}
HONEST_ARGS = {"reference": "ticket 12"}


def _refund_graph(recorder: Recorder, calls: Sequence[dict[str, Any]], text: str = "") -> Any:
    """agent (one AI message carrying ``calls``) → tools → after; every real refund is
    recorded (``tool_runs``)."""

    @tool
    def refund(reference: str) -> str:
        """Pay out a refund against a ledger reference."""
        recorder.tool_ran("refund", reference=reference)
        return "refunded"

    def agent(state: S) -> dict[str, Any]:
        if any(isinstance(m, ToolMessage) for m in state["messages"]):
            return {"messages": [AIMessage(TRUE_TEXT)]}
        return {"messages": [AIMessage(text, tool_calls=[dict(c) for c in calls])]}

    return graph(agent, tools=[refund])


def _ran(recorder: Recorder) -> list[str]:
    return [str(r.args.get("reference")) for r in recorder.tool_runs]


# --- 1. a caveat on text never releases a failed call or a decision field ----------------------


def test_rerender_then_caveat_on_a_tool_call_only_message_halts() -> None:
    """The message carries only a fabricated call: its text is ``""``. A caveat on that
    text used to settle the call's failure, and the call ran."""
    recorder = Recorder()
    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        policy=Rerender(max_attempts=0, then=Caveat()),
        passthrough=["messages.text"],
    )
    a = attack(
        _refund_graph(recorder, [{"name": "refund", "args": ARGS, "id": "c1"}]),
        gate,
        downstream=("after", "tools"),
        recorder=recorder,
    )
    a.assert_blocked()
    assert a.halted and LIE not in _ran(recorder)
    why = a.runs["stream"].reports[-1].overrides[-1].reason
    assert "cannot settle" in why and "tool_calls[0]" in why


class V(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    verdict: str


def test_caveat_on_a_decision_field_halts() -> None:
    """``FromKey("verdict")`` with ``Rerender(then=Caveat())``: the caveat would have
    released ``> **Caveat:** … APPROVE …``, which a router testing ``"APPROVE" in
    verdict`` acts on."""
    acted: list[str] = []

    def agent(state: V) -> dict[str, Any]:
        return {"verdict": f"APPROVE ({LIE})"}

    g = StateGraph(V)
    g.add_node("agent", agent)
    g.add_node("merge", lambda s: acted.append("merged") or {})
    g.add_node("after", lambda s: {})
    g.add_edge(START, "agent")
    g.add_conditional_edges(
        "agent", lambda s: "merge" if "APPROVE" in s.get("verdict", "") else "after"
    )
    g.add_edge("merge", "after")
    g.add_edge("after", END)
    gate = TrustGate(
        "verdict",
        reads=FromKey("verdict"),
        verifiers=[CHECK],
        policy=Rerender(max_attempts=0, then=Caveat()),
    )
    a = attack(g, gate, inputs={"messages": []})
    a.assert_blocked()
    assert a.halted
    acted.clear()
    app = trustgate.guard(g, {"agent": gate}).compile()
    with pytest.raises(GateHalted) as halted:
        app.invoke({"messages": []})
    assert "state value a program may act on" in halted.value.report.overrides[-1].reason
    assert acted == []


# --- 2, 3. review answers apply to the calls they name ---------------------------------------


def _review_gate() -> TrustGate:
    return TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        policy=Review(),
        passthrough=["messages.text"],
    )


def test_review_respond_on_a_failed_tool_call_removes_the_call() -> None:
    """A person answers in the model's place: the text is replaced, and the failed call
    it answers is removed (it used to run)."""
    recorder = Recorder()
    a = attack(
        _refund_graph(recorder, [{"name": "refund", "args": ARGS, "id": "c1"}], "Refunding."),
        _review_gate(),
        downstream=("after", "tools"),
        recorder=recorder,
        answer=lambda value: {"type": "respond", "message": "No refund today.", "by": "ana"},
    )
    a.assert_blocked()
    assert LIE not in _ran(recorder)
    final = a.runs["stream"].final["messages"]
    assert any("No refund today." in str(m.content) for m in final)


def test_review_in_langchains_decision_list_applies_per_call() -> None:
    """Two failed calls, ``{"decisions": [approve, reject]}``: only the approved call
    runs (every decision used to be read as the first)."""
    recorder = Recorder()
    lie2 = f"{LIE}-B"
    calls = [
        {"name": "refund", "args": {"reference": f"{LIE}-A"}, "id": "c1"},
        {"name": "refund", "args": {"reference": lie2}, "id": "c2"},
    ]

    payloads: list[Any] = []

    def answer(value: Any) -> Any:
        payloads.append(value)
        return {"decisions": [{"type": "approve"}, {"type": "reject", "message": "no"}]}

    app = trustgate.guard(_refund_graph(recorder, calls), {"agent": _review_gate()}).compile(
        checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "per-call"}}
    app.invoke({"messages": [HumanMessage("refund both")]}, config)
    state = app.get_state(config)
    (intr,) = state.tasks[0].interrupts
    assert [r["args"]["reference"] for r in intr.value["action_requests"]] == [f"{LIE}-A", lie2]
    app.invoke(Command(resume=answer(intr.value)), config)
    assert _ran(recorder) == [f"{LIE}-A"]  # approved as testimony; the rejected one never ran
    assert not find_lies(app.get_state(config).values["messages"], [lie2])


def test_review_decision_list_of_the_wrong_length_halts() -> None:
    recorder = Recorder()
    calls = [
        {"name": "refund", "args": {"reference": f"{LIE}-A"}, "id": "c1"},
        {"name": "refund", "args": {"reference": f"{LIE}-B"}, "id": "c2"},
    ]
    app = trustgate.guard(_refund_graph(recorder, calls), {"agent": _review_gate()}).compile(
        checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "short"}}
    app.invoke({"messages": [HumanMessage("refund both")]}, config)
    with pytest.raises(GateHalted) as halted:
        app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert "1 decision(s) for 2 reviewed" in halted.value.report.overrides[-1].reason
    assert recorder.tool_runs == []


# --- 4. a key written twice in one step is rewritten in every write ----------------------------


class N(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], operator.add]


def test_override_of_a_key_written_twice_rewrites_both_writes() -> None:
    def agent(state: N) -> Command[Any]:
        return Command(update=[("notes", [LIE_TEXT]), ("notes", [f"Also {LIE}."])])

    gate = TrustGate(
        "notes", reads=FromKey("notes"), verifiers=[CHECK], policy=Override("notes", ["[withheld]"])
    )
    a = attack(graph(agent, N), gate)
    a.assert_blocked()
    assert a.runs["stream"].final["notes"] == ["[withheld]"]


class D(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    draft: Annotated[str, operator.add]
    record: Any


class _LieRule(SentenceRule):
    name = "unsupported"
    code = "unsupported_claim"

    def check(self, sentence: DraftSentence) -> str | None:
        return "names a record no source has" if LIE in sentence.text else None


def test_redact_of_a_draft_written_in_two_sections_edits_the_section_with_the_lie() -> None:
    """``draft: Annotated[str, operator.add]`` written in two sections; the lie is in the
    first. Redact used to rewrite only the last write."""

    def agent(state: D) -> Command[Any]:
        return Command(
            update=[
                ("draft", f"## Cause\n\nThe outage followed {LIE}.\n"),
                ("draft", "## Impact\n\nCheckout was slow for an hour.\n"),
            ]
        )

    gate = TrustGate(
        "draft",
        reads=FromKey("draft"),
        policy=Redact(rules=[_LieRule()]),
        evidence=EvidenceSources(record=FromState_("record")),
    )
    record = Record.from_text("1 checkout was slow for an hour\n")
    a = attack(graph(agent, D), gate, inputs={"messages": [], "record": record})
    a.assert_blocked()
    final = a.runs["stream"].final["draft"]
    assert "Checkout was slow for an hour." in final and "Open question" in final


def FromState_(key: str) -> Any:
    from trustgate.verifiers.base import FromState

    return FromState(key)


# --- 5. a coerced claim is released as it was verified ---------------------------------------


class Decision(BaseModel):
    model_config = ConfigDict(extra="ignore")
    merge: bool


class M(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    decision: Any


def test_from_key_with_a_model_releases_the_value_it_verified() -> None:
    """The node writes ``{"merge": "false", "note": LIE}``; the verifier sees
    ``merge=False`` and no note; the router used to get the raw ``"false"`` (truthy)
    and the unverified note."""
    seen: list[Any] = []

    def agent(state: M) -> dict[str, Any]:
        return {"decision": {"merge": "false", "note": LIE_TEXT}}

    def merge_ok(claims: Any, evidence: Any) -> list[Finding]:
        return [Finding.ok("merge_ok")]

    g = StateGraph(M)
    g.add_node("agent", agent)
    g.add_node("after", lambda s: seen.append(s["decision"]) or {})
    g.add_edge(START, "agent")
    g.add_edge("agent", "after")
    g.add_edge("after", END)
    gate = TrustGate(
        "decision",
        reads=FromKey("decision", model=Decision),
        verifiers=[FunctionVerifier(merge_ok, name="merge_ok")],
    )
    a = attack(g, gate, inputs={"messages": []})
    a.assert_blocked()
    assert seen[-1] == {"merge": False}
    assert [o.kind for o in a.runs["stream"].reports[0].overrides] == ["coerced"]


# --- 6. two tool calls with one id --------------------------------------------------------------


def test_two_tool_calls_with_one_id_are_malformed_output() -> None:
    """A benign call and a fabricated one share an id: read by id, the fabricated one
    was never seen, the report said pass and the tool node ran both. This is the README
    quickstart's gate, unmodified."""
    recorder = Recorder()
    calls = [
        {"name": "refund", "args": HONEST_ARGS, "id": "c1"},
        {"name": "refund", "args": ARGS, "id": "c1"},
    ]

    def honest_only(claims: Any, evidence: Any) -> list[Finding]:
        # checks the first call with this id only, as an id-keyed check would
        by_id = {c["id"]: c for c in reversed(claims)}
        return [
            Finding.ok("refs", subject=cid)
            if "ticket" in str(c["args"])
            else Finding.failed("refs", "unknown", "no such reference", subject=cid)
            for cid, c in by_id.items()
        ]

    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(tools=["refund"]),
        verifiers=[FunctionVerifier(honest_only, name="refs")],
        policy=BlockToolCalls(),
        passthrough=["messages.text"],
    )
    a = attack(
        _refund_graph(recorder, calls), gate, downstream=("after", "tools"), recorder=recorder
    )
    a.assert_blocked()
    assert LIE not in _ran(recorder)
    codes = {f.code for r in a.runs["stream"].reports for f in r.failed}
    assert "malformed_output" in codes


# --- 7. a write equal to the state is still a write to a reducer -------------------------------


class C(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    refunds: Annotated[int, operator.add]


def test_a_reducer_write_equal_to_the_state_is_a_part() -> None:
    """An undeclared ``operator.add`` counter written its current value: the counter
    doubles downstream. It used to be no part at all (equal to the input)."""

    def agent(state: C) -> dict[str, Any]:
        return {"messages": [AIMessage(TRUE_TEXT)], "refunds": state.get("refunds", 0)}

    app = trustgate.guard(graph(agent, C), {"agent": TrustGateText()}).compile()
    with pytest.raises(GateHalted, match="refunds"):
        app.invoke({"messages": [HumanMessage("x")], "refunds": 5})
    declared = trustgate.guard(
        graph(agent, C), {"agent": TrustGateText(passthrough=["refunds"])}
    ).compile()
    assert declared.invoke({"messages": [HumanMessage("x")], "refunds": 5})["refunds"] == 10


def TrustGateText(passthrough: Sequence[str] = ()) -> TrustGate:
    return TrustGate("text", reads=LastAIText(), verifiers=[CHECK], passthrough=list(passthrough))


def test_a_plain_key_written_its_own_value_is_no_part() -> None:
    class P(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        topic: str

    def agent(state: P) -> dict[str, Any]:
        return {"messages": [AIMessage(TRUE_TEXT)], "topic": state["topic"]}

    app = trustgate.guard(graph(agent, P), {"agent": TrustGateText()}).compile()
    assert app.invoke({"messages": [HumanMessage("x")], "topic": "t"})["topic"] == "t"


# --- 8. an overwrite that drops or reorders history ----------------------------------------------


def test_an_overwrite_that_drops_a_message_is_held() -> None:
    def agent(state: S) -> dict[str, Any]:
        kept = [m for m in state["messages"] if LIE not in str(m.content)]
        return {"messages": Overwrite([*kept, AIMessage(TRUE_TEXT)])}

    inputs = {"messages": [HumanMessage(f"Remember {LIE}."), AIMessage("Noted.", id="a0")]}
    a = attack(graph(agent), TrustGateText(passthrough=["messages.text"]), inputs=inputs)
    # the lie is in the input, so what the attack proves is the halt: the removal from
    # history is output no gate read or declared
    assert a.halted
    report = a.runs["stream"].reports[0]
    assert report.accounting.get("messages.overwrite") == "held"


def test_an_overwrite_that_puts_an_executed_call_last_again_is_held() -> None:
    """Reordering history so an already-executed tool call is last again makes the tool
    node run it a second time."""
    recorder = Recorder()

    @tool
    def refund(reference: str) -> str:
        """Pay out a refund."""
        recorder.tool_ran("refund", reference=reference)
        return "refunded"

    call = AIMessage("", tool_calls=[{"name": "refund", "args": HONEST_ARGS, "id": "c1"}], id="a1")

    def agent(state: S) -> dict[str, Any]:
        msgs = list(state["messages"])
        if not any(isinstance(m, ToolMessage) for m in msgs):
            return {"messages": [call]}
        if len(recorder.tool_runs) == 1:  # move the executed call to the end
            others = [m for m in msgs if m.id != "a1"]
            return {"messages": Overwrite([*others, call])}
        return {"messages": [AIMessage(TRUE_TEXT)]}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([refund]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    g.add_edge("tools", "agent")
    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        passthrough=["messages.text"],
    )
    app = trustgate.guard(g, {"agent": gate}).compile()
    with pytest.raises(GateHalted, match=r"messages\.overwrite"):
        app.invoke({"messages": [HumanMessage("refund ticket 12")]})
    assert len(recorder.tool_runs) == 1


# --- 9. one permissive gate does not switch off another -----------------------------------------


class K(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    info: str


def test_a_permissive_gate_beside_a_strict_one_releases_nothing_the_strict_one_holds() -> None:
    def agent(state: K, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("facts",), "k", {"fact": LIE_TEXT})
        return {"messages": [AIMessage(TRUE_TEXT)], "info": LIE_TEXT}

    gates = [
        TrustGate("everything", passthrough="*"),
        TrustGate("text", reads=LastAIText(), verifiers=[CHECK]),
    ]
    a = attack(graph(agent, K), gates, store_factory=InMemoryStore)
    a.assert_blocked()
    assert a.halted
    held = {f.subject for f in a.runs["stream"].reports[0].failed}
    assert {"info", "store[0]"} <= held


# --- 10. an accumulated chunk is an ai message ----------------------------------------------------


def test_an_accumulated_ai_message_chunk_is_matched_by_ai_declarations() -> None:
    """An honest node returns the ``AIMessageChunk`` it accumulated from a stream; a
    declaration of ``messages.ai.tool_calls`` must cover it (it halted the honest run)."""

    def agent(state: S) -> dict[str, Any]:
        chunk = AIMessageChunk(content="The refund ")
        chunk = chunk + AIMessageChunk(
            content="is not approved yet.",
            tool_call_chunks=[{"name": "lookup", "args": "{}", "id": "t1", "index": 0}],
        )
        return {"messages": [chunk]}

    gate = TrustGate(
        "text", reads=LastAIText(), verifiers=[CHECK], passthrough=["messages.ai.tool_calls"]
    )
    app = trustgate.guard(graph(agent), {"agent": gate}).compile()
    out = app.invoke({"messages": [HumanMessage("x")]})
    plain = graph(agent).compile().invoke({"messages": [HumanMessage("x")]})
    assert out["messages"][-1].text == plain["messages"][-1].text == TRUE_TEXT


def test_halt_is_still_the_default_for_failed_tool_calls() -> None:
    """Sanity: the strict gate on its own still halts a lie (the controls above are not
    passing because nothing is checked)."""
    recorder = Recorder()
    a = attack(
        _refund_graph(recorder, [{"name": "refund", "args": ARGS, "id": "c1"}]),
        TrustGate(
            "calls",
            reads=ToolCallArgs(),
            verifiers=[CHECK],
            policy=Halt(),
            passthrough=["messages.text"],
        ),
        downstream=("after", "tools"),
        recorder=recorder,
    )
    a.assert_blocked()
    assert a.halted


# --- a blocked handoff, then the honest one -------------------------------------------------------


def test_block_tool_calls_on_an_agent_whose_handoff_raises_to_the_parent() -> None:
    """The fabricated handoff is blocked and the model answers again with an honest one:
    that handoff is a parent command, and the blocked call and the error the model was
    told must go into it (they crashed the run: ``'list' object has no attribute
    'graph'``)."""
    from langchain.agents import create_agent

    from trustgate.testing import lying_model

    @tool
    def handoff(
        note: str,
        state: Annotated[dict[str, Any], InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
    ) -> Command[Any]:
        """Hand the case to the payments desk with a note."""
        told = ToolMessage(f"handed off: {note}", tool_call_id=tool_call_id)
        return Command(
            graph=Command.PARENT,
            goto="desk",
            update={"messages": [*state["messages"], told]},
        )

    model = lying_model(
        AIMessage("", tool_calls=[{"name": "handoff", "args": {"note": LIE_TEXT}, "id": "h1"}]),
        AIMessage("", tool_calls=[{"name": "handoff", "args": {"note": TRUE_TEXT}, "id": "h2"}]),
        repeat_last=True,
    )
    agent = create_agent(model, [handoff])
    reached: list[list[Any]] = []

    top = StateGraph(S)
    top.add_node("agent", agent, destinations=("desk",))
    top.add_node("desk", lambda s: reached.append(list(s["messages"])) or {})
    top.add_edge(START, "agent")
    top.add_edge("desk", END)
    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        policy=BlockToolCalls(),
        passthrough=["messages.text", "messages.tool.text", "goto"],
    )
    app = trustgate.guard(top, {"agent": gate}).compile(checkpointer=InMemorySaver())
    out = app.invoke(
        {"messages": [HumanMessage("refund?")]}, {"configurable": {"thread_id": "handoff"}}
    )
    assert reached, "the honest handoff reached the desk"
    texts = [str(m.content) for m in out["messages"]]
    assert any("Tool call blocked by trustgate" in t for t in texts)
    assert any(TRUE_TEXT in t for t in texts)
    assert not find_lies(out["messages"], [LIE])
