"""The audit's sample run: one run on a copy of the graph that cannot do harm.

While a sample run is active (a context variable, so other threads and runs are
untouched), every chat model answers from a recording stub instead of its provider,
every tool call is answered by a stub instead of the tool (unless ``run_tools``), and
models a node builds at run time with ``init_chat_model`` are stubs from the start (no
provider package or API key is needed). The stub models call each tool they are
offered once, with minimal arguments built from its schema, and answer a
structured-output request with a minimal valid object, so the run goes down tool and
handoff paths. A handoff tool (``Command.PARENT``) is answered by the handoff itself,
without running the tool's code, so the run follows it.

A model run inside a routing function (a conditional edge's path function) carries the
metadata of the node the edge leaves, but no gate on that node holds it: the sample run
keeps the tree of chain runs (a callback handler in the run's config) and counts such a
model run for the routing function, not for the node.

The patches touch LangChain's public model and tool entry points (``generate``,
``agenerate``, ``stream``, ``astream``, ``BaseTool.run``, ``BaseTool.arun``; each is
checked when installed). What is not public (the helper ``init_chat_model`` builds
providers through, the keyword a structured-output request arrives in, the run
metadata naming a node) is reached through named functions of
:mod:`trustgate._compat`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from trustgate import _compat
from trustgate.errors import GateHalted, LangGraphCompatibilityError, TrustgateError

logger = logging.getLogger(__name__)

STUB_REPLY = "(trustgate audit: stub model reply)"
STUB_TOOL_RESULT = "(trustgate audit: stub tool result; the tool did not run)"
_HANDOFF_KEY = "__handoff_destination"
DEFAULT_RECURSION_LIMIT = 50
"""Steps a sample run may take unless its config says otherwise: stub models can keep
a loop going that a real model would end."""


@dataclass
class Plan:
    graph: Any
    sample_input: Any
    config: RunnableConfig | None
    context: Any
    resume: list[Any]
    run_tools: bool


@dataclass
class _Scope:
    """What one sample run records, and what its stubs need to know."""

    run_tools: bool
    nodes: frozenset[str]
    branches: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Node → the names of the routing functions of its conditional edges."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    model_nodes: dict[str, int] = field(default_factory=dict)
    routing: dict[tuple[str, str], int] = field(default_factory=dict)
    unattributed: int = 0
    tool_calls: list[tuple[str | None, str, bool]] = field(default_factory=list)
    offered: set[str] = field(default_factory=set)
    runs: dict[UUID, tuple[UUID | None, str, str | None]] = field(default_factory=dict)
    """Chain runs in progress: run id → (parent run id, name, node)."""

    def model_call(self, metadata: Mapping[str, Any] | None, callbacks: Any = None) -> None:
        node = _node_of(metadata)
        route = self._routing_of(getattr(callbacks, "parent_run_id", None))
        with self.lock:
            if route is not None:
                self.routing[route] = self.routing.get(route, 0) + 1
            elif node is None:
                self.unattributed += 1
            else:
                self.model_nodes[node] = self.model_nodes.get(node, 0) + 1

    def _routing_of(self, run_id: UUID | None) -> tuple[str, str] | None:
        """(node, routing function) when a run inside one started the model run: a
        chain run named like one of the node's routing functions, started by the node's
        own run (LangGraph runs a branch's path in the node's task, after the node)."""
        with self.lock:
            for _ in range(256):  # a bound on the walk up the tree
                if run_id is None or run_id not in self.runs:
                    return None
                parent, name, node = self.runs[run_id]
                if node is not None and name in self.branches.get(node, ()):
                    up = self.runs.get(parent) if parent is not None else None
                    if up is not None and up[1] == node:
                        return node, name
                run_id = parent
        return None

    def tool_call(self, metadata: Mapping[str, Any] | None, tool: str, ran: bool) -> None:
        with self.lock:
            self.tool_calls.append((_node_of(metadata), tool, ran))

    def reply(self, messages: Sequence[BaseMessage], kwargs: Mapping[str, Any]) -> AIMessage:
        """A stub model's answer: structured output, one call per new tool, or text."""
        tools = [t for t in kwargs.get("tools") or [] if isinstance(t, Mapping)]
        schema = _compat.structured_output_schema(kwargs)
        if schema is not None and not tools:
            return AIMessage(content=json.dumps(minimal(schema)))
        if schema is not None and tools:
            name, params = _tool_schema(tools[0])
            return AIMessage(content="", tool_calls=[_call(name, minimal(params))])
        calls = []
        with self.lock:
            for t in tools:
                name, params = _tool_schema(t)
                if name and name not in self.offered:
                    self.offered.add(name)
                    calls.append(_call(name, minimal(params)))
        choice = kwargs.get("tool_choice")
        if tools and not calls and choice not in (None, "auto", "none", False):
            # the node demands a tool call: call the one it names, else the last offered
            named = choice if isinstance(choice, str) and choice not in ("any", "required") else ""
            pick = next((t for t in tools if _tool_schema(t)[0] == named), tools[-1])
            name, params = _tool_schema(pick)
            calls.append(_call(name, minimal(params)))
        return AIMessage(content=STUB_REPLY, tool_calls=calls)


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "trustgate_audit_sample_run", default=None
)


