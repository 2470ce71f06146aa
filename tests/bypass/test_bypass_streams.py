"""What a guarded node streams: model calls it discarded, user handlers, the gate's feedback.

Three ways an output the gate never released could still be streamed:

* a node that asks its model twice (a draft, then a revision; a ``create_agent``
  middleware that re-asks the model inside the model node) returns only the second
  answer, yet the first answer's tokens and events were streamed;
* a user's own callback handler (one that takes only ``on_llm_end``, an async one) is
  told the model's answer as it happens, before the gate halts it;
* a re-rendered attempt's input carries the gate's feedback, which quotes the rejected
  output, and the attempt's held start events show that input.

Each attack runs unguarded first (the lie must show: the scripted models really stream
their tokens), then guarded through every stream API: the lie must appear in no stream
mode, in no event, in no user handler, while an honest answer's tokens still arrive in
order.
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any

import pytest
from _bypass_support import Run, find_lies, observe
from langchain_core.callbacks import (
    AsyncCallbackHandler,
    BaseCallbackHandler,
    CallbackManagerForLLMRun,
)
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from shapes import Recorder
from test_bypass_attacks import (
    LIE,
    LIE_TEXT,
    LIES,
    TRUE_TEXT,
    Attack,
    S,
    attack,
    graph,
    text_gate,
)
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.errors import GateHalted
from trustgate.policies import Halt, Rerender
from trustgate.readers import LastAIText
from trustgate.testing import ScriptedChatModel
from trustgate.verifiers.base import FunctionVerifier

WAYS = ("stream", "stream-flat", "astream", "astream-flat", "events", "v3")
"""The ways ``attack()`` watches (sync ``stream_events(version="v3")`` is added here)."""

ASK = {"messages": [HumanMessage("Was the refund approved?")]}
REVISE = "Check every record you cite against the ledger, then answer again."


# --- what a user's handlers are told -------------------------------------------------------


class Told(Recorder):
    """The bypass recorder, also keeping everything a user's handler is told of a model
    and of the nodes (answers, tokens, chain ends), one log per run: ``attack()`` resets
    its recorder before each run, and a reset keeps the finished run's log."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[Any] = []
        self.logs: list[list[Any]] = []

    def reset(self) -> None:
        super().reset()
        self.logs.append(self.log)
        self.log = []

    def runs(self) -> list[list[Any]]:
        """The logs of the control run and of each guarded run, in order."""
        return [*self.logs[1:], self.log]

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.log.append(token)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.log.append(response)

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self.log.append(outputs)


class AnswersOnly(BaseCallbackHandler):
    """A user's own handler that takes only the model's final answers (a log of what
    the model said, an answer cache): no token hook."""

    def __init__(self) -> None:
        self.answers: list[str] = []

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.answers.extend(g.text for gens in response.generations for g in gens)


class AsyncFeed(AsyncCallbackHandler):
    """A user's own async handler feeding a UI: tokens, then the answer."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.events.append(token)

    async def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.events.append("<end>")


# --- the harness: every stream API, the handlers, the honest tokens ----------------------------


def watched(
    builder: StateGraph,
    gate: TrustGate,
    *,
    node: str = "agent",
    downstream: Sequence[str] = ("after",),
    inputs: Any = None,
) -> tuple[Attack, Told]:
    """``attack()`` through every way, plus sync ``stream_events(version="v3")``; the
    user handler must have been told the lie unguarded and nothing of it guarded."""
    told = Told()
    inputs = ASK if inputs is None else inputs
    a = attack(
        builder,
        gate,
        copy.deepcopy(inputs),
        node=node,
        ways=WAYS,
        downstream=downstream,
        recorder=told,
    )
    app = trustgate.guard(builder, {node: gate}).compile(checkpointer=InMemorySaver())
    run = Run(
        app=app,
        inputs=copy.deepcopy(inputs),
        config={"configurable": {"thread_id": "v3-sync"}},
        lies=LIES,
    )
    a.runs["v3-sync"] = observe(run, "v3")
    control, *guarded = told.runs()
    assert find_lies(control, LIES), "unguarded, the user's handler was never told the lie"
    for way, log in zip(WAYS, guarded, strict=True):
        assert not find_lies(log, LIES), f"[{way}] the user's handler was told the lie"
    return a, told


def messages_tokens(app: Any, inputs: Any = None) -> list[str]:
    """The chunks of the guarded node's answer in ``stream_mode="messages"``."""
    parts = app.stream(copy.deepcopy(ASK if inputs is None else inputs), stream_mode="messages")
    return [m.text for m, _meta in parts if isinstance(m, AIMessageChunk) and m.text]


