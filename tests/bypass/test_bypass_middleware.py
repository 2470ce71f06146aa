"""Attacks on ``TrustGateMiddleware`` inside ``create_agent``: every way the agent's model
step could get model output past the middleware's gates.

Each attack builds the same agent twice: without the middleware (the control: the lie
must show somewhere, or the attack proves nothing) and with it. The guarded run is
watched through every window of ``_bypass_support`` (the final state, ``get_state`` and
its history, every checkpoint row, every stream mode, sync and async, ``astream_events``)
plus the tools that ran: the lie must appear nowhere but in the audit record.

The holes these close: a structured response (``ToolStrategy``, ``ProviderStrategy``, a
bare schema) the gate never saw; a model step adding more than one message (or a
command from a ``wrap_model_call`` middleware inside it) of which the gate saw the last;
another middleware's jump to the end that skipped a gate in ``after_model``; and the
model's message checkpointed and streamed before the gate had decided.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired

import pytest
from _bypass_support import Observation, Run, normalise, observe, observe_async
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ToolCallLimitMiddleware
from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel
from test_bypass_attacks import CHECK, LIE, LIE_TEXT, LIES, TRUE_TEXT, calls_gate, text_gate

from trustgate import Finding, TrustGate
from trustgate.errors import GateHalted
from trustgate.graph import TrustGateMiddleware
from trustgate.policies import Halt, Override
from trustgate.readers import FromKey, LastAIText
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.base import FunctionVerifier

QUESTION = {"messages": [HumanMessage("Was the refund approved?")]}


class Verdict(BaseModel):
    """The agent's structured answer."""

    approved: bool
    evidence: str


LYING_VERDICT = {"approved": True, "evidence": LIE}
HONEST_VERDICT = {"approved": False, "evidence": "no record approves it"}


def verdict_call(args: dict[str, Any], text: str = "") -> AIMessage:
    return AIMessage(text, tool_calls=[{"name": "Verdict", "args": args, "id": "verdict-1"}])


def _deny(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.failed("deny_all", "denied", "nothing this gate sees is released")]


def deny_all() -> TrustGate:
    """A gate that releases nothing it reads (here: the last AI message's text)."""
    return TrustGate(
        "deny_all",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_deny, name="deny_all")],
        policy=Halt(),
    )


def verdict_gate(policy: Any = None, passthrough: Sequence[str] = ()) -> TrustGate:
    """Reads the structured response and fails on the lie."""
    return TrustGate(
        "verdict",
        reads=FromKey("structured_response"),
        verifiers=[CHECK],
        policy=policy or Halt(),
        passthrough=list(passthrough),
    )


# --- the harness: the same agent without and with the middleware ----------------------------

Build = Callable[[list[Any]], Any]
"""``build(middleware)`` → a fresh agent (fresh model, InMemorySaver) with that list."""


@dataclass
class Watched:
    control: Observation
    runs: dict[str, Observation] = field(default_factory=dict)
    ran: dict[str, list[str]] = field(default_factory=dict)

    def assert_blocked(self) -> None:
        for way, obs in self.runs.items():
            obs.assert_blocked()
            assert not [r for r in self.ran[way] if LIE in r], (way, self.ran[way])

    @property
    def halted(self) -> bool:
        return all(o.halted is not None for o in self.runs.values())

    def decisions(self, way: str = "stream") -> list[str]:
        return [r.decision for r in self.runs[way].reports]


def _observe(app: Any, way: str, inputs: Any) -> Observation:
    config: dict[str, Any] = {"configurable": {"thread_id": f"mw-{way}"}}
    run = Run(app=app, inputs=inputs, config=config, lies=LIES)
    if way == "stream":
        return observe(run, "stream")
    return asyncio.run(observe_async(run, way))


def watch(
    build: Build,
    guarded: list[Any],
    *,
    plain: list[Any] | None = None,
    ran: list[str] | None = None,
    ways: Sequence[str] = ("stream", "astream", "events"),
    inputs: Any = None,
) -> Watched:
    """Run ``build(plain)`` (the control: the lie must surface) and ``build(guarded)``
    each way. ``ran`` is the list the agent's tools append their arguments to."""
    executed = ran if ran is not None else []
    inputs = QUESTION if inputs is None else inputs
    control = _observe(build(list(plain or [])), "stream", inputs)
    control.see("tool_runs", list(executed))
    assert control.hits, "unguarded, the attack never showed the lie: it proves nothing"
    out = Watched(control)
    for way in ways:
        executed.clear()
        obs = _observe(build(list(guarded)), way, inputs)
        obs.see("tool_runs", list(executed))
        out.runs[way] = obs
        out.ran[way] = list(executed)
    return out


