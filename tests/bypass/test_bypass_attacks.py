"""Attacks on the gate: every way a guarded node could get model output past its gate.

Each attack is a small graph whose guarded node (``agent``) emits a lie (``LIE``) in one
particular way, with a gate that reads the node's output the way a user would set it up
and a verifier that fails on the lie. The run is watched through the windows of
``_bypass_support`` (streams in every mode, state at every depth, history, checkpoint
rows, downstream inputs, tool executions, the store): the lie must appear nowhere but in
the audit record. Every attack is first run unguarded, and the same windows must show
the lie there (``attack()`` asserts it), so a passing attack test is a gate that stopped
something real.

Where the design deliberately lets something through, the test asserts exactly that and
says why (``update_state(as_node=...)``, a person approving a review).
"""

from __future__ import annotations

import asyncio
import copy
import json
import operator
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import pytest
from _bypass_support import (
    ALL_MODES,
    LieNotBlocked,
    Observation,
    Run,
    find_lies,
    normalise,
    observe,
    observe_async,
)
from _bypass_support import see_recorder as _see_recorder
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.ui import AnyUIMessage, ui_message_reducer
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Overwrite, Send
from pydantic import BaseModel
from shapes import Recorder
from typing_extensions import TypedDict

import trustgate
from trustgate import Cut, Finding, TrustGate
from trustgate.errors import GateHalted
from trustgate.policies import BlockToolCalls, Caveat, Halt, Override, Redact, Rerender, Review
from trustgate.readers import FromKey, LastAIText, StreamWrites, ToolCallArgs
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"
"""Text only the lie contains: an invented record the model cites."""
LIES = (LIE,)
LIE_TEXT = f"The refund was approved, see {LIE}."
TRUE_TEXT = "The refund is not approved yet."


# --- the state, the gates, the harness ------------------------------------------------------


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], operator.add]
    verdict: str
    ui: Annotated[Sequence[AnyUIMessage], ui_message_reducer]


def lie_check(claims: Any, evidence: Any) -> list[Finding]:
    """Fails on the lie wherever it is in the claims (one finding per tool call, with
    the call id as subject, when the claims are tool calls)."""
    if (
        isinstance(claims, list)
        and claims
        and all(isinstance(c, dict) and "args" in c for c in claims)
    ):
        return [
            Finding.failed(
                "lie_check", "unsupported", "names a record no source has", subject=str(c.get("id"))
            )
            if find_lies(c, LIES)
            else Finding.ok("lie_check", subject=str(c.get("id")))
            for c in claims
        ]
    if find_lies(claims, LIES):
        return [
            Finding.failed(
                "lie_check",
                "unsupported",
                "names a record no source has",
                proposals=[Cut(text=t) for t in [LIE_TEXT]],
            )
        ]
    return [Finding.ok("lie_check")]


CHECK = FunctionVerifier(lie_check, name="lie_check")


def text_gate(policy: Any = None, passthrough: Sequence[str] = (), name: str = "text") -> TrustGate:
    return TrustGate(
        name,
        reads=LastAIText(),
        verifiers=[CHECK],
        policy=policy or Halt(),
        passthrough=list(passthrough),
    )


def notes_gate(policy: Any = None, passthrough: Sequence[str] = ()) -> TrustGate:
    return TrustGate(
        "notes",
        reads=FromKey("notes"),
        verifiers=[CHECK],
        policy=policy or Halt(),
        passthrough=list(passthrough),
    )


def calls_gate(policy: Any = None, passthrough: Sequence[str] = ("messages.text",)) -> TrustGate:
    return TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        policy=policy or BlockToolCalls(then=Halt()),
        passthrough=list(passthrough),
    )


def graph(node: Callable[..., Any], state: Any = S, *, tools: Sequence[Any] = ()) -> StateGraph:
    """START → agent → (tools →) after → END; ``after`` is the downstream whose input
    must never carry the lie."""
    g = StateGraph(state)
    g.add_node("agent", node)
    g.add_node("after", lambda s: {})
    g.add_edge(START, "agent")
    if tools:
        g.add_node("tools", ToolNode(list(tools)))
        g.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "after"})
        g.add_edge("tools", "after")
    else:
        g.add_edge("agent", "after")
    g.add_edge("after", END)
    return g


@dataclass
class Attack:
    """The observations of one attack: unguarded (the control), then guarded per way."""

    control: Observation
    allow: tuple[str, ...] = ()
    runs: dict[str, Observation] = field(default_factory=dict)
    apps: dict[str, Any] = field(default_factory=dict)

    def assert_blocked(self) -> None:
        failures = []
        for way, obs in self.runs.items():
            try:
                obs.assert_blocked(allow=[f"{way}:{c}" for c in self.allow])
            except LieNotBlocked as exc:
                failures.append(f"[{way}] {exc}")
        if failures:
            raise LieNotBlocked("\n".join(failures))

    @property
    def halted(self) -> bool:
        return all(o.halted is not None for o in self.runs.values())

    def decisions(self, way: str = "stream") -> list[str]:
        return [r.decision for r in self.runs[way].reports]


def _see_store(obs: Observation, store: Any) -> None:
    if store is None:
        return
    for ns in store.list_namespaces():
        obs.see("store", [item.value for item in store.search(ns)])


def _watch(
    app: Any,
    inputs: Any,
    way: str,
    recorder: Recorder,
    *,
    context: Any = None,
    answer: Callable[[Any], Any] | None = None,
    downstream: Sequence[str] = ("after",),
    store: Any = None,
) -> Observation:
    config: RunnableConfig = {
        "configurable": {"thread_id": f"attack-{way}"},
        "callbacks": [recorder],
    }
    run = Run(
        app=app, inputs=inputs, config=dict(config), lies=LIES, context=context, answer=answer
    )
    recorder.reset()
    flat = way.endswith("-flat")
    how = way.removesuffix("-flat")
    if how == "stream":
        obs = observe(run, "stream", subgraphs=not flat)
    else:
        obs = asyncio.run(observe_async(run, how, subgraphs=not flat))
    _see_recorder(obs, recorder, downstream)
    _see_store(obs, store)
    return obs


def attack(
    builder: StateGraph,
    gates: TrustGate | list[TrustGate],
    inputs: Any = None,
    *,
    node: str = "agent",
    ways: Sequence[str] = ("stream", "astream"),
    context: Any = None,
    answer: Callable[[Any], Any] | None = None,
    downstream: Sequence[str] = ("after",),
    store_factory: Callable[[], Any] | None = None,
    compile_kwargs: dict[str, Any] | None = None,
    recorder: Recorder | None = None,
    allow: Sequence[str] = (),
) -> Attack:
    """Run the attack unguarded (the lie must show somewhere: the control), then guarded
    each way."""
    inputs = {"messages": [HumanMessage("Was the refund approved?")]} if inputs is None else inputs
    kwargs = dict(compile_kwargs or {})
    recorder = recorder or Recorder()
    store = store_factory() if store_factory else None
    plain = builder.compile(checkpointer=InMemorySaver(), store=store, **kwargs)
    # every run gets its own copy of the inputs: an unguarded node that edits its input in
    # place would otherwise plant the lie in the guarded runs' input
    control = _watch(
        plain,
        copy.deepcopy(inputs),
        ways[0],
        recorder,
        context=context,
        answer=answer,
        downstream=downstream,
        store=store,
    )
    assert control.hits, "unguarded, the attack never showed the lie: it proves nothing"
    result = Attack(control, allow=tuple(allow))
    for way in ways:
        store = store_factory() if store_factory else None
        app = trustgate.guard(builder, {node: gates}).compile(
            checkpointer=InMemorySaver(), store=store, **kwargs
        )
        result.apps[way] = app
        result.runs[way] = _watch(
            app,
            copy.deepcopy(inputs),
            way,
            recorder,
            context=context,
            answer=answer,
            downstream=downstream,
            store=store,
        )
    return result


