"""The same gates as ``langchain.agents.create_agent`` middleware.

``TrustGateMiddleware`` runs gates on the model's output (``after_model``) and on
each tool call before the tool executes (``wrap_tool_call`` / ``awrap_tool_call``). A
blocked tool call never runs: the agent gets an error ``ToolMessage`` naming the
failed findings instead.

An ``after_model`` hook runs after the model node has written its message, so the
message is briefly in a checkpoint and in token streams before the gate rewrites
it. Where that matters, ``trustgate.guard(agent, {"model": gate})`` runs the gate
inside the model node's own task instead: nothing it has not released is written or
streamed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from trustgate._gate import Context, GateResult, TrustGate, adrive, drive, run_chain
from trustgate._output import NodeOutput
from trustgate._report import REPORTS_KEY, Report, ReportLog, for_stream
from trustgate.errors import ConfigurationError, GateHalted

__all__ = ["TrustGateAgentState", "TrustGateMiddleware"]


class TrustGateAgentState(AgentState[Any]):
    """Agent state with the ``trust_reports`` channel."""

    trust_reports: NotRequired[Annotated[list[Report], ReportLog]]


def _emit(runtime: Any, report: Report) -> None:
    """The report on the custom stream, content-free unless content capture is on (the
    stream reaches end users; the state channel keeps the full report)."""
    writer = getattr(runtime, "stream_writer", None)
    if writer is not None:
        writer({"trustgate": for_stream(report)})


def _blocked_message(call: Mapping[str, Any], results: Sequence[GateResult]) -> ToolMessage:
    failed = [f for r in results for f in r.report.failed]
    reasons = "; ".join(f"{f.verifier}/{f.code}: {f.message}" for f in failed) or "blocked"
    return ToolMessage(
        content=f"Tool call blocked by trustgate: {reasons}",
        tool_call_id=str(call.get("id") or ""),
        name=str(call.get("name") or ""),
        status="error",
    )


class TrustGateMiddleware(AgentMiddleware[TrustGateAgentState, Any, Any]):
    """Trust gates inside ``create_agent``: on model output and before each tool call.

    ``model_gates`` see the model's last message as the update
    ``{"messages": [message]}`` (use ``LastAIText()`` or ``ToolCallArgs()``);
    ``tool_gates`` see one tool call at a time, as a message holding only that call
    (use ``ToolCallArgs()``); a tool call is released only if every tool gate
    releases it unchanged.

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
        model_gates: Sequence[TrustGate] = (),
        tool_gates: Sequence[TrustGate] = (),
        name: str = "TrustGateMiddleware",
    ) -> None:
        super().__init__()
        if not model_gates and not tool_gates:
            raise ConfigurationError("TrustGateMiddleware needs model_gates or tool_gates")
        self.model_gates = tuple(model_gates)
        self.tool_gates = tuple(tool_gates)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    # -- model output -------------------------------------------------------------

    def _model_update(self, state: Mapping[str, Any]) -> dict[str, Any] | None:
        messages = list(state.get("messages") or [])
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        return {"messages": [messages[-1]]}

    def _after(
        self, results: list[GateResult], original: dict[str, Any], runtime: Any
    ) -> dict[str, Any] | None:
        for r in results:
            _emit(runtime, r.report)
        halted = [r for r in results if not r.released]
        if halted:
            raise GateHalted(halted[0].report)
        update: dict[str, Any] = {REPORTS_KEY: [r.report.to_json_dict() for r in results]}
        final = results[-1].update if results else None
        if final is not None and final.get("messages") != original["messages"]:
            update["messages"] = final["messages"]
        return update

    def _model_chain(self, state: Any, runtime: Any) -> Any:
        original = self._model_update(state)
        if original is None or not self.model_gates:
            return None, None
        output = NodeOutput.read(original, input=None)
        ctx = Context("model", state, getattr(runtime, "context", None))
        return original, run_chain(self.model_gates, output, ctx)

    def after_model(
        self, state: TrustGateAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        original, chain = self._model_chain(state, runtime)
        if chain is None:
            return None
        return self._after(drive(chain).results, original, runtime)

    async def aafter_model(
        self, state: TrustGateAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        original, chain = self._model_chain(state, runtime)
        if chain is None:
            return None
        return self._after((await adrive(chain)).results, original, runtime)

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
        return calls == want and all(r.report.decision in ("pass", "review") for r in results)

    def _finish(
        self, request: Any, results: list[GateResult], outcome: ToolMessage | Command[Any] | None
    ) -> ToolMessage | Command[Any]:
        runtime = getattr(request, "runtime", None)
        for r in results:
            _emit(runtime, r.report)
        reports = [r.report.to_json_dict() for r in results]
        if outcome is None:
            message = _blocked_message(request.tool_call, results)
            return Command(update={"messages": [message], REPORTS_KEY: reports})
        if isinstance(outcome, ToolMessage):
            return Command(update={"messages": [outcome], REPORTS_KEY: reports})
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