def assert_streams_answer(app: Any, answer: str = TRUE_TEXT, inputs: Any = None) -> None:
    tokens = messages_tokens(app, inputs)
    assert len(tokens) > 3, f"not streamed token by token: {tokens!r}"
    assert "".join(tokens) == answer


def control_streams_lie(builder: StateGraph, inputs: Any = None) -> None:
    """The unguarded graph streams the lie's tokens in ``stream_mode="messages"``."""
    tokens = messages_tokens(builder.compile(), inputs)
    assert len(tokens) > 3 and LIE in "".join(tokens)


class Streaming(ScriptedChatModel):
    """A scripted model that streams its answer word by word, the invented record in
    one chunk (as a provider streams a token it has seen before): the lie is then in a
    single stream item, where the bypass windows look for it."""

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._next(messages)
        text = message.text
        pieces = text.split(LIE)
        tokens: list[str] = []
        for n, piece in enumerate(pieces):
            if n:
                tokens.append(LIE)
            tokens.extend(re.findall(r"\S+\s*|\s+", piece))
        for token in tokens:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token, id=message.id))
            if run_manager is not None:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk


def streaming(reply: Any) -> Streaming:
    return Streaming(responses=[reply], personality="lying", repeat_last=True)


def reviser() -> Streaming:
    """A model whose first answer lies and whose revision (asked with its draft in the
    conversation) tells the truth."""

    def reply(messages: list[BaseMessage]) -> str:
        return TRUE_TEXT if any(isinstance(m, AIMessage) for m in messages) else LIE_TEXT

    return streaming(reply)


# --- 1. model calls the node discarded -------------------------------------------------------


def _draft_then_revise(model: ScriptedChatModel, *, rewrap: bool = False) -> Callable[..., Any]:
    def agent(state: S) -> dict[str, Any]:
        draft = model.invoke(state["messages"])
        final = model.invoke([*state["messages"], draft, HumanMessage(REVISE)])
        return {"messages": [AIMessage(final.text) if rewrap else final]}

    return agent


def test_a_discarded_draft_is_not_streamed() -> None:
    """The node keeps only the revision; the draft's tokens and events were streamed.
    A node that answers once streams the same model events as unguarded."""
    builder = graph(_draft_then_revise(reviser()))
    control_streams_lie(builder)
    a, _ = watched(builder, text_gate())
    a.assert_blocked()
    assert not any(o.halted for o in a.runs.values())
    assert_streams_answer(trustgate.guard(builder, {"agent": text_gate()}).compile())

    once = graph(_answer(streaming(TRUE_TEXT)))
    plain = asyncio.run(model_events(once.compile()))
    guarded = asyncio.run(model_events(trustgate.guard(once, {"agent": text_gate()}).compile()))
    assert guarded == plain and len(guarded) > 5


async def model_events(app: Any) -> list[tuple[str, str]]:
    """``astream_events`` of the model calls: event, and the chunk's text."""
    return [
        (e["event"], str(getattr(e["data"].get("chunk"), "content", "")))
        async for e in app.astream_events(copy.deepcopy(ASK), version="v2")
        if e["event"].startswith("on_chat_model")
    ]


def test_a_discarded_draft_is_not_streamed_when_the_node_rewraps_the_answer() -> None:
    """A node that puts the model's text in a message of its own still releases that
    model call's tokens; the draft's stay held."""
    builder = graph(_draft_then_revise(reviser(), rewrap=True))
    control_streams_lie(builder)
    a, _ = watched(builder, text_gate())
    a.assert_blocked()
    assert_streams_answer(trustgate.guard(builder, {"agent": text_gate()}).compile())


def _reasking_agent() -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware

    class AskAgain(AgentMiddleware):
        """Re-asks the model once, with its first answer in the conversation, and
        returns only the second answer (a self-check middleware)."""

        def _again(self, request: Any, first: Any) -> Any:
            return request.override(
                messages=[*request.messages, *first.result, HumanMessage(REVISE)]
            )

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(self._again(request, handler(request)))

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            return await handler(self._again(request, await handler(request)))

    return create_agent(reviser(), [], middleware=[AskAgain()])


def test_create_agent_middleware_that_reasks_the_model() -> None:
    """``guard(agent, {"model": gate})`` with a ``wrap_model_call`` middleware that
    re-asks: the model node returns the second answer; the first was streamed."""
    agent = _reasking_agent()
    control_streams_lie(agent.builder)
    a, _ = watched(agent.builder, text_gate(), node="model", downstream=())
    a.assert_blocked()
    assert not any(o.halted for o in a.runs.values())
    guarded = trustgate.guard(agent, {"model": text_gate()})
    assert_streams_answer(guarded)


