"""The same gates as ``langchain.agents.create_agent`` middleware.

``TrustGateMiddleware`` runs its model gates *around* the model call
(``wrap_model_call`` / ``awrap_model_call``) and its tool gates around each tool call
(``wrap_tool_call`` / ``awrap_tool_call``). Neither is a node of the agent's graph, so
no other middleware's jump (``jump_to="end"`` from an ``after_model`` hook, as
``ToolCallLimitMiddleware(exit_behavior="end")`` does) can route around them.

Why around the model call, from how ``langchain.agents.factory.create_agent`` (1.x)
builds the model node:

* the innermost handler (``_execute_model_sync`` / ``_execute_model_async``) calls
  the model, then parses structured output in ``_handle_model_output``, inside the
  handler chain, for both strategies: with ``ProviderStrategy`` it parses the
  message's text into ``structured_response``; with ``ToolStrategy`` it turns the
  structured-output tool call into ``structured_response`` and adds a ``ToolMessage``
  acknowledging it (or, on a parse error with ``handle_errors``, a ``ToolMessage``
  quoting the error). It returns ``ModelResponse(result=[...], structured_response=...)``;
* the ``wrap_model_call`` hooks are composed around it, the first listed outermost;
  a hook may return ``ExtendedModelResponse(command=...)``, whose command the
  composition keeps apart from the response;
* the model node then writes ``Command(update={"messages": result,
  "structured_response": ...})`` followed by those commands (``_build_commands``), and
  only after that do the ``after_model`` hooks run, as separate nodes, last listed
  first, any of them able to jump to the end.

So a gate in ``after_model`` (as before) saw one message of a step that may add
several, never saw ``structured_response``, ran after the step was checkpointed and
streamed, and was skipped by a jump. Around the model call the gate sees the whole
``ModelResponse`` before anything is written: every message in ``result``,
``structured_response``, and the commands of ``wrap_model_call`` middleware listed
after it (read from the composition, :func:`~trustgate._compat.model_call_commands`).
They are one :class:`~trustgate._output.NodeOutput`; every part is verified, declared
(``passthrough=``) or held, and a held part halts. A rewrite is applied to the
response the hook returns, so what the model node writes is what the gates released.
A halt raises :class:`~trustgate.errors.GateHalted` before the model node writes
anything; the report is kept beside the failed task (``trustgate.reports(agent,
config)`` finds it). While the model runs, what it streams (tokens for
``stream_mode="messages"``, ``astream_events``, a token handler of yours) is held and
replayed only when the gates release the response unchanged
(:class:`~trustgate.graph._streams.StreamHold`), and an exception from the model step
(a parse failure quotes the model's output) loses its message unless a gate declares
``passthrough=["error"]``.

What the model node writes that is not in the response: when ``response_format`` is
set and no structured response came, ``structured_response=None`` (a reset, no model
content); and when earlier state holds invalid tool calls nobody answered, LangChain's
fixed-text error ``ToolMessage`` for each, with the history re-sent. Neither carries
what the model said in this step.

List ``TrustGateMiddleware`` first: a ``wrap_model_call`` middleware listed before it
wraps it and can change the released response (its own code, not the model's), or
answer without calling the model at all. A ``Review`` policy cannot be a model gate
here (the resumed step would call the model again, and the person's answer would
release a response they never saw): guard the model node with
``trustgate.guard(agent, {"model": gate})``, which keeps the model's answer across
the pause.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from trustgate import _compat
from trustgate._gate import ChainResult, Context, GateResult, TrustGate, adrive, drive, run_chain
from trustgate._output import NodeOutput, without_tool_calls
from trustgate._report import REPORTS_KEY, Report, ReportLog, for_stream, gate_json
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.graph._node import HaltedInGraph, withhold
from trustgate.graph._streams import StreamHold
from trustgate.readers import covered

__all__ = ["TrustGateAgentState", "TrustGateMiddleware"]

logger = logging.getLogger(__name__)


class TrustGateAgentState(AgentState[Any]):
    """Agent state with the ``trust_reports`` channel."""

    trust_reports: NotRequired[Annotated[list[Report], ReportLog]]


def _emit(runtime: Any, report: Report) -> None:
    """The report on the custom stream, content-free unless content capture is on (the
    stream reaches end users; the state channel keeps the full report)."""
    writer = getattr(runtime, "stream_writer", None)
    if writer is not None:
        writer({"trustgate": for_stream(report)})


def _report_writes(reports: Sequence[Report]) -> list[tuple[str, Any]]:
    return [(REPORTS_KEY, gate_json(reports))]


def _blocked_message(call: Mapping[str, Any], results: Sequence[GateResult]) -> ToolMessage:
    failed = [f for r in results for f in r.report.failed]
    reasons = "; ".join(f"{f.verifier}/{f.code}: {f.message}" for f in failed) or "blocked"
    return ToolMessage(
        content=f"Tool call blocked by trustgate: {reasons}",
        tool_call_id=str(call.get("id") or ""),
        name=str(call.get("name") or ""),
        status="error",
    )


def _asks(gates: Sequence[TrustGate[Any]]) -> list[str]:
    """Gates whose policy chain may pause for a person."""
    out = []
    for g in gates:
        todo = list(g.policies)
        while todo:
            p = todo.pop()
            if getattr(p, "pauses", False):
                out.append(g.name)
                break
            nxt = getattr(p, "then", None)
            if nxt is not None:
                todo.append(nxt)
    return out


_ACK = "Returning structured response: {}"
"""The acknowledgement LangChain's ToolStrategy writes unless ``tool_message_content``
is set (``langchain.agents.factory._handle_model_output``)."""


def _rederived(messages: list[Any], before: Any, after: Any) -> list[Any]:
    """A rewritten ``structured_response`` in the other forms of the same answer.

    With ``ToolStrategy`` the model's structured-output tool call is what LangChain
    parsed ``structured_response`` from, and its acknowledging ``ToolMessage`` quotes
    it; a policy that rewrote ``structured_response`` rewrote the answer, so both are
    derived again from the released value (the only ``ToolMessage`` a model step
    holds is one LangChain wrote for a structured-output call)."""
    from pydantic_core import to_jsonable_python

    acks = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    if not acks:
        return messages
    args = to_jsonable_python(after, fallback=repr)
    out = list(messages)
    for i, m in enumerate(out):
        if isinstance(m, ToolMessage) and m.content == _ACK.format(before):
            out[i] = m.model_copy(update={"content": _ACK.format(after)})
        elif isinstance(m, AIMessage) and any(c.get("id") in acks for c in m.tool_calls):
            ids = {c.get("id") for c in m.tool_calls if c.get("id") in acks}
            calls = [
                {**c, "args": args} if c.get("id") in ids else c
                for c in m.tool_calls
                if c.get("id") not in ids or isinstance(args, dict)
            ]  # a value that is no object cannot be a call's arguments: the call goes
            out[i] = without_tool_calls(m, ids).model_copy(update={"tool_calls": calls})
    return out


@dataclasses.dataclass
class _Step:
    """One model call in progress: what the gates see and what goes back."""

    config: dict[str, Any]
    hold: StreamHold
    inner: list[Any] | None  # commands of the wrap_model_call hooks inside this one
    output: NodeOutput | None = None


class TrustGateMiddleware(AgentMiddleware[TrustGateAgentState, Any, Any]):
    """Trust gates inside ``create_agent``: around the model call and each tool call.

    ``model_gates`` run around the model call (``wrap_model_call``) and see everything
    the model step produced, before any of it is written or streamed: the update
    ``{"messages": [...every message of the step...], "structured_response": ...}``
    (use ``LastAIText()``, ``ToolCallArgs()``, ``FromKey("structured_response")``),
    plus what ``wrap_model_call`` middleware listed after this one adds. Each part is
    verified, declared (``passthrough=``) or held, and a held part halts the step: with
    ``ToolStrategy`` the step is the model's tool call, LangChain's acknowledging
    ``ToolMessage`` and ``structured_response``; with ``ProviderStrategy`` the message
    text and ``structured_response``. A rewrite (``BlockToolCalls``, ``Override`` on
    ``structured_response.<field>``, ``Redact``) is what the model node writes; a halt
    raises :class:`~trustgate.errors.GateHalted` and nothing of the step is written.

    ``tool_gates`` see one tool call at a time, as a message holding only that call
    (use ``ToolCallArgs()``), before it runs (``wrap_tool_call``); a tool call is
    released only if every tool gate releases it unchanged, otherwise it never runs and
    the agent gets an error ``ToolMessage`` naming the failed findings.

    Every crossing's report goes to ``trust_reports``; a halted one is kept beside the
    failed task, where :func:`trustgate.reports` finds it. List this middleware first
    (see the module docstring). Model gates cannot use ``Review``: guard the model
    node with ``trustgate.guard(agent, {"model": gate})`` for that.

    Example:
        ```python
        agent = create_agent(
            model,
            tools,
            middleware=[TrustGateMiddleware(tool_gates=[close_item_gate])],
        )
        ```
    """

    state_schema = TrustGateAgentState

    def __init__(
        self,
        *,
        model_gates: Sequence[TrustGate[Any]] = (),
        tool_gates: Sequence[TrustGate[Any]] = (),
        name: str = "TrustGateMiddleware",
    ) -> None:
        super().__init__()
        if not model_gates and not tool_gates:
            raise ConfigurationError("TrustGateMiddleware needs model_gates or tool_gates")
        asking = _asks(model_gates)
        if asking:
            raise ConfigurationError(
                f"model gate(s) {asking} may ask a person (Review): around the model call "
                "a resumed step would call the model again, and the answer would release "
                "a response the person never saw. Guard the model node instead: "
                "trustgate.guard(agent, {'model': gate}) keeps the model's answer across "
                "the pause"
            )
        if model_gates:
            _compat.check_model_call_chain()
        self.model_gates = tuple(model_gates)
        self.tool_gates = tuple(tool_gates)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    # -- the model step -----------------------------------------------------------

    @property
    def _strict(self) -> bool:
        return not any("*" in g.passthrough for g in self.model_gates)

    @property
    def _nested_passes(self) -> bool:
        return any(covered("subgraph", g.passthrough) for g in self.model_gates)

    def _start(self, handler: Any) -> _Step:
        config = dict(_compat.current_config() or {})
        inner = _compat.model_call_commands(handler)
        return _Step(config, StreamHold(config, strict=self._strict), inner)

    def _failed(self, step: _Step, exc: BaseException) -> BaseException:
        step.hold.close()
        return withhold(exc, self.model_gates, "model")

    def _read(self, request: ModelRequest[Any], response: ModelResponse[Any], step: _Step) -> Any:
        """The model step as one output, and the chain of gates over it."""
        update: dict[str, Any] = {"messages": list(response.result)}
        if response.structured_response is not None:
            update["structured_response"] = response.structured_response
        value: Any = [update, *step.inner] if step.inner else update
        state = request.state
        out = NodeOutput.read(value, input=state, sent=step.hold.sent)
        out.custom = list(step.hold.custom)
        out.store_writes = step.hold.store_writes()
        step.output = out
        runtime = request.runtime
        ctx = Context(
            node="model",
            state=state,
            context=getattr(runtime, "context", None),
            meta=_compat.meta(step.config),
            config=step.config,
        )
        return run_chain(self.model_gates, out, ctx)

    def _halted(self, step: _Step, chain: ChainResult, runtime: Any) -> GateHalted | None:
        last = chain.last
        if last.route == "release" and last.output is not None:
            return None
        step.hold.close()
        for r in chain.reports:
            _emit(runtime, r)
        return HaltedInGraph(last.report)

    def _released(
        self, step: _Step, chain: ChainResult, response: ModelResponse[Any], runtime: Any
    ) -> ExtendedModelResponse[Any]:
        """What the gates released, as the response the model node writes."""
        released = cast(NodeOutput, chain.last.output)
        hold = step.hold
        unchanged = not released.rewritten
        if unchanged and self._nested_passes:
            hold.keep_checkpoints()
        hold.release(everything=unchanged, nested=self._nested_passes)
        hold.close()
        if released.store_writes:
            _compat.put_to_store(step.config, released.store_writes)
        sent = released.sent_writes()
        if sent:
            _compat.send(step.config, sent)
        for r in chain.reports:
            _emit(runtime, r)
        value = released.rebuild()
        if step.inner is not None and isinstance(value, list):
            update, *rest = value
            step.inner[:] = rest  # the model node writes these after the response
        else:
            update = value
        if unchanged:
            out = response
        else:
            structured = update.get("structured_response")
            messages = list(update["messages"])
            before = response.structured_response
            if structured is not None and before is not None and structured != before:
                messages = _rederived(messages, before, structured)
            out = ModelResponse(result=messages, structured_response=structured)
        reports: Command[Any] = Command(update={REPORTS_KEY: gate_json(chain.reports)})
        return ExtendedModelResponse(model_response=out, command=reports)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        if not self.model_gates:
            return handler(request)
        step = self._start(handler)
        token = _compat.set_config(step.hold.config)
        failure: BaseException | None = None
        try:
            response = handler(request)
        except BaseException as exc:
            failure = self._failed(step, exc)
            if failure is exc:
                raise
        finally:
            _compat.reset_config(token)
        if failure is not None:  # raised outside the except block: not chained to it
            raise failure
        chain = drive(self._read(request, response, step))
        halt = self._halted(step, chain, request.runtime)
        if halt is not None:
            _compat.keep_aside(step.config, _report_writes(chain.reports))
            raise halt
        return self._released(step, chain, response, request.runtime)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        if not self.model_gates:
            return await handler(request)
        step = self._start(handler)
        token = _compat.set_config(step.hold.config)
        failure: BaseException | None = None
        try:
            response = await handler(request)
        except BaseException as exc:
            failure = self._failed(step, exc)
            if failure is exc:
                raise
        finally:
            _compat.reset_config(token)
        if failure is not None:  # raised outside the except block: not chained to it
            raise failure
        chain = await adrive(self._read(request, response, step))
        halt = self._halted(step, chain, request.runtime)
        if halt is not None:
            await _compat.akeep_aside(step.config, _report_writes(chain.reports))
            raise halt
        return self._released(step, chain, response, request.runtime)

    # -- tool calls ---------------------------------------------------------------

    def _tool_update(self, request: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", tool_calls=[request.tool_call])]}

    @staticmethod
    def _cleared(results: list[GateResult], update: dict[str, Any]) -> bool:
        if not results or any(not r.released for r in results):
            return False
        final = results[-1].update or {}
        calls = [c.get("id") for c in final["messages"][-1].tool_calls]
        want = [c.get("id") for c in update["messages"][-1].tool_calls]
        return calls == want and all(r.report.decision in ("pass", "reviewed") for r in results)

    def _finish(
        self, request: Any, results: list[GateResult], outcome: ToolMessage | Command[Any] | None
    ) -> ToolMessage | Command[Any]:
        runtime = getattr(request, "runtime", None)
        for r in results:
            _emit(runtime, r.report)
        reports = gate_json(r.report for r in results)
        if outcome is None:
            message = _blocked_message(request.tool_call, results)
            return Command(update={"messages": [message], REPORTS_KEY: reports})
        if isinstance(outcome, ToolMessage):
            return Command(update={"messages": [outcome], REPORTS_KEY: reports})
        update = outcome.update
        if outcome.graph is None and isinstance(update, dict) and REPORTS_KEY not in update:
            return dataclasses.replace(outcome, update={**update, REPORTS_KEY: reports})
        # a command for the parent graph, or an update of another shape: the reports
        # are the tool task's own write, beside whatever the tool returned
        config = getattr(runtime, "config", None) or _compat.current_config() or {}
        if not _compat.send(config, [(REPORTS_KEY, reports)]):
            logger.warning("a tool crossing's report could not be written to the state")
        return outcome

    def _tool_chain(self, request: Any) -> tuple[Any, dict[str, Any]]:
        update = self._tool_update(request)
        state = request.state if isinstance(request.state, Mapping) else {}
        context = getattr(getattr(request, "runtime", None), "context", None)
        output = NodeOutput.read(update, input=None)
        return run_chain(self.tool_gates, output, Context("tools", state, context)), update

    def wrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        if not self.tool_gates:
            return handler(request)
        chain, update = self._tool_chain(request)
        results = drive(chain).results
        if not self._cleared(results, update):
            return self._finish(request, results, None)
        return self._finish(request, results, handler(request))

    async def awrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if not self.tool_gates:
            return await handler(request)
        chain, update = self._tool_chain(request)
        results = (await adrive(chain)).results
        if not self._cleared(results, update):
            return self._finish(request, results, None)
        return self._finish(request, results, await handler(request))