# --- 1. what the node returns: every shape LangGraph accepts ---------------------------------


def test_repeated_writes_to_a_reducer_key_in_one_command() -> None:
    """``Command(update=[("notes", lie), ("notes", truth)])``: LangGraph applies both
    writes to a reducer key; a gate reading the key must see both."""

    def agent(state: S) -> Command[Any]:
        return Command(update=[("notes", [LIE_TEXT]), ("notes", [TRUE_TEXT])])

    a = attack(graph(agent), notes_gate())
    a.assert_blocked()
    assert a.halted


def test_repeated_message_writes_in_one_command() -> None:
    def agent(state: S) -> Command[Any]:
        return Command(
            update=[("messages", [AIMessage(LIE_TEXT)]), ("messages", [AIMessage(TRUE_TEXT)])]
        )

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


def test_list_of_commands_each_writing_the_key() -> None:
    def agent(state: S) -> list[Any]:
        return [Command(update={"notes": [LIE_TEXT]}), Command(update={"notes": [TRUE_TEXT]})]

    a = attack(graph(agent), notes_gate())
    a.assert_blocked()
    assert a.halted


def test_list_of_a_command_and_a_dict() -> None:
    def agent(state: S) -> list[Any]:
        return [Command(update={"notes": [TRUE_TEXT]}), {"notes": [LIE_TEXT]}]

    a = attack(graph(agent), notes_gate())
    a.assert_blocked()
    assert a.halted


class PNotes(BaseModel):
    notes: list[str] = []


def test_list_of_a_command_and_a_state_object() -> None:
    """LangGraph reads an annotated object inside a list of commands as more writes
    (``_get_updates`` recurses); the gate must read them too."""

    def agent(state: S) -> list[Any]:
        return [Command(update={"notes": [TRUE_TEXT]}), PNotes(notes=[LIE_TEXT])]

    a = attack(graph(agent), notes_gate())
    a.assert_blocked()
    assert a.halted


def test_overwrite_wrapped_messages() -> None:
    def agent(state: S) -> dict[str, Any]:
        return {"messages": Overwrite([*state["messages"], AIMessage(LIE_TEXT)])}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


@pytest.mark.parametrize(
    "form",
    [
        {"role": "assistant", "content": LIE_TEXT},
        {"type": "ai", "content": LIE_TEXT},
        ("ai", LIE_TEXT),
        ("assistant", LIE_TEXT),
        LIE_TEXT,
        [{"type": "text", "text": LIE_TEXT}],
    ],
    ids=["openai-dict", "lc-dict", "tuple-ai", "tuple-assistant", "str", "blocks"],
)
def test_messages_in_every_form(form: Any) -> None:
    def agent(state: S) -> dict[str, Any]:
        value = AIMessage(content=form) if isinstance(form, list) else form
        return {"messages": [value]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


def test_a_single_message_not_in_a_list() -> None:
    def agent(state: S) -> dict[str, Any]:
        return {"messages": {"role": "assistant", "content": LIE_TEXT}}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


@dataclass
class DState:
    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    notes: Annotated[list[str], operator.add] = field(default_factory=list)


class PState(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages] = []
    notes: Annotated[list[str], operator.add] = []


@pytest.mark.parametrize("schema", [DState, PState], ids=["dataclass", "pydantic"])
def test_state_object_returned(schema: Any) -> None:
    def agent(state: Any) -> Any:
        return schema(messages=[AIMessage(TRUE_TEXT)], notes=[LIE_TEXT])

    g = graph(agent, schema)
    a = attack(g, text_gate(), {"messages": [HumanMessage("go")]})
    a.assert_blocked()
    assert a.halted


def test_messages_under_another_add_messages_key() -> None:
    def agent(state: Two) -> dict[str, Any]:
        return {"messages": [AIMessage(TRUE_TEXT)], "scratch": [AIMessage(LIE_TEXT)]}

    a = attack(graph(agent, Two), text_gate())
    a.assert_blocked()
    assert a.halted


def my_messages(left: list[Any], right: Any) -> list[Any]:
    return add_messages(left, right)  # type: ignore[arg-type,return-value]


class Custom(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    log: Annotated[list[AnyMessage], my_messages]


class Two(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    scratch: Annotated[list[AnyMessage], add_messages]


def test_messages_under_a_custom_reducer_that_calls_add_messages() -> None:
    def agent(state: Custom) -> dict[str, Any]:
        return {"messages": [AIMessage(TRUE_TEXT)], "log": ("ai", LIE_TEXT)}

    a = attack(graph(agent, Custom), text_gate())
    a.assert_blocked()
    assert a.halted


def test_a_graph_whose_state_is_one_root_value() -> None:
    """A ``StateGraph(str)``: the node returns a bare string, the whole state."""

    def agent(state: str) -> str:
        return LIE_TEXT

    g = StateGraph(str)
    g.add_node("agent", agent)
    g.add_node("after", lambda s: s)
    g.add_edge(START, "agent")
    g.add_edge("agent", "after")
    gate = TrustGate("root", reads=FromKey("__root__"), verifiers=[CHECK])
    a = attack(g, gate, "Was the refund approved?")
    a.assert_blocked()
    assert a.halted


# --- 2. message facets a reader may not look at ----------------------------------------------


def test_remove_message_carrying_the_lie() -> None:
    """A removal is not a message, but a ``RemoveMessage`` is one, with fields: the
    update (and so the updates stream and the task's checkpoint writes) carries them."""

    def agent(state: S) -> dict[str, Any]:
        first = state["messages"][0]
        return {
            "messages": [
                RemoveMessage(id=first.id or "", additional_kwargs={"why": LIE_TEXT}),
                AIMessage(TRUE_TEXT),
            ]
        }

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


def test_remove_message_declared_as_a_removal() -> None:
    """The user lets removals through (``messages.remove``: the node trims history);
    what the removal carries besides its id is still the node's output."""

    def agent(state: S) -> dict[str, Any]:
        first = state["messages"][0]
        return {
            "messages": [
                RemoveMessage(id=first.id or "", additional_kwargs={"why": LIE_TEXT}),
                AIMessage(TRUE_TEXT),
            ]
        }

    a = attack(graph(agent), text_gate(passthrough=["messages.remove"]))
    a.assert_blocked()


@pytest.mark.parametrize(
    "message",
    [
        AIMessage(TRUE_TEXT, additional_kwargs={"reasoning_content": LIE_TEXT}),
        AIMessage(
            [{"type": "reasoning", "reasoning": LIE_TEXT}, {"type": "text", "text": TRUE_TEXT}]
        ),
        AIMessage([{"type": "text", "text": TRUE_TEXT, "annotations": [{"title": LIE}]}]),
        AIMessage(
            [{"type": "text", "text": TRUE_TEXT}, {"type": "image", "url": f"https://x/{LIE}"}]
        ),
    ],
    ids=["reasoning-kwargs", "reasoning-block", "text-annotations", "other-block"],
)
def test_content_beyond_the_text(message: AIMessage) -> None:
    def agent(state: S) -> dict[str, Any]:
        return {"messages": [message.model_copy()]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


@pytest.mark.parametrize(
    "message",
    [
        AIMessage(TRUE_TEXT, response_metadata={"citations": [f"https://records.example/{LIE}"]}),
    ],
    ids=["response-metadata-citations"],
)
def test_message_fields_the_facets_skip(message: AIMessage) -> None:
    """Providers put model-produced content in ``response_metadata`` (search citations,
    grounding); it reaches state, checkpoints and streams with the message."""

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [message.model_copy()]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()


def test_tool_message_artifact() -> None:
    """An agent-as-tool returns its answer as the tool message's artifact."""

    def agent(state: S) -> dict[str, Any]:
        return {
            "messages": [
                AIMessage(TRUE_TEXT),
                ToolMessage("done", tool_call_id="t1", artifact={"answer": LIE_TEXT}),
            ]
        }

    a = attack(graph(agent), text_gate(passthrough=["messages.text"]))
    a.assert_blocked()


# --- 3. tool calls in every place a provider puts them ---------------------------------------


def _tool_graph(message: Callable[[], Any], recorder: Recorder) -> StateGraph:
    """The agent asks for a refund against a reference once; the tool records every
    real execution (``tool_runs`` in the observation)."""

    @tool
    def refund(reference: str) -> str:
        """Pay out a refund against a ledger reference."""
        recorder.tool_ran("refund", reference=reference)
        return "refunded"

    def agent(state: S) -> dict[str, Any]:
        if any(isinstance(m, ToolMessage) for m in state["messages"]):
            return {"messages": [AIMessage(TRUE_TEXT)]}
        return {"messages": [message()]}

    return graph(agent, tools=[refund])


_ARGS = {"reference": LIE}


@pytest.mark.parametrize(
    "message",
    [
        lambda: {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "refund", "arguments": json.dumps(_ARGS)},
                }
            ],
        },
        lambda: AIMessage(
            [
                {"type": "text", "text": "Refunding."},
                {"type": "tool_use", "id": "c1", "name": "refund", "input": _ARGS},
            ],
            tool_calls=[{"name": "refund", "args": _ARGS, "id": "c1"}],
        ),
        lambda: AIMessage(
            "",
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "refund", "arguments": json.dumps(_ARGS)},
                    }
                ]
            },
            tool_calls=[{"name": "refund", "args": _ARGS, "id": "c1"}],
        ),
        lambda: AIMessage("", tool_calls=[{"name": "refund", "args": _ARGS, "id": "c1"}]),
    ],
    ids=["openai-dict", "anthropic-tool-use", "raw-kwargs", "tool-calls"],
)
def test_tool_calls_blocked_in_every_form(message: Callable[[], Any]) -> None:
    """A fabricated refund call, as each provider shapes it, never runs."""
    recorder = Recorder()
    a = attack(
        _tool_graph(message, recorder),
        calls_gate(),
        downstream=("after", "tools"),
        recorder=recorder,
    )
    a.assert_blocked()
    assert a.control.hits.get("tool_runs"), "unguarded, the refund runs with the lie"