def _agent(model_factory: Callable[[], Any], tools: Sequence[Any] = (), **kwargs: Any) -> Build:
    def build(middleware: list[Any]) -> Any:
        return create_agent(
            model_factory(),
            list(tools),
            middleware=middleware,
            checkpointer=InMemorySaver(),
            **kwargs,
        )

    return build


def _tools(ran: list[str]) -> list[Any]:
    @tool
    def refund(record: str) -> str:
        """Issue the refund recorded under ``record``."""
        ran.append(f"refund:{record}")
        return "refunded"

    @tool
    def lookup(record: str) -> str:
        """Look a record up."""
        ran.append(f"lookup:{record}")
        return "record R-1: refund pending"

    return [refund, lookup]


def _halted_reports(w: Watched) -> None:
    """Every guarded run halted, and its halted report is where ``trustgate.reports``
    looks (kept beside the failed task)."""
    assert w.halted
    for way, obs in w.runs.items():
        assert "halted" in [r.decision for r in obs.reports], way
        assert obs.halted is not None and not obs.halted.report.released


# --- 1. structured output -------------------------------------------------------------------


def _reply(strategy: str, verdict: dict[str, Any], text: str = "") -> AIMessage:
    """The model's lie in the form the strategy parses: JSON text, or a tool call."""
    if strategy == "provider":
        return AIMessage(json.dumps(verdict))
    return verdict_call(verdict, text)


def _format(strategy: str) -> Any:
    return {
        "tool": ToolStrategy(Verdict),
        "provider": ProviderStrategy(Verdict),
        "bare": Verdict,
    }[strategy]


@pytest.mark.parametrize("strategy", ["tool", "provider", "bare"])
@pytest.mark.parametrize("gate", [deny_all, verdict_gate], ids=["deny_all", "verdict"])
def test_structured_response_lie_is_held(strategy: str, gate: Callable[[], TrustGate]) -> None:
    """The fabricated ``structured_response`` is what the model step produced: the gate
    sees it (and the messages that carry it) before the model node writes anything."""
    build = _agent(
        lambda: lying_model(_reply(strategy, LYING_VERDICT)), response_format=_format(strategy)
    )
    w = watch(build, [TrustGateMiddleware(model_gates=[gate()])])
    w.assert_blocked()
    _halted_reports(w)


def test_unread_structured_response_halts() -> None:
    """A gate that checks only the text leaves ``structured_response`` (and the
    structured call, and LangChain's acknowledgement) unaccounted for: held, so the step
    halts, and the report names what was held."""
    build = _agent(
        lambda: lying_model(verdict_call(LYING_VERDICT, "I checked the records.")),
        response_format=ToolStrategy(Verdict),
    )
    w = watch(build, [TrustGateMiddleware(model_gates=[text_gate()])])
    w.assert_blocked()
    _halted_reports(w)
    held = {
        f.subject
        for f in w.runs["stream"].halted.report.failed  # type: ignore[union-attr]
        if f.code == "unverified_output"
    }
    assert "structured_response" in held
    assert any(s and ".tool_calls[" in s for s in held)


def test_override_on_a_structured_field_is_what_the_model_node_writes() -> None:
    """``Override`` on a field of ``structured_response`` is applied to the response the
    model node writes; the structured call's arguments and LangChain's acknowledgement,
    the same answer in two other forms, are derived again from the released value, so
    the model's version is nowhere."""
    build = _agent(
        lambda: lying_model(verdict_call(LYING_VERDICT)), response_format=ToolStrategy(Verdict)
    )
    gate = verdict_gate(
        Override("structured_response.evidence", "withheld"),
        passthrough=["messages.ai.tool_calls", "messages.tool.text"],
    )
    w = watch(build, [TrustGateMiddleware(model_gates=[gate])])
    w.assert_blocked()
    for way, obs in w.runs.items():
        assert obs.halted is None, way
        assert obs.final["structured_response"] == Verdict(approved=True, evidence="withheld")
        ai, ack = obs.final["messages"][1:]
        assert ai.tool_calls[0]["args"] == {"approved": True, "evidence": "withheld"}, way
        assert "withheld" in ack.text, way
        assert [r.decision for r in obs.reports] == ["modified"], way


# --- 2. another middleware's jump to the end ------------------------------------------------


