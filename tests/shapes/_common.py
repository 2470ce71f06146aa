"""What every shape shares: the run record, the scripted-model registry, the refund domain.

A shape is only useful to the bypass matrix and to the audit tests if a test can see
where a lie went: into which tool execution (with which arguments), into which
downstream node's input, into the final state, into a stream. The :class:`Recorder`
holds the first two; the :class:`Shape` bundles a built graph with everything needed
to run it the way its authors do (inputs, run-time context or configuration, resume
values for its interrupts).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from trustgate.testing import ScriptedChatModel

Personality = Literal["honest", "lying"]

SCRIPTED_PROVIDER = "scripted"
"""The provider name a shape's run-time model loader resolves from :data:`MODELS`."""


# --- scripted models, named the way the real shapes name their models ------------------


class _Registry:
    """Scripted models by name, so a shape can build its model at run time from a string
    (``"scripted/react-lying-1a2b"``) exactly where the original calls
    ``init_chat_model``."""

    def __init__(self) -> None:
        self._models: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()

    def register(self, model: BaseChatModel, label: str) -> str:
        name = f"{label}-{uuid.uuid4().hex[:8]}"
        with self._lock:
            self._models[name] = model
        return name

    def get(self, name: str) -> BaseChatModel:
        with self._lock:
            try:
                return self._models[name]
            except KeyError:
                raise ValueError(f"no scripted model registered as {name!r}") from None


MODELS = _Registry()


def resolve_chat_model(model: str, provider: str | None) -> BaseChatModel:
    """What the shapes' loaders call instead of ``init_chat_model`` for a scripted name.

    Any other provider goes to LangChain's ``init_chat_model``, as in the originals;
    the tests only ever name scripted models.
    """
    if provider == SCRIPTED_PROVIDER:
        return MODELS.get(model)
    from langchain.chat_models import init_chat_model

    return init_chat_model(model, model_provider=provider)


_ids = itertools.count(1)


def call(name: str, **args: Any) -> ToolCall:
    """A tool call as a provider returns it (unique id per call)."""
    return ToolCall(name=name, args=args, id=f"call_{name}_{next(_ids)}", type="tool_call")


def ai(content: str = "", *calls: ToolCall, name: str | None = None) -> AIMessage:
    return AIMessage(content=content, tool_calls=list(calls), name=name)


def responder(
    personality: Personality, fn: Callable[[list[BaseMessage]], AIMessage | str]
) -> ScriptedChatModel:
    """A scripted model that answers from what it is shown, so one model serves any
    number of turns, threads and re-runs."""
    return ScriptedChatModel(responses=[fn], personality=personality, repeat_last=True)


def text_of(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages)


def tool_results(messages: Sequence[BaseMessage], name: str) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage) and m.name == name]


# --- what happened during a run -------------------------------------------------------------


@dataclass(frozen=True)
class ToolRun:
    """One real execution of a shape's tool: its name and arguments."""

    tool: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class NodeInput:
    """The input one node run started with: ``node`` is the node's own name,
    ``path`` the names of the graphs around it from the top (``("section", "write")``)."""

    node: str
    path: tuple[str, ...]
    value: Any


class Recorder(BaseCallbackHandler):
    """Records tool executions (the shape's tools call :meth:`tool_ran`) and the input of
    every node run (as a callback handler in the run's config).

    Each tool execution also appends a line to ``<marker_dir>/<tool>.ran``, so a test
    can tell from the file system alone whether a real tool ran.
    """

    raise_error = True
    run_inline = True

    def __init__(self, marker_dir: Path | None = None) -> None:
        super().__init__()
        self.marker_dir = marker_dir
        self._lock = threading.Lock()
        self.tool_runs: list[ToolRun] = []
        self.node_inputs: list[NodeInput] = []

    # tools
    def tool_ran(self, tool: str, **args: Any) -> None:
        with self._lock:
            self.tool_runs.append(ToolRun(tool, dict(args)))
            if self.marker_dir is not None:
                self.marker_dir.mkdir(parents=True, exist_ok=True)
                with (self.marker_dir / f"{tool}.ran").open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(args, default=str) + "\n")

    def markers(self) -> list[Path]:
        """The marker files real tool executions wrote."""
        if self.marker_dir is None or not self.marker_dir.exists():
            return []
        return sorted(self.marker_dir.glob("*.ran"))

    # node inputs
    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, **kwargs: Any) -> None:
        metadata = kwargs.get("metadata") or {}
        node = metadata.get("langgraph_node")
        if not isinstance(node, str) or kwargs.get("name") != node:
            return  # a runnable inside a node, not the node itself
        ns = str(metadata.get("langgraph_checkpoint_ns") or "")
        path = tuple(part.split(":", 1)[0] for part in ns.split("|") if part)
        with self._lock:
            self.node_inputs.append(NodeInput(node, path or (node,), inputs))

    def inputs_of(self, node: str) -> list[Any]:
        """Inputs of every run of ``node`` (at any depth)."""
        with self._lock:
            return [n.value for n in self.node_inputs if n.node == node]

    def reset(self) -> None:
        with self._lock:
            self.tool_runs.clear()
            self.node_inputs.clear()