def test_tool_use_block_without_a_parsed_tool_call() -> None:
    """A provider message whose ``tool_use`` block was not parsed into ``tool_calls``:
    no tool runs, but the block carries the arguments into state."""

    def message() -> AIMessage:
        return AIMessage(
            [
                {"type": "text", "text": "Refunding."},
                {"type": "tool_use", "id": "c9", "name": "refund", "input": _ARGS},
            ]
        )

    recorder = Recorder()
    a = attack(
        _tool_graph(message, recorder),
        calls_gate(BlockToolCalls()),
        downstream=("after", "tools"),
        recorder=recorder,
    )
    a.assert_blocked()


def test_legacy_function_call_without_an_id_under_override() -> None:
    """``additional_kwargs["function_call"]`` has no id. ``Override`` on a tool-call gate
    removes the failed calls by id: one without an id must go too (or the crossing
    halts), never be released."""

    def agent(state: S) -> dict[str, Any]:
        return {
            "messages": [
                AIMessage(
                    "",
                    additional_kwargs={
                        "function_call": {"name": "refund", "arguments": json.dumps(_ARGS)}
                    },
                )
            ],
            "verdict": "approve",
        }

    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        policy=Override("verdict", "reject"),
        passthrough=["messages.text", "verdict"],
    )
    a = attack(graph(agent), gate)
    a.assert_blocked()


def test_override_of_a_tool_call_claim_rewrites_the_call() -> None:
    """``Override`` on a gate that read tool calls removes the failed call too."""

    def agent(state: S) -> dict[str, Any]:
        return {
            "messages": [AIMessage("", tool_calls=[{"name": "refund", "args": _ARGS, "id": "c1"}])],
            "verdict": "approve",
        }

    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[CHECK],
        policy=Override("verdict", "reject"),
        passthrough=["verdict"],
    )
    a = attack(graph(agent), gate)
    a.assert_blocked()
    assert a.runs["stream"].halted is None
    assert a.runs["stream"].final["verdict"] == "reject"


# --- 4. routes, fan-out and handoffs ---------------------------------------------------------


def test_send_fan_out_with_a_lying_payload() -> None:
    """The node's update is honest; the argument it sends a worker is not."""

    def agent(state: S) -> Command[Any]:
        return Command(
            update={"messages": [AIMessage(TRUE_TEXT)]},
            goto=[Send("worker", {"notes": [LIE_TEXT]})],
        )

    g = StateGraph(S)
    g.add_node("agent", agent, destinations=("worker",))
    g.add_node("worker", lambda arg: {"notes": list(arg["notes"])})
    g.add_edge(START, "agent")
    a = attack(g, text_gate(passthrough=["goto"]), downstream=("worker",))
    a.assert_blocked()
    assert a.halted


def _depth_two(leaf_update: dict[str, Any]) -> StateGraph:
    """top: agent (A) → after; A: mid (B) ; B: leaf raises a handoff to A's ``hop``,
    which hands off to the top graph's ``after``."""

    def leaf(state: S) -> Command[Any]:
        return Command(graph=Command.PARENT, goto="hop", update={"notes": ["leaf"]})

    b = StateGraph(S)
    b.add_node("leaf", leaf)
    b.add_edge(START, "leaf")

    def hop(state: S) -> Command[Any]:
        return Command(graph=Command.PARENT, goto="after", update=leaf_update)

    a = StateGraph(S)
    a.add_node("mid", b.compile())
    a.add_node("hop", hop)
    a.add_edge(START, "mid")

    top = StateGraph(S)
    top.add_node("agent", a.compile(), destinations=("after",))
    top.add_node("after", lambda s: {})
    top.add_edge(START, "agent")
    return top


def test_parent_command_from_depth_two() -> None:
    """A handoff raised two subgraphs deep reaches the top graph through the guarded
    node as a parent command."""
    g = _depth_two({"messages": [AIMessage(LIE_TEXT)]})
    a = attack(g, text_gate(passthrough=["goto", "notes"]))
    a.assert_blocked()
    assert a.halted


def test_handoff_from_a_tool_inside_an_agent_inside_a_subgraph() -> None:
    from langchain.agents import create_agent

    from trustgate.testing import lying_model

    @tool
    def escalate(note: str) -> Command[Any]:
        """Hand the case to the payments desk with a note."""
        return Command(graph=Command.PARENT, goto="desk", update={"messages": [AIMessage(note)]})

    model = lying_model(
        AIMessage("", tool_calls=[{"name": "escalate", "args": {"note": LIE_TEXT}, "id": "e1"}]),
        repeat_last=True,
    )
    agent = create_agent(model, [escalate])

    def desk(state: S) -> Command[Any]:
        return Command(
            graph=Command.PARENT, goto="after", update={"messages": [state["messages"][-1]]}
        )

    team = StateGraph(S)
    team.add_node("agent", agent)
    team.add_node("desk", desk)
    team.add_edge(START, "agent")

    top = StateGraph(S)
    top.add_node("team", team.compile(), destinations=("after",))
    top.add_node("after", lambda s: {})
    top.add_edge(START, "team")
    a = attack(
        top, text_gate(passthrough=["goto", "messages.tool_calls", "messages.text"]), node="team"
    )
    a.assert_blocked()
    assert a.halted


# --- 5. writes that do not go through the return value ---------------------------------------