@pytest.mark.parametrize("order", ["gate_first", "limit_first"])
def test_tool_call_limit_jump_to_end_cannot_skip_the_gate(order: str) -> None:
    """``ToolCallLimitMiddleware(exit_behavior="end")`` jumps to the end from its
    ``after_model`` hook; listed after the gate it ran first and skipped the gate's
    ``after_model``. Around the model call, no jump can skip the gate."""
    ran: list[str] = []
    tools = _tools(ran)
    reply = AIMessage(
        LIE_TEXT,
        tool_calls=[
            {"name": "lookup", "args": {"record": "R-1"}, "id": "l1"},
            {"name": "lookup", "args": {"record": "R-2"}, "id": "l2"},
        ],
    )
    build = _agent(lambda: lying_model(reply), tools)

    def limit() -> Any:
        return ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")

    gate = TrustGateMiddleware(model_gates=[text_gate(passthrough=["messages.ai.tool_calls"])])
    guarded = [gate, limit()] if order == "gate_first" else [limit(), gate]
    w = watch(build, guarded, plain=[limit()], ran=ran)
    w.assert_blocked()
    _halted_reports(w)
    assert all(not r for r in w.ran.values())  # the jump ended the run: nothing ran


# --- 3. a model step that adds more than one message, or a command ---------------------------


class _TwoAnswers(AgentMiddleware):
    """Asks the model twice and hands on both answers (a self-consistency step): the
    model step adds two AI messages."""

    def wrap_model_call(self, request: Any, handler: Any) -> ModelResponse:
        first = handler(request)
        second = handler(request)
        return ModelResponse(result=[*first.result, *second.result])

    async def awrap_model_call(self, request: Any, handler: Any) -> ModelResponse:
        first = await handler(request)
        second = await handler(request)
        return ModelResponse(result=[*first.result, *second.result])


def test_a_model_step_adding_two_messages() -> None:
    """The gate saw only the last message; the lie was in the first."""
    build = _agent(lambda: lying_model(LIE_TEXT, TRUE_TEXT, repeat_last=True))
    w = watch(
        build,
        [TrustGateMiddleware(model_gates=[text_gate()]), _TwoAnswers()],
        plain=[_TwoAnswers()],
    )
    w.assert_blocked()
    _halted_reports(w)
    held = {f.subject for f in w.runs["stream"].halted.report.failed}  # type: ignore[union-attr]
    assert "messages[0].text" in held


class DraftState(AgentState[Any]):
    draft: NotRequired[str]


class _KeepDraft(AgentMiddleware):
    """Asks for a draft, then the answer; keeps the draft in state with a command
    (``ExtendedModelResponse``), which LangChain writes after the response."""

    state_schema = DraftState

    def wrap_model_call(self, request: Any, handler: Any) -> ExtendedModelResponse:
        draft = handler(request)
        answer = handler(request)
        return ExtendedModelResponse(
            model_response=answer, command=Command(update={"draft": draft.result[-1].text})
        )

    async def awrap_model_call(self, request: Any, handler: Any) -> ExtendedModelResponse:
        draft = await handler(request)
        answer = await handler(request)
        return ExtendedModelResponse(
            model_response=answer, command=Command(update={"draft": draft.result[-1].text})
        )


def test_a_command_of_an_inner_model_call_middleware() -> None:
    """What a ``wrap_model_call`` middleware listed after the gate writes beside the
    response is part of the model step: held unless a gate reads or declares it."""
    build = _agent(lambda: lying_model(LIE_TEXT, TRUE_TEXT, repeat_last=True))
    w = watch(
        build,
        [TrustGateMiddleware(model_gates=[text_gate()]), _KeepDraft()],
        plain=[_KeepDraft()],
    )
    w.assert_blocked()
    _halted_reports(w)
    held = {f.subject for f in w.runs["stream"].halted.report.failed}  # type: ignore[union-attr]
    assert "draft" in held


# --- 4. a rewrite through the middleware -----------------------------------------------------


def test_block_tool_calls_rewrite_is_the_response_the_model_node_writes() -> None:
    """``BlockToolCalls`` removes the fabricated call from the model's message before the
    model node writes it: it is in no checkpoint and no stream, and never runs; the
    other call runs and the agent goes on."""
    ran: list[str] = []
    tools = _tools(ran)
    reply = AIMessage(
        "Checking the records.",
        tool_calls=[
            {"name": "refund", "args": {"record": LIE}, "id": "r1"},
            {"name": "lookup", "args": {"record": "R-1"}, "id": "l1"},
        ],
    )
    build = _agent(lambda: lying_model(reply, "The refund is pending."), tools)
    w = watch(build, [TrustGateMiddleware(model_gates=[calls_gate()])], ran=ran)
    w.assert_blocked()
    for way, obs in w.runs.items():
        assert obs.halted is None, way
        assert w.ran[way] == ["lookup:R-1"], way
        calls = [
            c["id"] for m in obs.final["messages"] if isinstance(m, AIMessage) for c in m.tool_calls
        ]
        assert calls == ["l1"], way
        assert obs.final["messages"][-1].text == "The refund is pending."
        assert [r.decision for r in obs.reports] == ["blocked", "pass"], way