# --- 2. user callback handlers -----------------------------------------------------------------


def _answer(model: ScriptedChatModel) -> Callable[..., Any]:
    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return agent


def _run_with(app: Any, handler: Any, *, is_async: bool) -> bool:
    """Stream ``app`` once with ``handler`` in the config; whether the gate halted."""
    config: dict[str, Any] = {"callbacks": [handler]}
    try:
        if is_async:

            async def consume() -> None:
                async for _ in app.astream(copy.deepcopy(ASK), config, stream_mode="messages"):
                    pass

            asyncio.run(consume())
        else:
            for _ in app.stream(copy.deepcopy(ASK), config, stream_mode="messages"):
                pass
    except GateHalted:
        return True
    return False


def test_a_users_answer_only_handler_is_held() -> None:
    """A sync handler with only ``on_llm_end`` got the whole halted lie."""
    builder = graph(_answer(streaming(LIE_TEXT)))
    for is_async in (False, True):
        plain = AnswersOnly()
        assert not _run_with(builder.compile(), plain, is_async=is_async)
        assert find_lies(plain.answers, LIES)
        held = AnswersOnly()
        guarded = trustgate.guard(builder, {"agent": text_gate()}).compile()
        assert _run_with(guarded, held, is_async=is_async)
        assert held.answers == []
    honest = AnswersOnly()
    app = trustgate.guard(graph(_answer(streaming(TRUE_TEXT))), {"agent": text_gate()})
    assert not _run_with(app.compile(), honest, is_async=False)
    assert honest.answers == [TRUE_TEXT]


@pytest.mark.parametrize("is_async", [True, False], ids=["astream", "stream"])
def test_a_users_async_handler_is_held(is_async: bool) -> None:
    """An ``AsyncCallbackHandler`` of the user's was left live: it streamed the lie."""
    builder = graph(_answer(streaming(LIE_TEXT)))
    plain = AsyncFeed()
    assert not _run_with(builder.compile(), plain, is_async=is_async)
    assert LIE in "".join(plain.events)
    held = AsyncFeed()
    assert _run_with(
        trustgate.guard(builder, {"agent": text_gate()}).compile(), held, is_async=is_async
    )
    assert held.events == []
    honest = graph(_answer(streaming(TRUE_TEXT)))
    fed, unguarded = AsyncFeed(), AsyncFeed()
    assert not _run_with(honest.compile(), unguarded, is_async=is_async)
    app = trustgate.guard(honest, {"agent": text_gate()}).compile()
    assert not _run_with(app, fed, is_async=is_async)
    assert fed.events == unguarded.events  # every token, in order, then the end
    assert len(fed.events) > 3 and "".join(fed.events[:-1]) == TRUE_TEXT


def test_a_users_handlers_are_told_no_discarded_draft() -> None:
    """Held handlers are replayed under the same rule as the streams: the answer-only
    handler and the async feed hear the revision, never the draft."""
    builder = graph(_draft_then_revise(reviser()))
    app = trustgate.guard(builder, {"agent": text_gate()}).compile()
    answers, feed = AnswersOnly(), AsyncFeed()
    try:
        for _ in app.stream(
            copy.deepcopy(ASK), {"callbacks": [answers, feed]}, stream_mode="messages"
        ):
            pass
    except GateHalted:
        pytest.fail("the revision is true: the gate passes it")
    assert answers.answers == [TRUE_TEXT]
    assert "".join(feed.events[:-1]) == TRUE_TEXT and feed.events[-1] == "<end>"


def test_a_handler_of_node_outputs_is_held_and_tracers_stay_live() -> None:
    """A handler that logs what nodes return (``on_chain_end`` only) got the halted
    node's lie; a tracer (telemetry, with its own content settings) is left live and
    still records the model run as it happens."""
    from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

    class NodeLog(BaseCallbackHandler):
        def __init__(self) -> None:
            self.outputs: list[Any] = []

        def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
            self.outputs.append(outputs)

    from langchain_core.runnables import RunnableLambda

    def answer(message: BaseMessage) -> dict[str, Any]:
        return {"messages": [message]}

    # a node that is a chain (model, then a step that files the answer): the chain and
    # its steps end with the answer in their outputs
    chain = RunnableLambda(lambda s: s["messages"]) | streaming(LIE_TEXT) | RunnableLambda(answer)
    builder = graph(chain)
    plain = NodeLog()
    assert not _run_with(builder.compile(), plain, is_async=False)
    assert find_lies(plain.outputs, LIES)
    held, tracer = NodeLog(), RunCollectorCallbackHandler()
    app = trustgate.guard(builder, {"agent": text_gate()}).compile()
    with pytest.raises(GateHalted):
        for _ in app.stream(copy.deepcopy(ASK), {"callbacks": [held, tracer]}):
            pass
    assert not find_lies(held.outputs, LIES)
    runs = [r for top in tracer.traced_runs for r in _runs(top)]
    assert any(r.run_type == "llm" for r in runs), "the tracer was held"