def test_stream_writer_payload() -> None:
    from langgraph.config import get_stream_writer

    def agent(state: S) -> dict[str, Any]:
        get_stream_writer()({"progress": LIE_TEXT})
        return {"messages": [AIMessage(TRUE_TEXT)]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


def test_stream_writer_payload_read_and_refused() -> None:
    from langgraph.config import get_stream_writer

    def agent(state: S) -> dict[str, Any]:
        get_stream_writer()({"progress": LIE_TEXT})
        return {"messages": [AIMessage(TRUE_TEXT)]}

    progress = TrustGate("progress", reads=StreamWrites(), verifiers=[CHECK])
    a = attack(graph(agent), [text_gate(), progress])
    a.assert_blocked()
    assert a.halted


def test_stream_writer_injected_as_a_parameter() -> None:
    from langgraph.types import StreamWriter

    def agent(state: S, writer: StreamWriter) -> dict[str, Any]:
        writer({"progress": LIE_TEXT})
        return {"messages": [AIMessage(TRUE_TEXT)]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


def test_stream_writer_inside_a_guarded_subgraph() -> None:
    """A node inside a guarded subgraph writes to the stream writer; the subgraph's
    output is honest. The payload is the guarded node's output too."""
    from langgraph.config import get_stream_writer

    def inner(state: S) -> dict[str, Any]:
        get_stream_writer()({"progress": LIE_TEXT})
        return {"messages": [AIMessage(TRUE_TEXT)]}

    sub = StateGraph(S)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    a = attack(graph(sub.compile()), text_gate(passthrough=["messages.text"]))
    a.assert_blocked()


def test_intermediate_state_inside_a_guarded_subgraph() -> None:
    """Inside a guarded subgraph one node writes the lie and a later one replaces it;
    the subgraph's output is honest and passes. What the gate never saw must not be
    released with it (nested streams, the subgraph's checkpoints)."""

    def draft(state: S) -> dict[str, Any]:
        return {"verdict": LIE_TEXT}

    def fix(state: S) -> dict[str, Any]:
        return {"verdict": TRUE_TEXT}

    sub = StateGraph(S)
    sub.add_node("draft", draft)
    sub.add_node("fix", fix)
    sub.add_edge(START, "draft")
    sub.add_edge("draft", "fix")
    gate = TrustGate("verdict", reads=FromKey("verdict"), verifiers=[CHECK])
    a = attack(graph(sub.compile()), gate)
    a.assert_blocked()


def test_a_guarded_subgraphs_steps_stream_only_when_declared() -> None:
    """Nested stream events show states the gate never inspected: with ``subgraph``
    declared they stream as LangGraph streams them, without it only the node's
    verified output does."""

    def draft(state: S) -> dict[str, Any]:
        return {"verdict": TRUE_TEXT}

    sub = StateGraph(S)
    sub.add_node("draft", draft)
    sub.add_edge(START, "draft")

    def nested(passthrough: list[str]) -> list[Any]:
        gate = TrustGate(
            "verdict", reads=FromKey("verdict"), verifiers=[CHECK], passthrough=passthrough
        )
        app = trustgate.guard(graph(sub.compile()), {"agent": gate}).compile()
        items = app.stream(
            {"messages": [HumanMessage("go")]}, stream_mode="updates", subgraphs=True
        )
        return [data for ns, data in items if ns]

    plain = [
        data
        for ns, data in graph(sub.compile())
        .compile()
        .stream({"messages": [HumanMessage("go")]}, stream_mode="updates", subgraphs=True)
        if ns
    ]
    assert plain and nested(["subgraph"]) == plain
    assert nested([]) == []


def test_push_message_writes_state_during_the_run() -> None:
    """``push_message`` writes to the messages channel through the task's send function
    while the node runs, not through its return value."""
    from langgraph.graph.message import push_message

    def agent(state: S) -> dict[str, Any]:
        push_message(AIMessage(LIE_TEXT, id="pushed-1"))
        return {"messages": [AIMessage(TRUE_TEXT)]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()


def test_push_message_when_the_gate_halts() -> None:
    from langgraph.graph.message import push_message

    def agent(state: S) -> dict[str, Any]:
        push_message(AIMessage(LIE_TEXT, id="pushed-2"))
        return {"messages": [AIMessage(LIE_TEXT)]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


def test_push_ui_message_writes_the_ui_channel() -> None:
    """The UI event goes to the stream writer (which the gate holds; the user declared
    it passthrough) and, directly, into the ``ui`` state key, which nobody declared."""
    from langgraph.graph.ui import push_ui_message

    def agent(state: S) -> dict[str, Any]:
        push_ui_message("receipt", {"reference": LIE})
        return {"messages": [AIMessage(TRUE_TEXT)]}

    # the custom-stream event is the user's declared passthrough; the state write is not
    a = attack(graph(agent), text_gate(passthrough=["custom"]), allow=["custom"])
    a.assert_blocked()


def test_raw_send_from_the_config() -> None:
    from langgraph.config import get_config

    def agent(state: S) -> dict[str, Any]:
        get_config()["configurable"]["__pregel_send"]([("notes", [LIE_TEXT])])
        return {"messages": [AIMessage(TRUE_TEXT)]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()


def test_store_put_during_the_run() -> None:
    from langgraph.runtime import Runtime

    def agent(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("memories",), "refund", {"text": LIE_TEXT})
        return {"messages": [AIMessage(TRUE_TEXT)]}

    a = attack(graph(agent), text_gate(), store_factory=InMemoryStore)
    a.assert_blocked()


def test_a_node_that_writes_then_pauses_keeps_its_declared_writes() -> None:
    """A store write before the node's own ``interrupt()``: declared, it lands when the
    pause surfaces (as without the gate); undeclared, the pause halts and it is gone."""
    from langgraph.runtime import Runtime
    from langgraph.types import interrupt

    def agent(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("memories",), "asked", {"text": "asked the person"})
        interrupt("go on?")
        return {"messages": [AIMessage(TRUE_TEXT)]}

    inputs = {"messages": [HumanMessage("go")]}
    store = InMemoryStore()
    gate = text_gate(passthrough=["store", "interrupt"])
    app = trustgate.guard(graph(agent), {"agent": gate}).compile(
        checkpointer=InMemorySaver(), store=store
    )
    out = app.invoke(inputs, {"configurable": {"thread_id": "w1"}})
    assert "__interrupt__" in out and store.get(("memories",), "asked") is not None
    closed = InMemoryStore()
    app = trustgate.guard(graph(agent), {"agent": text_gate(passthrough=["interrupt"])}).compile(
        checkpointer=InMemorySaver(), store=closed
    )
    with pytest.raises(GateHalted):
        app.invoke(inputs, {"configurable": {"thread_id": "w2"}})
    assert closed.get(("memories",), "asked") is None


def test_store_put_when_the_gate_halts() -> None:
    from langgraph.runtime import Runtime

    def agent(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("memories",), "refund", {"text": LIE_TEXT})
        return {"messages": [AIMessage(LIE_TEXT)]}

    a = attack(graph(agent), text_gate(), store_factory=InMemoryStore)
    a.assert_blocked()
    assert a.halted


@pytest.mark.parametrize("way", ["sync", "async"])
def test_a_declared_store_write_lands_when_the_gate_releases(way: str) -> None:
    from langgraph.runtime import Runtime

    def agent(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("memories",), "refund", {"text": TRUE_TEXT})
        seen = runtime.store.get(("memories",), "refund")  # the node reads its own write
        assert seen is not None and seen.value == {"text": TRUE_TEXT}
        return {"messages": [AIMessage(TRUE_TEXT)]}

    store = InMemoryStore()
    gate = text_gate(passthrough=["store"])
    app = trustgate.guard(graph(agent), {"agent": gate}).compile(store=store)
    inputs = {"messages": [HumanMessage("go")]}
    if way == "sync":
        app.invoke(inputs)
    else:
        asyncio.run(app.ainvoke(inputs))
    item = store.get(("memories",), "refund")
    assert item is not None and item.value == {"text": TRUE_TEXT}
    undeclared = trustgate.guard(graph(agent), {"agent": text_gate()}).compile(
        store=InMemoryStore()
    )
    with pytest.raises(GateHalted, match="unverified_output"):
        undeclared.invoke(inputs)


def test_task_inside_the_guarded_node() -> None:
    """A functional-API ``@task`` called inside the node: its result is checkpointed
    as the task runs, before any gate decides."""
    from langgraph.func import task

    @task
    def draft(question: str) -> str:
        return LIE_TEXT

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(draft("q").result())]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()
    assert a.halted


@pytest.mark.parametrize("way", ["sync", "async"])
def test_tasks_inside_a_guarded_node_still_compute_its_answer(way: str) -> None:
    """Run in line, the node's tasks give it the same results: an honest node passes
    with the same final state as unguarded, sync and async."""
    from langgraph.func import task

    @task
    def shout(text: str) -> str:
        return text.upper()

    @task
    async def ashout(text: str) -> str:
        return text.upper()

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(shout(TRUE_TEXT).result())]}

    async def aagent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(await ashout(TRUE_TEXT))]}

    node = agent if way == "sync" else aagent
    check = FunctionVerifier(lambda claims, evidence: [Finding.ok("upper")], name="upper")
    gate = TrustGate("text", reads=LastAIText(), verifiers=[check])
    inputs = {"messages": [HumanMessage("go")]}
    apps = [graph(node).compile(), trustgate.guard(graph(node), {"agent": gate}).compile()]
    if way == "sync":
        plain, guarded = (app.invoke(copy.deepcopy(inputs)) for app in apps)
    else:
        plain, guarded = (asyncio.run(app.ainvoke(copy.deepcopy(inputs))) for app in apps)
    assert guarded["messages"][-1].text == TRUE_TEXT.upper() == plain["messages"][-1].text