# --- 5. honest runs are untouched ------------------------------------------------------------


def _final(app: Any, config: dict[str, Any]) -> Any:
    values = dict(app.get_state(config).values)
    values.pop("trust_reports", None)
    return normalise(values)


def _tokens(app: Any, config: dict[str, Any]) -> list[str]:
    out = []
    for chunk, _meta in app.stream(QUESTION, config, stream_mode="messages"):
        out.append(chunk.text)
    return out


def test_honest_runs_end_as_without_the_middleware() -> None:
    """An honest agent (a tool call, then a structured answer) ends in the same state,
    with the same message stream, as without the middleware; every model step was
    checked, the structured response included."""
    ran: list[str] = []
    tools = _tools(ran)
    replies = (
        AIMessage(
            "Looking the record up.",
            tool_calls=[{"name": "lookup", "args": {"record": "R-1"}, "id": "l1"}],
        ),
        verdict_call(HONEST_VERDICT, "The record says the refund is pending."),
    )
    gates = [
        TrustGate(
            "answer",
            reads=LastAIText(),
            verifiers=[CHECK],
            passthrough=["messages.ai.tool_calls", "messages.tool.text"],
        ),
        # a part no gate reads must be declared by every gate of the node
        TrustGate(
            "verdict",
            reads=FromKey("structured_response"),
            verifiers=[CHECK],
            require_claims=False,
            passthrough=["messages.ai.tool_calls", "messages.tool.text"],
        ),
    ]

    def build(middleware: list[Any]) -> Any:
        return create_agent(
            honest_model(*replies),
            tools,
            middleware=middleware,
            response_format=ToolStrategy(Verdict),
            checkpointer=InMemorySaver(),
        )

    plain, guarded = build([]), build([TrustGateMiddleware(model_gates=gates)])
    config: dict[str, Any] = {"configurable": {"thread_id": "honest"}}
    tokens = _tokens(plain, config)
    assert tokens[:4] == ["Looking ", "the ", "record ", "up."]  # streamed token by token
    assert _tokens(guarded, config) == tokens
    assert _final(guarded, config) == _final(plain, config)
    assert ran == ["lookup:R-1", "lookup:R-1"]
    reports = guarded.get_state(config).values["trust_reports"]
    assert [(r.gate, r.decision) for r in reports] == [
        ("answer", "pass"),
        ("verdict", "pass"),
        ("answer", "pass"),
        ("verdict", "pass"),
    ]
    assert reports[-1].accounting.get("structured_response") == "verified"


def test_a_halted_model_step_raises_gate_halted() -> None:
    """Without a stream around it, ``invoke`` raises :class:`GateHalted` with the report,
    and nothing of the step is in the state."""
    agent = create_agent(
        lying_model(verdict_call(LYING_VERDICT)),
        [],
        response_format=ToolStrategy(Verdict),
        middleware=[TrustGateMiddleware(model_gates=[verdict_gate()])],
        checkpointer=InMemorySaver(),
    )
    config: dict[str, Any] = {"configurable": {"thread_id": "h"}}
    with pytest.raises(GateHalted) as err:
        agent.invoke(QUESTION, config)
    assert err.value.report.gate == "verdict"
    values = agent.get_state(config).values
    assert "structured_response" not in values or values["structured_response"] is None
    assert [type(m) for m in values["messages"]] == [HumanMessage]
    assert not [m for m in values["messages"] if isinstance(m, ToolMessage)]


def test_a_failed_model_step_does_not_quote_the_model() -> None:
    """A structured answer that does not parse fails the model step with an error that
    quotes the model's output; LangChain keeps the error with the task in the
    checkpoint. Inside the middleware the error keeps its type, not its message."""

    def run(middleware: list[Any]) -> tuple[BaseException, Observation]:
        agent = create_agent(
            lying_model(AIMessage('{"approved": "per ' + LIE + '"}')),
            [],
            response_format=ProviderStrategy(Verdict),
            middleware=middleware,
            checkpointer=InMemorySaver(),
        )
        config: dict[str, Any] = {"configurable": {"thread_id": "bad"}}
        with pytest.raises(Exception) as err:
            agent.invoke(QUESTION, config)
        obs = Observation(LIES)
        obs.see("error", err.value)
        for item in agent.checkpointer.list(config):
            obs.see("checkpoint_rows", [item.checkpoint["channel_values"], item.pending_writes])
        return err.value, obs

    plain_error, control = run([])
    assert control.hits, "unguarded, the error never quoted the lie: it proves nothing"
    error, obs = run([TrustGateMiddleware(model_gates=[verdict_gate()])])
    obs.assert_blocked()
    assert type(error) is type(plain_error)
    assert "message withheld" in str(error)