class _RunTree(BaseCallbackHandler):
    """Keeps the chain runs in progress of a sample run, so a model run can be traced
    to the routing function it was started in."""

    run_inline = True

    def __init__(self, scope: _Scope) -> None:
        super().__init__()
        self.scope = scope

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or ""
        node = (metadata or {}).get("langgraph_node")
        with self.scope.lock:
            self.scope.runs[run_id] = (
                parent_run_id,
                str(name),
                node if isinstance(node, str) else None,
            )

    def _end(self, run_id: UUID) -> None:
        with self.scope.lock:
            self.scope.runs.pop(run_id, None)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)


def _node_of(metadata: Mapping[str, Any] | None) -> str | None:
    return _compat.run_node(metadata)


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"audit_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def _tool_schema(tool: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    inner = tool.get("function")
    fn: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
    name = str(fn.get("name") or "")
    params = fn.get("parameters") or fn.get("input_schema") or {}
    return name, params if isinstance(params, Mapping) else {}


def minimal(
    schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None, depth: int = 0
) -> Any:
    """A small value a JSON schema accepts: required fields only, one item per array
    (so a fan-out over a planned list still fans out), booleans true (a stub judge
    approves, so a loop waiting for approval ends), enums their first value."""
    defs = {**(defs or {}), **(schema.get("$defs") or schema.get("definitions") or {})}
    if depth > 12:
        return None
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1])
        return minimal(target, defs, depth + 1) if isinstance(target, Mapping) else {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, Mapping)]
        options = [o for o in options if o.get("type") != "null"] or options
        if options:
            return minimal(options[0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {
            k: minimal(props[k], defs, depth + 1)
            for k in schema.get("required") or []
            if isinstance(props.get(k), Mapping)
        }
    if kind == "array":
        items = schema.get("items")
        return [minimal(items, defs, depth + 1)] if isinstance(items, Mapping) else []
    return {"string": "audit", "integer": 0, "number": 0, "boolean": True}.get(str(kind))


# --- the patches ---------------------------------------------------------------------------

_installed = False
_install_lock = threading.Lock()


def _install() -> None:
    """Put the stubs in place once; outside a sample run they call the originals."""
    global _installed
    with _install_lock:
        if _installed:
            return
        for cls, names in (
            (BaseChatModel, ("generate", "agenerate", "stream", "astream")),
            (BaseTool, ("run", "arun")),
        ):
            missing = [n for n in names if not callable(getattr(cls, n, None))]
            if missing:
                raise LangGraphCompatibilityError(
                    f"audit sample run: {cls.__name__} has no {', '.join(missing)}"
                )
        _patch_models()
        _patch_tools()
        _patch_factory()
        _installed = True


def _patch_models() -> None:
    generate, agenerate = BaseChatModel.generate, BaseChatModel.agenerate
    stream, astream = BaseChatModel.stream, BaseChatModel.astream

    def result(scope: _Scope, messages: Any, kwargs: dict[str, Any]) -> LLMResult:
        scope.model_call(kwargs.get("metadata"), kwargs.get("callbacks"))
        gens = [[ChatGeneration(message=scope.reply(list(m), kwargs))] for m in messages]
        return LLMResult(generations=cast(Any, gens))

    def s_generate(self: BaseChatModel, messages: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _SCOPE.get()
        if scope is None:
            return generate(self, messages, *args, **kwargs)
        return result(scope, messages, kwargs)

    async def s_agenerate(self: BaseChatModel, messages: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _SCOPE.get()
        if scope is None:
            return await agenerate(self, messages, *args, **kwargs)
        return result(scope, messages, kwargs)

    def s_stream(self: BaseChatModel, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if _SCOPE.get() is None:
            return stream(self, input, config, **kwargs)
        return _one_chunk(self.invoke(input, config, **kwargs))

    def s_astream(self: BaseChatModel, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if _SCOPE.get() is None:
            return astream(self, input, config, **kwargs)
        return _aone_chunk(self.ainvoke(input, config, **kwargs))

    BaseChatModel.generate = s_generate  # type: ignore[method-assign]
    BaseChatModel.agenerate = s_agenerate  # type: ignore[method-assign]
    BaseChatModel.stream = s_stream  # type: ignore[method-assign]
    BaseChatModel.astream = s_astream  # type: ignore[method-assign]


def _chunk(message: BaseMessage) -> AIMessageChunk:
    calls = [
        {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
        for i, c in enumerate(getattr(message, "tool_calls", []) or [])
    ]
    return AIMessageChunk(content=message.content, tool_call_chunks=cast(Any, calls))


def _one_chunk(message: BaseMessage) -> Iterator[AIMessageChunk]:
    yield _chunk(message)


async def _aone_chunk(pending: Any) -> AsyncIterator[AIMessageChunk]:
    yield _chunk(await pending)


def _patch_tools() -> None:
    run, arun = BaseTool.run, BaseTool.arun

    def s_run(self: BaseTool, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _SCOPE.get()
        if scope is None:
            return run(self, tool_input, *args, **kwargs)
        stub = _stub_tool(scope, self, tool_input, kwargs)
        return run(self, tool_input, *args, **kwargs) if stub is _RUN else stub

    async def s_arun(self: BaseTool, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _SCOPE.get()
        if scope is None:
            return await arun(self, tool_input, *args, **kwargs)
        stub = _stub_tool(scope, self, tool_input, kwargs)
        return await arun(self, tool_input, *args, **kwargs) if stub is _RUN else stub

    BaseTool.run = s_run  # type: ignore[method-assign]
    BaseTool.arun = s_arun  # type: ignore[method-assign]


_RUN = object()


def _stub_tool(scope: _Scope, tool: BaseTool, tool_input: Any, kwargs: Mapping[str, Any]) -> Any:
    """``_RUN`` to run the real tool, else what the stub answers instead."""
    config = kwargs.get("config") or {}
    metadata = {**(config.get("metadata") or {}), **(kwargs.get("metadata") or {})}
    target = _handoff_target(tool, scope.nodes)
    if scope.run_tools and target is None:
        scope.tool_call(metadata, tool.name, True)
        return _RUN
    scope.tool_call(metadata, tool.name, False)
    call_id = kwargs.get("tool_call_id")
    if target is not None:
        from langgraph.types import Command

        note = f"Successfully transferred to {target}"
        update = (
            {"messages": [ToolMessage(note, tool_call_id=call_id, name=tool.name)]}
            if call_id
            else None
        )
        return Command(goto=target, graph=Command.PARENT, update=update)
    if call_id:
        return ToolMessage(STUB_TOOL_RESULT, tool_call_id=call_id, name=tool.name)
    return STUB_TOOL_RESULT


def _handoff_target(tool: BaseTool, nodes: frozenset[str]) -> str | None:
    """The node a handoff tool hands over to (``None`` for any other tool)."""
    meta = tool.metadata or {}
    if isinstance(meta.get(_HANDOFF_KEY), str) and meta[_HANDOFF_KEY] in nodes:
        return str(meta[_HANDOFF_KEY])
    fn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    code = getattr(fn, "__code__", None)
    if code is None or "PARENT" not in code.co_names:
        return None
    strings = {c for c in code.co_consts if isinstance(c, str)}
    for cell in getattr(fn, "__closure__", None) or ():
        with contextlib.suppress(ValueError):
            if isinstance(cell.cell_contents, str):
                strings.add(cell.cell_contents)
    matched = sorted(strings & nodes)
    return matched[0] if len(matched) == 1 else None


class _StubChatModel(BaseChatModel):
    """What ``init_chat_model`` returns during a sample run: no provider is loaded."""

    requested: str = ""

    @property
    def _llm_type(self) -> str:
        return "trustgate-audit-stub"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        scope = _SCOPE.get()
        if scope is None:
            raise TrustgateError("the audit's stub model was called outside a sample run")
        return ChatResult(generations=[ChatGeneration(message=scope.reply(messages, kwargs))])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def _patch_factory() -> None:
    def wrap(helper: Callable[..., Any]) -> Callable[..., Any]:
        def s_helper(model: str, *, model_provider: str | None = None, **kwargs: Any) -> Any:
            if _SCOPE.get() is None:
                return helper(model, model_provider=model_provider, **kwargs)
            return _StubChatModel(requested=f"{model_provider or ''}:{model}")

        return s_helper

    _compat.wrap_chat_model_factory(wrap)


# --- running it ------------------------------------------------------------------------------


@dataclass
class Outcome:
    model_nodes: dict[str, int]
    sample: Any  # trustgate._audit._results.SampleRun
    routing: dict[tuple[str, str], int] = field(default_factory=dict)
    """(node, routing function) → model runs started inside that routing function."""


class _Run:
    """One sample run on a copy: fresh in-memory checkpointer, a new thread."""

    def __init__(self, plan: Plan) -> None:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph.state import CompiledStateGraph

        from trustgate._audit._discovery import _builder_of
        from trustgate._compat import copy_builder

        graph = plan.graph
        # the user's serializer, when there is one, knows the graph's own state types
        serde = getattr(getattr(graph, "checkpointer", None), "serde", None)
        saver = InMemorySaver(serde=serde) if serde is not None else InMemorySaver()
        if isinstance(graph, CompiledStateGraph):
            update: dict[str, Any] = {"checkpointer": saver}
            if graph.store is not None:
                from langgraph.store.memory import InMemoryStore

                update["store"] = InMemoryStore()  # the user's store gets no sample writes
            self.app: Any = graph.copy(update)
        else:
            self.app = copy_builder(graph, type(graph)).compile(checkpointer=saver)
        self.plan = plan
        builder = _builder_of(graph)
        branches: dict[str, set[str]] = {}
        for node, name, _path, _ends in _compat.branch_paths(builder):
            branches.setdefault(node, set()).add(name)
        self.scope = _Scope(
            run_tools=plan.run_tools,
            nodes=frozenset(builder.nodes),
            branches={k: frozenset(v) for k, v in branches.items()},
        )
        cfg: dict[str, Any] = dict(plan.config or {})
        if cfg.get("callbacks") is not None and not isinstance(cfg["callbacks"], list):
            from trustgate.errors import ConfigurationError

            raise ConfigurationError("audit(): pass config callbacks as a list of handlers")
        cfg["callbacks"] = [*(cfg.get("callbacks") or []), _RunTree(self.scope)]
        configurable = dict(cfg.get("configurable") or {})
        configurable["thread_id"] = f"trustgate-audit-{uuid.uuid4().hex}"
        cfg["configurable"] = configurable
        cfg.setdefault("recursion_limit", DEFAULT_RECURSION_LIMIT)
        self.config = cast(RunnableConfig, cfg)
        self.resume = list(plan.resume)
        self.resumed = 0
        self.outcome = "finished"
        self.detail = ""
        self.unreached: tuple[str, ...] = ()

    def next_input(self, current: Any) -> Any:
        """After one invoke: the resume command to go on with, or None to stop."""
        from langgraph.types import Command

        snapshot = self.app.get_state(self.config)
        pending = [t.name for t in snapshot.tasks if t.interrupts]
        if not pending and not snapshot.interrupts:
            if snapshot.next:
                self.outcome, self.detail = (
                    "interrupted",
                    f"paused before {', '.join(snapshot.next)}",
                )
                self.unreached = tuple(snapshot.next)
            return None
        if self.resume:
            self.resumed += 1
            return Command(resume=self.resume.pop(0))
        self.outcome = "interrupted"
        self.detail = f"interrupt in {', '.join(pending) or '?'} with no resume value left"
        self.unreached = tuple(pending)
        return None

    def failed(self, exc: BaseException) -> None:
        if isinstance(exc, GateHalted):  # an outcome, reported as one
            self.outcome, self.detail = "halted", str(exc)
        else:
            logger.warning("audit: the sample run failed (reported as 'error')", exc_info=exc)
            self.outcome, self.detail = "error", f"{type(exc).__name__}: {exc}"

    def result(self) -> Outcome:
        from trustgate._audit._results import SampleRun, SampleToolCall

        first = self.detail.splitlines()[0] if self.detail else ""
        return Outcome(
            model_nodes=dict(self.scope.model_nodes),
            routing=dict(self.scope.routing),
            sample=SampleRun(
                outcome=cast(Any, self.outcome),
                detail=first[:500],
                model_nodes=tuple(self.scope.model_nodes),
                model_routing=tuple(f"{n}:{f}" for n, f in self.scope.routing),
                unattributed=self.scope.unattributed,
                tool_calls=tuple(
                    SampleToolCall(node=n, tool=t, ran=r) for n, t, r in self.scope.tool_calls
                ),
                resumed=self.resumed,
                unreached=self.unreached,
                run_tools=self.plan.run_tools,
            ),
        )


def _start(plan: Plan) -> _Run | Outcome:
    from trustgate._audit._results import SampleRun

    _install()
    try:
        return _Run(plan)
    except TrustgateError:
        raise
    except Exception as exc:  # e.g. a builder that does not compile
        logger.warning("audit: the sample run could not start", exc_info=True)
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
        return Outcome({}, SampleRun(outcome="error", detail=detail, run_tools=plan.run_tools))


_MAX_ROUNDS = 100


def run(plan: Plan) -> Outcome:
    started = _start(plan)
    if isinstance(started, Outcome):
        return started
    token = _SCOPE.set(started.scope)
    try:
        current: Any = plan.sample_input
        for _ in range(_MAX_ROUNDS):
            started.app.invoke(current, started.config, context=plan.context)
            current = started.next_input(current)
            if current is None:
                break
    except Exception as exc:  # the sample run is best effort: report what was seen
        started.failed(exc)
    finally:
        _SCOPE.reset(token)
    return started.result()


async def arun(plan: Plan) -> Outcome:
    started = _start(plan)
    if isinstance(started, Outcome):
        return started
    token = _SCOPE.set(started.scope)
    try:
        current: Any = plan.sample_input
        for _ in range(_MAX_ROUNDS):
            await started.app.ainvoke(current, started.config, context=plan.context)
            current = started.next_input(current)
            if current is None:
                break
    except Exception as exc:  # the sample run is best effort: report what was seen
        started.failed(exc)
    finally:
        _SCOPE.reset(token)
    return started.result()