def _runs(run: Any) -> list[Any]:
    return [run, *(r for child in run.child_runs for r in _runs(child))]


# --- 3. the gate's feedback on a re-render -----------------------------------------------------


class R(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    trust_issues: list[str]


def quoting_check(claims: Any, evidence: Any) -> list[Finding]:
    """A verifier whose finding quotes what it rejects (as most do: it names the
    record no source has)."""
    if LIE in str(claims):
        return [Finding.failed("ledger", "unsupported", f"no ledger has {LIE}", subject=LIE)]
    return [Finding.ok("ledger")]


def _rerender_gate(**rerender: Any) -> TrustGate:
    return TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(quoting_check, name="ledger")],
        policy=Rerender(then=Halt(), **rerender),
    )


def _corrected(messages: list[BaseMessage]) -> str:
    """Lies, until told what failed (in a message from the gate)."""
    told = any(isinstance(m, HumanMessage) and "failed verification" in m.text for m in messages)
    return TRUE_TEXT if told else LIE_TEXT


def test_rerender_feedback_message_is_not_streamed() -> None:
    """``Rerender(as_message=True)``: the passing attempt's model start event shows its
    input, the gate's feedback message quoting the lie."""
    builder = graph(_answer(streaming(_corrected)), R)
    gate = _rerender_gate(as_message=True, issues_key=None)
    a, _ = watched(builder, gate)
    a.assert_blocked()
    assert not any(o.halted for o in a.runs.values())
    assert_streams_answer(trustgate.guard(builder, {"agent": gate}).compile())


def test_rerender_issues_key_is_not_streamed() -> None:
    """``Rerender(issues_key=...)``: the node's input holds the issues, and the start
    events of the chain the node is (prompt, model, parser) show that input."""
    from langchain_core.runnables import RunnableLambda

    def agent_model(messages: list[BaseMessage]) -> str:
        return TRUE_TEXT if any(m.text == REVISE for m in messages) else LIE_TEXT

    def prompt(state: R) -> list[BaseMessage]:
        return [*state["messages"], *([HumanMessage(REVISE)] if state.get("trust_issues") else [])]

    def answer(message: BaseMessage) -> dict[str, Any]:
        return {"messages": [message]}

    chain = RunnableLambda(prompt) | streaming(agent_model) | RunnableLambda(answer)
    builder = graph(chain, R)
    gate = _rerender_gate(issues_key="trust_issues")
    a, _ = watched(builder, gate)
    a.assert_blocked()
    assert not any(o.halted for o in a.runs.values())
    assert_streams_answer(trustgate.guard(builder, {"agent": gate}).compile())


def _subgraph_node(model: ScriptedChatModel) -> Callable[..., Any]:
    """A node that runs a subgraph with its own memory (``checkpointer=True``)."""
    inner = StateGraph(R)
    inner.add_node("write", _answer(model))
    inner.add_edge(START, "write")
    inner.add_edge("write", END)
    sub = inner.compile(checkpointer=True)

    def agent(state: R) -> dict[str, Any]:
        return {"messages": [sub.invoke({"messages": state["messages"]})["messages"][-1]]}

    return agent


def test_rerender_feedback_stays_out_of_a_subgraphs_checkpoints() -> None:
    """A subgraph inside the node whose steps are released with it (``"subgraph"``
    declared) keeps its state in checkpoints: after a re-render that state holds the
    gate's feedback message. A first attempt that passes keeps the subgraph's memory."""
    gate = TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(quoting_check, name="ledger")],
        policy=Rerender(as_message=True, issues_key=None, then=Halt()),
        passthrough=["subgraph"],
    )
    a, _ = watched(graph(_subgraph_node(streaming(_corrected)), R), gate)
    a.assert_blocked()
    assert not any(o.halted for o in a.runs.values())

    honest = graph(_subgraph_node(streaming(TRUE_TEXT)), R)
    app = trustgate.guard(honest, {"agent": gate}).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    app.invoke(copy.deepcopy(ASK), config)
    rows = app.checkpointer.list(config)
    assert any(c.config["configurable"]["checkpoint_ns"] for c in rows)