def test_node_mutates_its_input_in_place() -> None:
    """The node edits a message it was given instead of returning a new one: the
    channel's object changes under the gate, downstream reads the edit."""

    def agent(state: S) -> dict[str, Any]:
        state["messages"][0].content = LIE_TEXT
        return {"messages": [AIMessage(TRUE_TEXT)]}

    a = attack(graph(agent), text_gate())
    a.assert_blocked()


class Section(BaseModel):
    name: str
    content: str = ""


class R(TypedDict, total=False):
    sections: list[Section]
    done: Annotated[list[Section], operator.add]


def test_node_mutates_an_object_shared_through_send() -> None:
    """The research shape's pattern: a worker fills in the section object it was sent,
    which is the same object the parent holds in its state."""

    def plan(state: R) -> Command[Any]:
        return Command(update={"sections": [Section(name="a")]})

    def fan(state: R) -> list[Send]:
        return [Send("worker", {"section": s}) for s in state["sections"]]

    def worker(arg: dict[str, Any]) -> dict[str, Any]:
        section = arg["section"]
        section.content = LIE_TEXT  # filled in place, then returned rewritten by a policy
        return {"done": [section]}

    g = StateGraph(R)
    g.add_node("plan", plan)
    g.add_node("worker", worker)
    g.add_node("after", lambda s: {})
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", fan, ["worker"])
    g.add_edge("worker", "after")
    gate = TrustGate("done", reads=FromKey("done"), verifiers=[CHECK], policy=Override("done", []))
    a = attack(g, gate, {"sections": []}, node="worker")
    a.assert_blocked()


def test_interrupt_payload_from_the_guarded_node() -> None:
    """The node shows a person what the model said through ``interrupt()`` before it
    returns: the payload is the node's output too."""
    from langgraph.types import interrupt

    def agent(state: S) -> dict[str, Any]:
        answer = interrupt({"question": f"Shall I pay against {LIE}?"})
        return {"messages": [AIMessage(TRUE_TEXT if answer else "No.")]}

    a = attack(graph(agent), text_gate(), answer=lambda v: None)
    a.assert_blocked()


def test_node_error_quoting_the_model() -> None:
    """A parse failure quotes the raw model output in the error; the error is kept
    with the task in the checkpoint and shown by the tasks/debug streams."""
    from langchain_core.exceptions import OutputParserException

    def agent(state: S) -> dict[str, Any]:
        raise OutputParserException(f"Invalid json output: {LIE_TEXT}")

    builder = graph(agent)
    recorder = Recorder()
    plain = builder.compile(checkpointer=InMemorySaver())
    app = trustgate.guard(builder, {"agent": text_gate()}).compile(checkpointer=InMemorySaver())
    for target in (plain, app):
        with pytest.raises(OutputParserException):
            _watch(target, {"messages": [HumanMessage("go")]}, "stream", recorder)
    obs = Observation(LIES)
    config: RunnableConfig = {"configurable": {"thread_id": "attack-stream"}}
    obs.see("final_state", app.get_state(config).values)
    obs.see("tasks", [t.error for t in app.get_state(config).tasks])
    for item in app.checkpointer.list(config):
        obs.see("checkpoint_rows", [item.checkpoint["channel_values"], item.pending_writes])
    assert not recorder.inputs_of("after")
    obs.assert_blocked()


def test_a_node_error_keeps_its_type_and_its_message_only_when_declared() -> None:
    def agent(state: S) -> dict[str, Any]:
        raise ValueError(f"bad output: {LIE_TEXT}")

    withheld = trustgate.guard(graph(agent), {"agent": text_gate()}).compile()
    with pytest.raises(ValueError, match="message withheld") as err:
        withheld.invoke({"messages": [HumanMessage("go")]})
    assert LIE not in str(err.value)
    kept = trustgate.guard(graph(agent), {"agent": text_gate(passthrough=["error"])}).compile()
    with pytest.raises(ValueError, match=LIE):
        kept.invoke({"messages": [HumanMessage("go")]})


def test_late_writes_after_the_gate_decided_are_never_released() -> None:
    """A thread the node started (in the node's context) writes to the stream after
    the node returned and its gate released it: nothing the gate did not see."""
    import contextvars

    from langgraph.config import get_stream_writer

    def build() -> tuple[StateGraph, threading.Event]:
        wrote = threading.Event()
        go = threading.Event()

        def agent(state: S) -> dict[str, Any]:
            writer = get_stream_writer()

            def later() -> None:
                go.wait(2)
                writer({"late": LIE_TEXT})
                wrote.set()

            ctx = contextvars.copy_context()
            threading.Thread(target=lambda: ctx.run(later), daemon=True).start()
            return {"messages": [AIMessage(TRUE_TEXT)]}

        def after(state: S) -> dict[str, Any]:
            go.set()
            wrote.wait(2)
            return {}

        g = StateGraph(S)
        g.add_node("agent", agent)
        g.add_node("after", after)
        g.add_edge(START, "agent")
        g.add_edge("agent", "after")
        return g, wrote

    plain, wrote = build()
    seen = list(
        plain.compile().stream({"messages": [HumanMessage("go")]}, stream_mode=["custom", "values"])
    )
    assert wrote.is_set() and find_lies(seen, LIES), "unguarded, the late write is streamed"
    guarded, wrote = build()
    app = trustgate.guard(guarded, {"agent": text_gate()}).compile()
    seen = list(app.stream({"messages": [HumanMessage("go")]}, stream_mode=["custom", "values"]))
    assert wrote.is_set()
    assert not find_lies(seen, LIES)


# --- 6. LangGraph mechanisms around the node -------------------------------------------------


def test_update_state_as_the_guarded_node_is_a_persons_write() -> None:
    """Deliberate: ``update_state(..., as_node="agent")`` is a person (or an operator's
    tool) writing state, not the node's model. It is applied exactly as LangGraph
    applies it, without a crossing, and the next node runs on it."""
    builder = graph(lambda s: {"messages": [AIMessage(TRUE_TEXT)]})
    app = trustgate.guard(builder, {"agent": text_gate()}).compile(
        checkpointer=InMemorySaver(), interrupt_before=["agent"]
    )
    plain = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["agent"])
    config: RunnableConfig = {"configurable": {"thread_id": "as-node"}}
    for target in (app, plain):
        target.invoke({"messages": [HumanMessage("go")]}, config)
        target.update_state(config, {"messages": [AIMessage(LIE_TEXT)]}, as_node="agent")
        target.invoke(None, config)
    assert find_lies(app.get_state(config).values, LIES)  # applied, as LangGraph does
    assert normalise(app.get_state(config).values) == normalise(plain.get_state(config).values)
    assert trustgate.reports(app, config) == []  # no crossing happened