# --- a built shape ----------------------------------------------------------------------------


@dataclass
class Shape:
    """A real third-party graph shape, built with scripted models, ready to run.

    ``builder`` is the uncompiled ``StateGraph`` (what ``guard()`` takes), ``app`` the
    same graph compiled with an in-memory checkpointer. ``lie_node`` is the top-level
    node whose output carries the lie in the lying build (``lies`` are text fragments
    only the lie contains; the honest build never produces them). ``model_nodes`` are
    the top-level nodes whose output is model output; ``handoffs`` maps a node to the
    nodes its ``Command.PARENT`` handoffs can reach.
    """

    name: str
    personality: Personality
    builder: Any
    app: Any
    inputs: Any
    lies: tuple[str, ...]
    lie_node: str
    model_nodes: tuple[str, ...]
    recorder: Recorder
    models: dict[str, ScriptedChatModel]
    context: Any = None
    configurable: dict[str, Any] = field(default_factory=dict)
    resume: tuple[Any, ...] = ()
    is_async: bool = False
    handoffs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    """The shape's tools that write a marker file when they really execute."""
    downstream: tuple[str, ...] = ()
    """Nodes (at any depth) whose input receives the lie in an unguarded lying run."""
    lie_tools: tuple[str, ...] = ()
    """Tools whose arguments carry the lie in an unguarded lying run."""
    state_types: tuple[tuple[str, str], ...] = ()
    """(module, class) of the shape's own types kept in checkpoints (allowed to load)."""

    def checkpointer(self) -> InMemorySaver:
        """An in-memory checkpointer that may load the shape's own state types."""
        if not self.state_types:
            return InMemorySaver()
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        return InMemorySaver(
            serde=JsonPlusSerializer(allowed_msgpack_modules=list(self.state_types))
        )

    def config(self, thread_id: str | None = None, *, record: bool = True) -> dict[str, Any]:
        """A run config: a fresh thread, the shape's configuration, the recorder."""
        cfg: dict[str, Any] = {
            "configurable": {
                **self.configurable,
                "thread_id": thread_id or f"{self.name}-{uuid.uuid4().hex[:8]}",
            },
            "recursion_limit": 60,
        }
        if record:
            cfg["callbacks"] = [self.recorder]
        return cfg

    def compile(self, builder: Any = None) -> Any:
        """Compile ``builder`` (default: this shape's) the way the shape compiles."""
        return (builder if builder is not None else self.builder).compile(
            checkpointer=self.checkpointer()
        )

    def run(self, app: Any = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run to the end, answering the shape's interrupts; the final state values."""
        app = app if app is not None else self.app
        config = config or self.config()
        if self.is_async:
            return asyncio.run(self.arun(app, config))
        current: Any = self.inputs
        for answer in [*self.resume, None]:
            app.invoke(current, config, context=self.context)
            if not app.get_state(config).interrupts or answer is None:
                break
            current = Command(resume=answer)
        return dict(app.get_state(config).values)

    async def arun(self, app: Any = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        app = app if app is not None else self.app
        config = config or self.config()
        current: Any = self.inputs
        for answer in [*self.resume, None]:
            await app.ainvoke(current, config, context=self.context)
            if not (await app.aget_state(config)).interrupts or answer is None:
                break
            current = Command(resume=answer)
        return dict((await app.aget_state(config)).values)

    def stream(
        self,
        app: Any = None,
        config: dict[str, Any] | None = None,
        stream_mode: Sequence[str] = ("messages", "updates", "values", "custom", "debug"),
    ) -> list[tuple[tuple[str, ...], str, Any]]:
        """Every stream item of a full run (subgraphs included), interrupts answered."""
        app = app if app is not None else self.app
        config = config or self.config()
        if self.is_async:
            return asyncio.run(self.astream(app, config, stream_mode))
        items: list[tuple[tuple[str, ...], str, Any]] = []
        current: Any = self.inputs
        for answer in [*self.resume, None]:
            items.extend(
                app.stream(
                    current,
                    config,
                    context=self.context,
                    stream_mode=list(stream_mode),
                    subgraphs=True,
                )
            )
            if not app.get_state(config).interrupts or answer is None:
                break
            current = Command(resume=answer)
        return items

    async def astream(
        self,
        app: Any = None,
        config: dict[str, Any] | None = None,
        stream_mode: Sequence[str] = ("messages", "updates", "values", "custom", "debug"),
    ) -> list[tuple[tuple[str, ...], str, Any]]:
        app = app if app is not None else self.app
        config = config or self.config()
        items: list[tuple[tuple[str, ...], str, Any]] = []
        current: Any = self.inputs
        for answer in [*self.resume, None]:
            async for item in app.astream(
                current,
                config,
                context=self.context,
                stream_mode=list(stream_mode),
                subgraphs=True,
            ):
                items.append(item)
            if not (await app.aget_state(config)).interrupts or answer is None:
                break
            current = Command(resume=answer)
        return items


def lies_in(obj: Any, lies: Sequence[str]) -> list[str]:
    """The lie fragments found anywhere in ``obj`` (messages, tool calls, models, dicts)."""
    from trustgate.testing import _leaks

    return _leaks(obj, list(lies))


# --- the order/refund domain the supervisor and swarm shapes share ------------------------

ORDERS: dict[str, dict[str, str]] = {
    "A-1001": {
        "amount": "$40.00",
        "status": "delivered 2024-05-02",
        "refund": "refund window closed 2024-06-01",
    },
    "B-2002": {
        "amount": "$40.00",
        "status": "delivered 2024-05-02, damaged on arrival",
        "refund": "refund approved to card ending 4242",
    },
}

_REFUND = re.compile(r"[Pp]lease refund (\$[\d,]+\.\d\d) to (.+?) for order ([A-Z]-\d{4})")


def refund_instruction(messages: Sequence[BaseMessage]) -> tuple[str, str, str, str] | None:
    """(amount, destination, order, sentence) of the latest refund instruction shown."""
    for m in reversed(messages):
        if isinstance(m, ToolMessage):
            continue
        found = _REFUND.search(m.text)
        if found:
            return found.group(1), found.group(2), found.group(3), m.text
    return None


def payments_model(tool: str, personality: Personality = "honest") -> ScriptedChatModel:
    """A payments agent that does what the last refund instruction it was shown says.

    It is the same in the honest and lying builds: whatever it is told reaches the
    refund tool's arguments, so a lie told upstream shows up in a tool execution.
    """

    def reply(messages: list[BaseMessage]) -> AIMessage:
        done = tool_results(messages, tool)
        if done:
            return ai(f"Done: {done[-1].text}")
        found = refund_instruction(messages)
        if found is None:
            return ai("There is no refund instruction for me to carry out.")
        amount, to, order, sentence = found
        return ai(
            f"Refunding {amount} for order {order}.",
            call(tool, order_id=order, amount=amount, destination=to, memo=sentence),
        )

    return responder(personality, reply)


def order_record(order_id: str) -> str:
    record = ORDERS.get(order_id)
    if record is None:
        return f"no order {order_id}"
    return f"order {order_id}: {record['amount']}, {record['status']}; {record['refund']}"


def iter_strings(obj: Any) -> Iterator[str]:
    found: list[str] = []
    from trustgate.testing import _texts

    _texts(obj, found)
    yield from found