def test_cache_never_replays_a_verdict() -> None:
    """The guarded node has a cache policy: the second run with the same input runs
    the node and its gate again (a cached write would skip the gate)."""
    from langgraph.cache.memory import InMemoryCache
    from langgraph.types import CachePolicy

    calls: list[str] = []

    def agent(state: S) -> dict[str, Any]:
        calls.append("agent")
        return {"messages": [AIMessage(LIE_TEXT)]}

    g = StateGraph(S)
    g.add_node("agent", agent, cache_policy=CachePolicy())
    g.add_node("after", lambda s: {})
    g.add_edge(START, "agent")
    g.add_edge("agent", "after")
    app = trustgate.guard(g, {"agent": text_gate()}).compile(
        checkpointer=InMemorySaver(), cache=InMemoryCache()
    )
    for n in range(2):
        config: RunnableConfig = {"configurable": {"thread_id": f"cache-{n}"}}
        with pytest.raises(GateHalted):
            app.invoke({"messages": [HumanMessage("same input")]}, config)
        assert not find_lies(app.get_state(config).values, LIES)
    assert calls == ["agent", "agent"]


def test_a_failed_attempt_before_a_retry_releases_nothing() -> None:
    """Attempt one streams the lie (tokens, the stream writer, a pushed message) and
    fails; the retry answers honestly. Only the retry's output may be seen."""
    from langgraph.config import get_stream_writer
    from langgraph.graph.message import push_message
    from langgraph.types import RetryPolicy

    from trustgate.testing import lying_model

    model = lying_model(LIE_TEXT, TRUE_TEXT)
    attempts: list[int] = []

    def agent(state: S) -> dict[str, Any]:
        attempts.append(1)
        reply = model.invoke(state["messages"])
        if len(attempts) % 2 == 1:
            get_stream_writer()({"progress": reply.text})
            push_message(AIMessage(reply.text, id=f"push-{len(attempts)}"))
            raise ConnectionError("the provider dropped the connection")
        return {"messages": [reply]}

    g = StateGraph(S)
    g.add_node(
        "agent", agent, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0, jitter=False)
    )
    g.add_node("after", lambda s: {})
    g.add_edge(START, "agent")
    g.add_edge("agent", "after")

    def reset() -> None:
        model.reset()
        attempts.clear()

    reset()
    plain = _watch(
        g.compile(checkpointer=InMemorySaver()),
        {"messages": [HumanMessage("go")]},
        "stream",
        Recorder(),
    )
    assert plain.hits, "unguarded, the failed attempt's stream shows the lie"
    for way in ("stream", "astream"):
        reset()
        app = trustgate.guard(g, {"agent": text_gate(passthrough=["custom"])}).compile(
            checkpointer=InMemorySaver()
        )
        obs = _watch(app, {"messages": [HumanMessage("go")]}, way, Recorder())
        obs.assert_blocked()
        assert obs.halted is None and len(attempts) == 2


def test_gate_chain_early_pass_later_rewrite_releases_only_the_rewrite() -> None:
    """The first gate passes the streamed answer, the second caveats it: the tokens
    streamed before the decision must not reach the consumer."""
    from trustgate.testing import lying_model

    model = lying_model(f"{TRUE_TEXT} {LIE_TEXT}", repeat_last=True)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def always_fine(claims: Any, evidence: Any) -> list[Finding]:
        return [Finding.ok("style")]

    first = TrustGate(
        "style", reads=LastAIText(), verifiers=[FunctionVerifier(always_fine, name="style")]
    )
    second = text_gate(Caveat(), name="facts")
    a = attack(graph(agent), [first, second], ways=("stream", "astream", "events"))
    a.assert_blocked()
    assert [r.decision for r in a.runs["stream"].reports] == ["pass", "caveated"]


def test_gate_chain_early_rewrite_later_halt() -> None:
    """The first gate rewrites one part, the second halts on another: nothing of the
    rewrite is released either."""

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(LIE_TEXT)], "verdict": LIE_TEXT}

    first = TrustGate(
        "verdict",
        reads=FromKey("verdict"),
        verifiers=[CHECK],
        policy=Override("verdict", "withheld"),
    )
    a = attack(graph(agent), [first, text_gate()])
    a.assert_blocked()
    assert a.halted


def test_parallel_tasks_one_lying_sibling() -> None:
    """Three ``Send`` tasks of the guarded node in one step, one lying: a halt keeps
    the step from finishing; an override rewrites only the lying task's write."""

    def fan(state: S) -> list[Send]:
        return [Send("agent", {"i": i}) for i in range(3)]

    def agent(arg: dict[str, int]) -> dict[str, Any]:
        return {"notes": [LIE_TEXT if arg["i"] == 1 else f"{TRUE_TEXT} ({arg['i']})"]}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_node("after", lambda s: {})
    g.add_conditional_edges(START, fan, ["agent"])
    g.add_edge("agent", "after")
    a = attack(g, notes_gate(), {"notes": []})
    a.assert_blocked()
    assert a.halted
    b = attack(g, notes_gate(Override("notes", ["withheld"])), {"notes": []})
    b.assert_blocked()
    assert sorted(b.runs["stream"].final["notes"])[-1] == "withheld"


def test_guarded_subgraph_whose_inner_node_interrupts() -> None:
    """Inside the guarded subgraph one node writes the lie, the next asks a person.
    While the run waits, nothing of the unverified subgraph output may show."""
    from langgraph.types import interrupt

    def draft(state: S) -> dict[str, Any]:
        return {"verdict": LIE_TEXT}

    def ask(state: S) -> dict[str, Any]:
        interrupt("shall I go on?")
        return {}

    sub = StateGraph(S)
    sub.add_node("draft", draft)
    sub.add_node("ask", ask)
    sub.add_edge(START, "draft")
    sub.add_edge("draft", "ask")
    gate = TrustGate("verdict", reads=FromKey("verdict"), verifiers=[CHECK])
    a = attack(graph(sub.compile()), gate, answer=lambda v: None)
    a.assert_blocked()


def test_guarded_subgraph_that_halts_keeps_nothing_in_its_checkpoints() -> None:
    def draft(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(LIE_TEXT)]}

    sub = StateGraph(S)
    sub.add_node("draft", draft)
    sub.add_edge(START, "draft")
    a = attack(graph(sub.compile()), text_gate())
    a.assert_blocked()
    assert a.halted


def test_model_verifier_that_answers_prose() -> None:
    """The blind verifier answers in prose: unparseable, one retry, then a halt; its
    prose never reaches the graph's streams either."""
    from trustgate.testing import lying_model
    from trustgate.verifiers.base import EvidenceSources
    from trustgate.verifiers.contracts.blind import ModelVerifier

    prose = "This draft reads well to me and I would ship it."
    judge = lying_model(prose, repeat_last=True)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(LIE_TEXT)]}

    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[ModelVerifier(judge)],
        evidence=EvidenceSources(brief={"approved": []}),
    )
    a = attack(graph(agent), gate)
    a.assert_blocked()
    assert a.halted
    report = a.runs["stream"].halted.report  # type: ignore[union-attr]
    assert report.error and "verdict" in report.error.lower()
    assert len(judge.calls) == 4  # one retry per run (two runs watched)
    app = a.apps["stream"]
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream(
            {"messages": [HumanMessage("go")]},
            {"configurable": {"thread_id": "prose"}},
            stream_mode=list(ALL_MODES),
            subgraphs=True,
        ):
            seen.append(part)
    assert seen and not find_lies(seen, (prose,))


@pytest.mark.parametrize("policy", ["halt", "redact"])
def test_huge_output_with_the_lie_at_the_end(policy: str) -> None:
    from trustgate.evidence.record import Record
    from trustgate.verifiers.base import EvidenceSources
    from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule

    filler = "The deploy went out on time. " * 40_000  # 1.16 M characters, over the draft cap
    huge = filler + LIE_TEXT

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(huge)]}

    class LieRule(SentenceRule):
        name = "unsupported"
        code = "unsupported_claim"

        def check(self, sentence: DraftSentence) -> str | None:
            return "no source" if LIE in sentence.text else None

    if policy == "halt":
        gate = text_gate()
    else:
        gate = TrustGate(
            "text",
            reads=LastAIText(),
            policy=Redact(rules=[LieRule()]),
            evidence=EvidenceSources(record=Record(lines={"1": "deploy"})),
        )
    a = attack(graph(agent), gate, ways=("stream",))
    a.assert_blocked()


def test_rerender_issue_message_echoed_by_an_agent_node() -> None:
    """``Rerender(as_message=True)`` tells the node what failed in a human message; an
    agent (a subgraph) returns its whole history, so the gate's own message comes back
    as new output. When the finding quotes the lie, that message must not be released."""
    from langchain.agents import create_agent

    from trustgate.testing import lying_model

    model = lying_model(LIE_TEXT, repeat_last=True)
    agent = create_agent(model, [])

    def quoting(claims: Any, evidence: Any) -> list[Finding]:
        if LIE in str(claims):
            return [
                Finding.failed(
                    "facts",
                    "unsupported",
                    "unsupported sentence",
                    subject=LIE_TEXT,
                    proposals=[Cut(text=t) for t in [LIE_TEXT]],
                )
            ]
        return [Finding.ok("facts")]

    gate = TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(quoting, name="facts")],
        policy=Rerender(as_message=True, issues_key=None, then=Caveat()),
        passthrough=["messages.text"],
    )
    a = attack(graph(agent), gate)
    a.assert_blocked()


def test_node_forging_the_audit_record() -> None:
    """The audit record is exempt from the lie search because it quotes claims on
    purpose; a node writing to it directly must not be able to put anything there."""
    from trustgate._report import REPORTS_KEY

    def agent(state: S) -> dict[str, Any]:
        forged = {
            "gate": "text",
            "node": "agent",
            "decision": "pass",
            "released": True,
            "claims": [LIE_TEXT],
        }
        return {"messages": [AIMessage(TRUE_TEXT)], REPORTS_KEY: [forged]}

    app = trustgate.guard(graph(agent), {"agent": text_gate()}).compile(
        checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "forge"}}
    with pytest.raises(GateHalted):
        app.invoke({"messages": [HumanMessage("go")]}, config)
    assert not [r for r in trustgate.reports(app, config) if LIE_TEXT in r.claims]


# --- 7. the review path ----------------------------------------------------------------------


def test_review_check_does_not_stream_the_claims() -> None:
    """A Review gate checks durably (a ``@task``); the task's input is the claims."""

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(LIE_TEXT)]}

    a = attack(graph(agent), text_gate(Review()), answer=lambda v: None)
    a.assert_blocked()


def test_review_on_a_subgraph_node_runs_sync() -> None:
    """A Review gate on a compiled-subgraph node (which has a native async path), run
    with ``invoke``: the node's durable call must work in a sync run too."""
    sub = StateGraph(S)
    sub.add_node("draft", lambda s: {"messages": [AIMessage(TRUE_TEXT)]})
    sub.add_edge(START, "draft")
    app = trustgate.guard(graph(sub.compile()), {"agent": text_gate(Review())}).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "r"}})
    assert out["messages"][-1].content == TRUE_TEXT


def test_review_on_a_handoff_node() -> None:
    """An honest handoff through a Review gate: nothing to review, the handoff lands.
    (The node calls its agent like the network tutorial does, so the node itself is
    sync; a compiled subgraph node hits the sync/async crash above first.)"""

    def leaf(state: S) -> Command[Any]:
        return Command(
            graph=Command.PARENT, goto="after", update={"messages": [AIMessage(TRUE_TEXT)]}
        )

    sub = StateGraph(S)
    sub.add_node("leaf", leaf)
    sub.add_edge(START, "leaf")
    inner = sub.compile()

    def call_agent(state: S) -> Any:
        return inner.invoke(state)

    top = StateGraph(S)
    top.add_node("agent", call_agent, destinations=("after",))
    top.add_node("after", lambda s: {"verdict": "after ran"})
    top.add_edge(START, "agent")
    app = trustgate.guard(top, {"agent": text_gate(Review(), passthrough=["goto"])}).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "h"}})
    assert out["verdict"] == "after ran"


def test_review_edit_of_a_message_is_what_is_verified() -> None:
    """A person edits the flagged answer: the edit is verified again and released."""

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(LIE_TEXT)]}

    app = trustgate.guard(graph(agent), {"agent": text_gate(Review())}).compile(
        checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "edit"}}
    app.invoke({"messages": [HumanMessage("go")]}, config)
    out = app.invoke(
        Command(
            resume={"type": "edit", "by": "alice", "update": {"messages": [AIMessage(TRUE_TEXT)]}}
        ),
        config,
    )
    assert out["messages"][-1].content == TRUE_TEXT
    assert not find_lies(out, LIES)


def test_rerender_with_a_dataclass_state_and_the_default_issues_key() -> None:
    """``Rerender()`` hands the issues to the node under ``trust_issues``; a dataclass
    state without that field must get a clear configuration error (or the issues as a
    message), not a ``TypeError`` from ``dataclasses.replace``."""
    from trustgate.errors import TrustgateError

    def agent(state: DState) -> dict[str, Any]:
        return {"messages": [AIMessage(LIE_TEXT)]}

    g = StateGraph(DState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    app = trustgate.guard(g, {"agent": text_gate(Rerender(then=Halt()))}).compile()
    with pytest.raises((GateHalted, TrustgateError)):
        app.invoke(DState(messages=[HumanMessage("go")]))


# --- 8. how a gate is set up -----------------------------------------------------------------


def test_function_reader_membership_test_is_not_reading() -> None:
    """A function reader that only asks whether a key is there (``"notes" in u``)
    covers that key in the accounting, though it never read or returned its value."""

    def reads_verdict(update: Any) -> Any:
        return update["verdict"] if "notes" in update else update.get("verdict")

    def agent(state: S) -> dict[str, Any]:
        return {"verdict": TRUE_TEXT, "notes": [LIE_TEXT]}

    gate = TrustGate("verdict", reads=reads_verdict, verifiers=[CHECK])
    a = attack(graph(agent), gate)
    a.assert_blocked()


def test_agent_tool_results_passthrough_passes_earlier_ai_text() -> None:
    """Guarding an agent with ``LastAIText`` needs the tool results' text declared;
    declared by kind (``messages.tool.text``, what the gate's own message suggests),
    the text of the AI messages before the last is still held."""
    from langchain.agents import create_agent

    from trustgate.testing import lying_model

    @tool
    def lookup(reference: str) -> str:
        """Look a ledger reference up."""
        return "no such entry"

    model = lying_model(
        AIMessage(
            LIE_TEXT, tool_calls=[{"name": "lookup", "args": {"reference": "r1"}, "id": "l1"}]
        ),
        AIMessage(TRUE_TEXT),
        repeat_last=True,
    )

    def reset_and_run(state: S) -> Any:
        model.reset()
        return create_agent(model, [lookup]).invoke(state)

    gate = text_gate(passthrough=["messages.tool.text", "messages.tool_calls"])
    a = attack(graph(reset_and_run), gate)
    a.assert_blocked()


def test_an_undeclared_tool_result_is_named_by_its_kind() -> None:
    """The halt names the narrowest declaration that fits (``messages.tool.text``),
    not one that would let every message's text through."""

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [ToolMessage("no such entry", tool_call_id="t1"), AIMessage(TRUE_TEXT)]}

    app = trustgate.guard(graph(agent), {"agent": text_gate()}).compile()
    with pytest.raises(GateHalted) as err:
        app.invoke({"messages": [HumanMessage("go")]})
    assert "passthrough=['messages.tool.text']" in str(err.value.report.findings)
    ok = trustgate.guard(
        graph(agent), {"agent": text_gate(passthrough=["messages.tool.text"])}
    ).compile()
    assert ok.invoke({"messages": [HumanMessage("go")]})["messages"][-1].text == TRUE_TEXT


def test_users_own_streaming_callback_handler() -> None:
    """Apps stream tokens to their UI with their own callback handler (not one of
    LangGraph's stream handlers): it gets the lying tokens while the node runs."""
    from langchain_core.callbacks import BaseCallbackHandler

    from trustgate.testing import lying_model

    class TokensToUI(BaseCallbackHandler):
        def __init__(self) -> None:
            self.tokens: list[str] = []

        def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
            self.tokens.append(token)

    model = lying_model(LIE_TEXT, repeat_last=True)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = graph(agent)
    for guarded in (False, True):
        ui = TokensToUI()
        app = (trustgate.guard(builder, {"agent": text_gate()}) if guarded else builder).compile()
        try:
            for _ in app.stream(
                {"messages": [HumanMessage("go")]}, {"callbacks": [ui]}, stream_mode="messages"
            ):
                pass
        except GateHalted:
            assert guarded
        shown = "".join(ui.tokens)
        if not guarded:
            assert LIE in shown, "unguarded, the handler streams the lie token by token"
        else:
            assert LIE not in shown, f"the UI was streamed the lie: {shown!r}"


def test_users_own_token_handler_gets_an_honest_answer_whole_and_in_order() -> None:
    """Held, the user's token handler still gets every token of a passing answer, in
    order, once the gate releases it; a tracer is never held (its timings would lie)."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tracers.base import BaseTracer

    from trustgate import _compat
    from trustgate.testing import honest_model

    class TokensToUI(BaseCallbackHandler):
        def __init__(self) -> None:
            self.events: list[str] = []

        def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
            self.events.append(token)

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            self.events.append("<end>")

    model = honest_model(TRUE_TEXT, repeat_last=True)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    seen = []
    for guarded in (False, True):
        ui = TokensToUI()
        builder = graph(agent)
        app = (trustgate.guard(builder, {"agent": text_gate()}) if guarded else builder).compile()
        for _ in app.stream(
            {"messages": [HumanMessage("go")]}, {"callbacks": [ui]}, stream_mode="messages"
        ):
            pass  # stream mode "messages" makes the model stream its tokens
        seen.append(ui.events)
    assert seen[0] == seen[1] and "".join(seen[1][:-1]) == TRUE_TEXT
    assert _compat.is_telemetry(type("T", (BaseTracer,), {"_persist_run": print})())


def test_astream_log() -> None:
    from trustgate.testing import lying_model

    model = lying_model(LIE_TEXT, repeat_last=True)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = graph(agent)

    async def patches(app: Any) -> list[Any]:
        out: list[Any] = []
        try:
            async for patch in app.astream_log({"messages": [HumanMessage("go")]}):
                out.append(patch.ops)
        except GateHalted:
            pass
        return out

    assert find_lies(asyncio.run(patches(builder.compile())), LIES)
    guarded = trustgate.guard(builder, {"agent": text_gate()}).compile()
    shown = asyncio.run(patches(guarded))
    assert shown and not find_lies(shown, LIES)


def _refund_agent(recorder: Recorder) -> Any:
    """An agent that pays a refund against the invented reference, then answers."""
    from langchain.agents import create_agent

    from trustgate.testing import lying_model

    @tool
    def refund(reference: str) -> str:
        """Pay out a refund against a ledger reference."""
        recorder.tool_ran("refund", reference=reference)
        return "refunded"

    def reply(messages: list[Any]) -> AIMessage:
        if any(isinstance(m, ToolMessage) for m in messages):
            return AIMessage(TRUE_TEXT)
        return AIMessage("", tool_calls=[{"name": "refund", "args": _ARGS, "id": "r1"}])

    return create_agent(lying_model(reply, repeat_last=True), [refund])


@pytest.mark.xfail(
    strict=True,
    reason="known limitation: a tool inside a guarded agent runs before the gate on the "
    "agent sees anything; guard the agent's model node to stop the call (next test)",
)
def test_tool_inside_a_guarded_agent_node_runs_before_the_gate() -> None:
    """Guarding a whole agent (a subgraph node) checks what the agent hands on, after
    its own tools ran: the refund runs with the lie inside the guarded node. Nothing
    can hold a tool's side effect after the fact, so this shape either needs a warning
    or refusal from ``guard()`` (the tools are behind the boundary it draws) or the
    gate on the agent's model node, as the next test does."""
    recorder = Recorder()

    def call(state: S) -> Any:
        return _refund_agent(recorder).invoke(state)

    gate = text_gate(passthrough=["messages.text", "messages.tool_calls"])
    a = attack(graph(call), gate, recorder=recorder)
    a.assert_blocked()


def test_guard_warns_when_a_guarded_agent_runs_tools_inside_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The boundary guard() draws around a whole agent has the agent's tools inside it:
    it says so, and names the fix."""
    agent = _refund_agent(Recorder())
    with caplog.at_level("WARNING", logger="trustgate.graph._guard"):
        trustgate.guard(graph(agent), {"agent": text_gate()})
    assert any("runs tools inside it (tools)" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level("WARNING", logger="trustgate.graph._guard"):
        trustgate.guard(agent.builder, {"model": calls_gate()})
    assert not caplog.records


def test_gate_on_the_agents_model_node_stops_the_tool() -> None:
    recorder = Recorder()
    agent = _refund_agent(recorder)
    a = attack(agent.builder, calls_gate(), node="model", recorder=recorder, downstream=("tools",))
    a.assert_blocked()
    assert a.control.hits.get("tool_runs")


# --- 9. the shipped lie check (trustgate.testing.assert_lie_blocked) --------------------------
# Users prove their own gates with it; where it cannot see, their mutation tests pass on
# graphs that leak. Each case is an unguarded graph that leaks: the check must say so.


def _leaky(node: Callable[..., Any]) -> Any:
    return graph(node).compile(checkpointer=InMemorySaver())


def test_shipped_lie_check_sees_message_metadata() -> None:
    from trustgate.testing import LieNotBlocked as Shipped
    from trustgate.testing import assert_lie_blocked

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(TRUE_TEXT, response_metadata={"citations": [LIE]})]}

    with pytest.raises(Shipped):
        assert_lie_blocked(
            _leaky(agent), {"messages": [HumanMessage("go")]}, LIES, require_catch=False
        )


def test_shipped_lie_check_sees_a_nodes_own_interrupt() -> None:
    from langgraph.types import interrupt

    from trustgate.testing import LieNotBlocked as Shipped
    from trustgate.testing import assert_lie_blocked

    def agent(state: S) -> dict[str, Any]:
        interrupt({"question": f"Pay against {LIE}?"})
        return {}

    with pytest.raises(Shipped):
        assert_lie_blocked(
            _leaky(agent), {"messages": [HumanMessage("go")]}, LIES, require_catch=False
        )


def test_shipped_lie_check_sees_the_tasks_stream() -> None:
    """A lie that only a task's input carries surfaces in the ``tasks`` and ``debug``
    streams alone (no state, no checkpoint row): the shipped check watches them."""
    from langgraph.func import task

    from trustgate.testing import LieNotBlocked as Shipped
    from trustgate.testing import assert_lie_blocked

    @task
    def file_it(text: str) -> str:
        return "filed"

    def agent(state: S) -> dict[str, Any]:
        file_it(LIE_TEXT).result()
        return {}

    with pytest.raises(Shipped, match=r"(tasks|debug) stream"):
        assert_lie_blocked(
            _leaky(agent), {"messages": [HumanMessage("go")]}, LIES, require_catch=False
        )
