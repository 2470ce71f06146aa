"""Every LangGraph (and LangChain streaming) internal trustgate touches, by name.

LangGraph's internals change between minors; trustgate pins ``langgraph>=1.2,<1.3``
and keeps every use of them here, behind named functions, so a new minor breaks in
one place and :func:`check` says what broke when ``guard()`` runs
(:class:`~trustgate.errors.LangGraphCompatibilityError`), never half-way through a
run. Everything else in trustgate uses these functions and public APIs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import dataclasses
import functools
import logging
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from trustgate._report import REPORTS_KEY
from trustgate.errors import GateHalted, LangGraphCompatibilityError

__all__ = [
    "check",
    "check_builder",
]

logger = logging.getLogger(__name__)


@functools.cache
def _k() -> Any:
    """The private config keys (imported once; a missing one is a compat error)."""
    try:
        from langgraph._internal import _constants as c
    except ImportError as exc:  # pragma: no cover - other LangGraph versions
        raise LangGraphCompatibilityError(f"langgraph._internal._constants: {exc}") from exc
    names = (
        "CONF",
        "CONFIG_KEY_CHECKPOINT_NS",
        "CONFIG_KEY_READ",
        "CONFIG_KEY_RUNTIME",
        "CONFIG_KEY_SEND",
        "CONFIG_KEY_STREAM",
        "CONFIG_KEY_TASK_ID",
        "CONFIG_KEY_CALL",
        "CONFIG_KEY_CHECKPOINTER",
        "CONFIG_KEY_RESUMING",
        "NS_SEP",
    )
    missing = [n for n in names if not hasattr(c, n)]
    if missing:
        raise LangGraphCompatibilityError(f"langgraph lacks the config keys {missing}")
    return c


def check() -> None:
    """Raise :class:`LangGraphCompatibilityError` unless every internal used here exists
    with the shape this module expects (run by ``guard()``)."""
    problems: list[str] = []
    try:
        _k()
        from langchain_core.runnables.config import var_child_runnable_config
        from langchain_core.tracers._streaming import _StreamingCallbackHandler  # noqa: F401
        from langgraph._internal._config import recast_checkpoint_ns  # noqa: F401
        from langgraph._internal._fields import get_update_as_tuples  # noqa: F401
        from langgraph._internal._runnable import RunnableCallable  # noqa: F401
        from langgraph.errors import ParentCommand  # noqa: F401
        from langgraph.graph._node import StateNodeSpec
        from langgraph.pregel._messages import StreamMessagesHandler
        from langgraph.pregel._tools import StreamToolCallHandler
        from langgraph.pregel._utils import _runnable_has_native_async  # noqa: F401
        from langgraph.pregel.protocol import StreamProtocol
    except ImportError as exc:
        raise LangGraphCompatibilityError(
            f"this LangGraph version lacks an internal trustgate relies on: {exc}"
        ) from exc
    config_var: object = var_child_runnable_config
    if not isinstance(config_var, contextvars.ContextVar):
        problems.append("langchain_core's var_child_runnable_config is not a ContextVar")
    fields = {f.name for f in dataclasses.fields(StateNodeSpec)}
    for need in ("runnable", "retry_policy", "cache_policy", "metadata", "input_schema"):
        if need not in fields:
            problems.append(f"StateNodeSpec has no field {need!r}")
    from langgraph.types import Command

    if not callable(getattr(Command, "_update_as_tuples", None)):
        problems.append("Command has no _update_as_tuples()")
    for cls, attr in ((StreamMessagesHandler, "stream"), (StreamToolCallHandler, "stream")):
        if attr not in cls.__init__.__code__.co_names and not hasattr(cls, attr):
            problems.append(f"{cls.__name__} has no {attr!r} sink")
    if getattr(StreamProtocol, "__slots__", None) != ("modes", "__call__"):
        problems.append("StreamProtocol is not (modes, __call__)")
    if problems:
        raise LangGraphCompatibilityError(
            "LangGraph internals are not what trustgate expects (pinned langgraph>=1.2,<1.3): "
            + "; ".join(problems)
        )


def check_builder(builder: Any) -> None:
    """The builder fields ``guard()`` and ``audit()`` read and replace."""
    problems: list[str] = []
    if not isinstance(getattr(builder, "nodes", None), dict):
        problems.append("StateGraph.nodes is not a dict")
    if not isinstance(getattr(builder, "channels", None), dict):
        problems.append("StateGraph.channels is not a dict")
    if not isinstance(getattr(builder, "edges", None), set):
        problems.append("StateGraph.edges is not a set")
    if not isinstance(getattr(builder, "waiting_edges", None), set):
        problems.append("StateGraph.waiting_edges is not a set")
    if not isinstance(getattr(builder, "branches", None), defaultdict):
        problems.append("StateGraph.branches is not a defaultdict")
    if not callable(getattr(builder, "_add_schema", None)):
        problems.append("StateGraph._add_schema is missing")
    if not hasattr(builder, "_node_defaults"):
        problems.append("StateGraph._node_defaults is missing")
    if problems:
        raise LangGraphCompatibilityError(
            "LangGraph builder internals are not what trustgate expects "
            "(pinned langgraph>=1.2,<1.3): " + "; ".join(problems)
        )


# --- the running task's config -----------------------------------------------------------
# LangChain keeps the running runnable's config in ``var_child_runnable_config``: code
# that calls a model or ``get_stream_writer()`` without a config reads it from there.


def _config_var() -> contextvars.ContextVar[Any]:
    from langchain_core.runnables.config import var_child_runnable_config

    return cast("contextvars.ContextVar[Any]", var_child_runnable_config)


def current_config() -> dict[str, Any] | None:
    """The config LangChain keeps for the running runnable (``None`` outside one)."""
    found = _config_var().get()
    return cast(dict[str, Any], found) if isinstance(found, Mapping) else None


def set_config(config: Mapping[str, Any] | None) -> contextvars.Token[Any]:
    """Make ``config`` the running runnable's config (``None``: outside any run);
    :func:`reset_config` with the token puts the previous one back."""
    return _config_var().set(config)


def reset_config(token: contextvars.Token[Any]) -> None:
    _config_var().reset(token)


@contextlib.contextmanager
def config_as(config: Mapping[str, Any] | None) -> Iterator[None]:
    """``config`` as the running runnable's config for the ``with`` block."""
    token = set_config(config)
    try:
        yield
    finally:
        reset_config(token)


def conf(config: Mapping[str, Any] | None) -> dict[str, Any]:
    if not config:
        return {}
    return cast(dict[str, Any], config.get(_k().CONF) or {})


def resuming(config: Mapping[str, Any]) -> bool:
    """Whether the task runs in the first step of a run that resumed a stored thread
    (LangGraph sets the flag for that step only, and for a retry's attempts): the only
    place a task can be one that already ran and crashed before its writes were saved."""
    return bool(conf(config).get(_k().CONFIG_KEY_RESUMING))


def task_id(config: Mapping[str, Any]) -> str | None:
    value = conf(config).get(_k().CONFIG_KEY_TASK_ID)
    return None if value is None else str(value)


def checkpoint_ns(config: Mapping[str, Any]) -> str:
    return str(conf(config).get(_k().CONFIG_KEY_CHECKPOINT_NS) or "")


def runtime(config: Mapping[str, Any]) -> Any:
    return conf(config).get(_k().CONFIG_KEY_RUNTIME)


def bookkeeping_channels() -> frozenset[str]:
    """Channels LangGraph's own functions write during a task (the resume values an
    ``interrupt()`` consumed): not the node's output."""
    from langgraph._internal._constants import RESUME

    return frozenset({RESUME})


def put_op(fields: Sequence[Any]) -> Any:
    """A store write from the plain tuple a durable task's sealed result keeps."""
    from langgraph.store.base import PutOp

    return PutOp(*fields)


def store_with_writes(store: Any, ops: Sequence[Any]) -> Any:
    """A scratch ``InMemoryStore`` holding what ``store`` (an ``InMemoryStore``) holds
    with ``ops`` applied one by one, as separate writes (``None`` for any other store).

    Reads of the scratch copy answer as ``store`` would after those writes, in its own
    order. It has no index (nothing is embedded): only for reads that rank nothing.
    The item table is ``InMemoryStore._data`` (namespace → key → ``Item``)."""
    from langgraph.store.memory import InMemoryStore

    if not isinstance(store, InMemoryStore):
        return None
    data = getattr(store, "_data", None)
    if not isinstance(data, dict):
        logger.warning(
            "InMemoryStore keeps no _data table in this LangGraph version: reads in a "
            "guarded node merge held writes in the order of the other stores"
        )
        return None
    scratch = InMemoryStore()
    scratch._data.update({ns: dict(items) for ns, items in list(data.items())})
    for op in ops:
        scratch.batch([op])
    return scratch


def put_to_store(config: Mapping[str, Any], ops: Sequence[Any]) -> bool:
    """Apply held store writes to the run's real store (sync: an async-only store is
    driven by the sync bridge LangGraph's stores provide)."""
    store = getattr(runtime(config), "store", None)
    if store is None:
        return False
    store.batch(list(ops))
    return True


def caller(config: Mapping[str, Any]) -> Any:
    """The running task's hook for functional-API task calls, if it has one."""
    return conf(config).get(_k().CONFIG_KEY_CALL)


def sender(config: Mapping[str, Any]) -> Any:
    """The running task's channel-write function, if it has one."""
    return conf(config).get(_k().CONFIG_KEY_SEND)


def send(config: Mapping[str, Any], writes: Sequence[tuple[str, Any]]) -> bool:
    """Write to channels as the running task (what ``ChannelWrite`` does)."""
    fn = conf(config).get(_k().CONFIG_KEY_SEND)
    if fn is None:
        return False
    fn(list(writes))
    return True


def _aside(
    config: Mapping[str, Any], suffix: str | None = None
) -> tuple[Any, dict[str, Any], str] | None:
    """Where a crossing's report goes beside its task: the saver, the step's checkpoint
    config, and a task id LangGraph never runs (so the task's own writes decide whether
    it is done, as for any node). ``suffix`` makes the id one a later run can find."""
    c = conf(config)
    k = _k()
    saver = c.get(k.CONFIG_KEY_CHECKPOINTER)
    info = getattr(c.get(k.CONFIG_KEY_RUNTIME), "execution_info", None)
    if saver is None or info is None or c.get("thread_id") is None:
        return None
    graph_ns = _graph_ns(str(info.checkpoint_ns or ""))
    cfg = {
        "configurable": {
            "thread_id": c["thread_id"],
            "checkpoint_ns": graph_ns,
            "checkpoint_id": info.checkpoint_id,
        }
    }
    return saver, cfg, f"{info.task_id}~trustgate~{suffix or secrets.token_hex(6)}"


def _step_checkpoint_save(config: Mapping[str, Any]) -> Any:
    """The save of the running step's own checkpoint, while it may still be on its way.

    Under ``durability="async"`` (LangGraph's default) a step's checkpoint is saved in
    the background while the step's tasks run. A release recorded beside a checkpoint
    that is not saved yet is lost with it if the worker dies first: the resumed run
    starts a step earlier, under other task ids, and decides the crossing anew. So a
    release is recorded only once its checkpoint is saved. The loop is reached through
    the task's call hook (it schedules the tasks it starts on the loop); ``None`` when it
    cannot be (another LangGraph, a task outside a loop): then nothing is waited for."""
    call = conf(config).get(_k().CONFIG_KEY_CALL)
    keywords = getattr(call, "keywords", None)
    schedule = keywords.get("schedule_task") if isinstance(keywords, dict) else None
    loop = getattr(schedule, "__self__", None)
    pending = getattr(loop, "_put_checkpoint_fut", None)
    if pending is None or not hasattr(pending, "done"):
        return None
    return pending  # a save that finished (or failed) answers at once


def persists(config: Mapping[str, Any]) -> bool:
    """Whether the run has somewhere to keep writes beside its task (a checkpointer and
    a thread): without one there is nothing to keep a release record in, and no run
    of the task again to deliver it to."""
    return _aside(config, RELEASED) is not None


def _graph_ns(ns: str) -> str:
    k = _k()
    return ns.rsplit(k.NS_SEP, 1)[0] if k.NS_SEP in ns else ""


def serde(config: Mapping[str, Any] | None) -> Any:
    """The run's checkpoint serializer (with the graph's allow-list of state types under
    strict msgpack), or LangGraph's default when the run has no checkpointer."""
    saver = conf(config).get(_k().CONFIG_KEY_CHECKPOINTER)
    found = getattr(saver, "serde", None)
    if found is not None:
        return found
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()


_PENDING: set[Any] = set()


def keep_aside(config: Mapping[str, Any], writes: Sequence[tuple[str, Any]]) -> None:
    """Persist writes next to the running task without making them its output."""
    target = _aside(config)
    if target is None:
        return
    saver, cfg, task = target
    try:
        saver.put_writes(cfg, list(writes), task)
    except Exception as exc:  # an async-only saver called from its own event loop
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            logger.warning("a halted crossing's report was not saved: %s", exc)
            return
        job = loop.create_task(saver.aput_writes(cfg, list(writes), task))
        _PENDING.add(job)
        job.add_done_callback(_PENDING.discard)


RELEASED = "released"  # the suffix of the task id a release is recorded under


def _delivery_suffix(delivery: int) -> str:
    """Where a delivery's report is saved beside its task: the first with the release
    record, each delivery after a crash under an id of its own (a saver keeps the first
    write of a task id and index as written, so a count saved over it would be lost)."""
    return RELEASED if delivery <= 1 else f"{RELEASED}~{delivery}"


def persist_beside(
    config: Mapping[str, Any], writes: Sequence[tuple[str, Any]], delivery: int = 1
) -> bool:
    """Write ``writes`` next to the running task now, synchronously, or raise: what a
    released crossing's report needs before anything acts on the release (``delivery``:
    which delivery of it this is). ``False`` when the run has no checkpointer (nothing
    to make it durable in)."""
    target = _aside(config, _delivery_suffix(delivery))
    if target is None:
        return False
    saver, cfg, task = target
    pending = _step_checkpoint_save(config)
    if pending is not None and not isinstance(pending, asyncio.Future):
        pending.result()  # a failed save raises here: the report is not recorded
    saver.put_writes(cfg, list(writes), task)
    return True


async def apersist_beside(
    config: Mapping[str, Any], writes: Sequence[tuple[str, Any]], delivery: int = 1
) -> bool:
    """Async :func:`persist_beside` (a sync-only saver is written the way it can)."""
    target = _aside(config, _delivery_suffix(delivery))
    if target is None:
        return False
    saver, cfg, task = target
    pending = _step_checkpoint_save(config)
    if pending is not None:
        await (pending if isinstance(pending, asyncio.Future) else asyncio.wrap_future(pending))
    try:
        await saver.aput_writes(cfg, list(writes), task)
    except NotImplementedError:
        saver.put_writes(cfg, list(writes), task)
    return True


def _released_from(tup: Any, task: str, channel: str) -> tuple[Any, dict[str, int]] | None:
    """The release recorded beside the task, when the task itself has no writes saved
    (a crash came before them), with the highest delivery count saved so far for each
    report id. A task that has writes of its own is one LangGraph runs again on purpose
    (time travel, a resume at a checkpoint the thread moved past): that run decides
    anew."""
    own = task.rsplit("~trustgate~", 1)[0]
    found = None
    counts: dict[str, int] = {}
    for write in getattr(tup, "pending_writes", None) or ():
        if len(write) < 3:
            continue
        if write[0] == own:
            return None
        if write[0] == task and write[1] == channel:
            found = write[2]
        if (write[0] == task or str(write[0]).startswith(task + "~")) and write[1] == REPORTS_KEY:
            for item in write[2] if isinstance(write[2], (list, tuple)) else [write[2]]:
                rid = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
                n = (
                    item.get("deliveries", 1)
                    if isinstance(item, Mapping)
                    else getattr(item, "deliveries", 1)
                )
                if isinstance(rid, str) and isinstance(n, int):
                    counts[rid] = max(counts.get(rid, 0), n)
    return None if found is None else (found, counts)


def prior_release(config: Mapping[str, Any], channel: str) -> tuple[Any, dict[str, int]] | None:
    """What an earlier execution of the running task recorded it released (``channel``
    beside the task) and how many deliveries of each report were saved, or ``None``:
    LangGraph runs a task again when a crash came after the task released but before
    its own writes were saved (at-least-once)."""
    target = _aside(config, RELEASED)
    if target is None:
        return None
    saver, cfg, task = target
    return _released_from(saver.get_tuple(cfg), task, channel)


async def aprior_release(
    config: Mapping[str, Any], channel: str
) -> tuple[Any, dict[str, int]] | None:
    target = _aside(config, RELEASED)
    if target is None:
        return None
    saver, cfg, task = target
    try:
        tup = await saver.aget_tuple(cfg)
    except NotImplementedError:
        tup = saver.get_tuple(cfg)
    return _released_from(tup, task, channel)


async def akeep_aside(config: Mapping[str, Any], writes: Sequence[tuple[str, Any]]) -> None:
    target = _aside(config)
    if target is None:
        return
    saver, cfg, task = target
    try:
        await saver.aput_writes(cfg, list(writes), task)
    except NotImplementedError:
        saver.put_writes(cfg, list(writes), task)


def read_channel(config: Mapping[str, Any], key: str) -> Any:
    """The channel's value as the task sees it (before its own writes)."""
    fn = conf(config).get(_k().CONFIG_KEY_READ)
    if fn is None:
        raise KeyError(key)
    return fn(key, False)


def meta(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ids a report carries: thread, run, step, namespace, task."""
    c = conf(config)
    md = config.get("metadata") or {}
    run_id = config.get("run_id")
    return {
        "thread_id": c.get("thread_id"),
        "run_id": str(run_id) if run_id else None,
        "step": md.get("langgraph_step"),
        "checkpoint_ns": c.get(_k().CONFIG_KEY_CHECKPOINT_NS),
        "task_id": c.get(_k().CONFIG_KEY_TASK_ID),
    }


def patch(config: Mapping[str, Any], **values: Any) -> dict[str, Any]:
    """A copy of ``config`` with configurable keys replaced (``stream=``, ``runtime=``)."""
    k = _k()
    keys = {
        "stream": k.CONFIG_KEY_STREAM,
        "runtime": k.CONFIG_KEY_RUNTIME,
        "checkpointer": k.CONFIG_KEY_CHECKPOINTER,
        "send": k.CONFIG_KEY_SEND,
        "call": k.CONFIG_KEY_CALL,
    }
    new = dict(config)
    inner = dict(conf(config))
    for name, value in values.items():
        inner[keys[name]] = value
    new[k.CONF] = inner
    return new


def checkpointer(config: Mapping[str, Any]) -> Any:
    """The saver the run lends its subgraphs, when it is a real one."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    saver = conf(config).get(_k().CONFIG_KEY_CHECKPOINTER)
    return saver if isinstance(saver, BaseCheckpointSaver) else None


def stream_protocol(config: Mapping[str, Any]) -> Any:
    return conf(config).get(_k().CONFIG_KEY_STREAM)


def new_stream_protocol(sink: Callable[[Any], None], modes: set[Any]) -> Any:
    from langgraph.pregel.protocol import StreamProtocol

    return StreamProtocol(sink, modes)


# what a callback handler is told while a run goes on
CALLBACK_EVENTS = (
    "on_llm_start",
    "on_chat_model_start",
    "on_llm_new_token",
    "on_stream_event",
    "on_llm_end",
    "on_llm_error",
    "on_chain_start",
    "on_chain_end",
    "on_chain_error",
    "on_tool_start",
    "on_tool_end",
    "on_tool_error",
    "on_text",
    "on_retry",
    "on_agent_action",
    "on_agent_finish",
    "on_retriever_start",
    "on_retriever_end",
    "on_retriever_error",
    "on_custom_event",
)

# packages whose callback handlers are telemetry: they export spans under their own
# content settings, and holding them would falsify their timings
_TELEMETRY_PACKAGES = frozenset(
    {"langsmith", "opentelemetry", "openinference", "traceloop", "langfuse", "mlflow"}
)


def overrides(handler: Any, name: str) -> bool:
    """Whether ``handler`` does something with the callback event ``name`` (its class
    defines it, rather than LangChain's no-op base classes)."""
    from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler

    method = getattr(type(handler), name, None)
    if method is None:
        return False
    return method not in (
        getattr(BaseCallbackHandler, name, None),
        getattr(AsyncCallbackHandler, name, None),
    )


def is_telemetry(handler: Any) -> bool:
    """A tracer (any LangChain ``BaseTracer``: LangSmith, OpenInference, ...) or the
    callback handler of a known telemetry package (OpenTelemetry's LangChain
    instrumentation, Langfuse, MLflow): left live inside a guarded node."""
    from langchain_core.tracers.base import AsyncBaseTracer, BaseTracer

    if isinstance(handler, (BaseTracer, AsyncBaseTracer)):
        return True
    package = (type(handler).__module__ or "").split(".", 1)[0]
    return package in _TELEMETRY_PACKAGES


def receives_output(handler: Any) -> bool:
    """A user's own callback handler, sync or async, that is told a model's or a
    node's output (any hook it defines: tokens, ``on_llm_end``, chain and tool ends,
    custom events, ...): inside a guarded node it is a stream sink, held. LangGraph's
    own handlers (its stream handlers are swapped, not held; its idle-timeout clock must
    keep ticking) and telemetry are not."""
    from langchain_core.callbacks import BaseCallbackHandler

    if not isinstance(handler, BaseCallbackHandler) or streaming_sinks(handler):
        return False
    if is_telemetry(handler):
        return False
    if (type(handler).__module__ or "").split(".", 1)[0] == "langgraph":
        return False
    return any(overrides(handler, name) for name in CALLBACK_EVENTS)


def replay_event(handler: Any, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Tell ``handler`` a held callback event, as LangChain's sync dispatch does (an
    async handler's coroutine is run to completion; a failing handler is logged unless
    it asks to raise)."""
    from langchain_core.callbacks.manager import handle_event

    handle_event([handler], name, None, *args, **kwargs)


async def areplay_event(
    handler: Any, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> None:
    """:func:`replay_event` on the async path (LangChain's async dispatch)."""
    from langchain_core.callbacks.manager import ahandle_event

    await ahandle_event([handler], name, None, *args, **kwargs)


def streaming_sinks(handler: Any) -> tuple[str, ...]:
    """The attribute(s) through which a streaming callback handler emits, or ``()``
    when it is not a streaming handler at all; ``None`` entries mean unknown."""
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    if not isinstance(handler, _StreamingCallbackHandler):
        return ()
    from langgraph.pregel._messages import StreamMessagesHandler
    from langgraph.pregel._tools import StreamToolCallHandler

    if isinstance(handler, (StreamMessagesHandler, StreamToolCallHandler)):
        return ("stream",)
    if hasattr(handler, "send_stream"):
        return ("send_stream",)
    return ("?",)


# --- node outputs ---------------------------------------------------------------------


def update_as_tuples(value: Any, keys: Sequence[str] | None) -> list[tuple[str, Any]]:
    """What LangGraph writes for a state object a node returns (set fields only)."""
    from langgraph._internal._fields import get_update_as_tuples

    if keys is None:
        if hasattr(type(value), "model_fields"):
            keys = list(type(value).model_fields)
        elif dataclasses.is_dataclass(value):
            keys = [f.name for f in dataclasses.fields(value)]
        else:
            keys = []
    return list(get_update_as_tuples(value, list(keys)))


def command_update(cmd: Any) -> list[tuple[str, Any]]:
    """The ``(key, value)`` writes of a ``Command``'s ``update`` (every form it takes)."""
    return list(cmd._update_as_tuples())


def is_control_flow(exc: BaseException) -> bool:
    """LangGraph's own signals (interrupts, parent commands, recursion limits): they
    carry no model output and callers match on them."""
    from langgraph.errors import GraphBubbleUp, GraphRecursionError

    return isinstance(exc, (GraphBubbleUp, GraphRecursionError))


@functools.cache
def halted_in_graph() -> type[GateHalted]:
    """The :class:`GateHalted` a guarded node raises: also a LangGraph ``GraphBubbleUp``.

    LangGraph (1.2) has no setting for what it does with a node's exception; it tests
    for ``GraphBubbleUp`` in each place, and a halt needs every one of them:

    - the retry loop re-raises it untried and adds no note naming the task
      (``pregel._retry``); a retry policy's ``retry_on`` could say "not this", but not
      the rest below;
    - the runner keeps it out of the checkpoint (no ``ERROR`` write: an error write
      would serialize the halt, its report and the text it refused into the saved
      thread), leaves the task unfinished so a resume runs it again, routes it to no
      node error handler, and does not cancel the step's other tasks for it
      (``pregel._runner``);
    - the executors do not re-raise it on exit (``pregel._executor``), and ``ToolNode``
      does not turn it into an error ``ToolMessage`` (a halted crossing in a tool call
      stays a halt, ``prebuilt.tool_node``).

    So the halt is one class with both bases, built here where every other LangGraph
    internal is kept; the caller of the graph gets the ``GateHalted`` it catches."""
    from langgraph.errors import GraphBubbleUp

    class HaltedInGraph(GateHalted, GraphBubbleUp):
        """:class:`GateHalted` as a guarded node raises it: LangGraph treats it like an
        interrupt (no retry, no error handler, the task stays unfinished so a resume
        runs it again) and the caller gets the ``GateHalted`` it catches."""

    HaltedInGraph.__qualname__ = "HaltedInGraph"
    HaltedInGraph.__module__ = "trustgate.graph._node"
    return HaltedInGraph


def is_parent_command(exc: BaseException) -> bool:
    from langgraph.errors import ParentCommand

    return isinstance(exc, ParentCommand)


def readdress(cmd: Any, config: Mapping[str, Any]) -> Any:
    """A handoff caught inside the durable task that ran the node: LangGraph addressed it
    to the task's namespace (the graph that ran the subgraph); the guarded node
    re-raises it from its own task, so it is addressed to that."""
    from dataclasses import replace

    from langgraph.types import Command

    if getattr(cmd, "graph", None) in (None, Command.PARENT):
        return cmd
    return replace(cmd, graph=checkpoint_ns(config))


def is_interrupt(exc: BaseException) -> bool:
    """A pause for a person (``interrupt()``), not a failure."""
    from langgraph.errors import GraphInterrupt

    return isinstance(exc, GraphInterrupt)


def parent_command(cmd: Any) -> BaseException:
    from langgraph.errors import ParentCommand

    return ParentCommand(cmd)


def runnable_callable(func: Callable[..., Any], afunc: Callable[..., Any] | None, name: str) -> Any:
    from langgraph._internal._runnable import RunnableCallable

    return RunnableCallable(func, afunc, name=name, trace=False)


async def on_thread(config: Mapping[str, Any], fn: Callable[[], Any]) -> Any:
    """``fn()`` on the executor LangChain runs sync code of an async run on (the
    context copied, as for a sync node in an async run)."""
    from langchain_core.runnables.config import run_in_executor

    return await run_in_executor(cast(Any, config), fn)


def present_as(wrapper: Any, inner: Any) -> None:
    """Make the wrapper draw as the runnable it wraps (``get_graph()`` names each
    node's runnable by its class path), so a guarded graph draws like the original."""
    from langchain_core.load.serializable import to_json_not_implemented
    from langchain_core.runnables import RunnableSerializable

    tools = getattr(inner, "tools_by_name", None)
    if isinstance(tools, Mapping):  # the drawing lists a tool node's tools
        wrapper.tools_by_name = tools
    if type(inner) is type(wrapper):
        return
    try:
        ident = (
            inner.lc_id()
            if isinstance(inner, RunnableSerializable)
            else (to_json_not_implemented(inner)["id"])
        )
    except Exception as exc:  # an exotic runnable: it draws as the wrapper
        logger.warning("cannot tell how %r draws: %s", inner, exc)
        return
    if ident:
        wrapper.__name__ = ident[-1]
        wrapper.__module__ = ".".join(ident[:-1])


def check_timeout(spec: Any, inner: Any, name: str) -> None:
    """LangGraph refuses a time limit on a node without a native async path; the guarded
    node has one (its gate runs on the loop), so the original is checked as LangGraph
    would have checked it."""
    if getattr(spec, "timeout", None) is None:
        return
    from langgraph.pregel._utils import validate_timeout_supported

    validate_timeout_supported(inner, name=name)


def has_native_async(runnable: Any) -> bool:
    from langgraph.pregel._utils import _runnable_has_native_async

    return bool(_runnable_has_native_async(runnable))


def message_keys(builder: Any) -> frozenset[str]:
    """State keys whose reducer is ``add_messages`` (plus ``messages``)."""
    keys = {"messages"}
    for key, channel in (getattr(builder, "channels", None) or {}).items():
        op = getattr(channel, "operator", None)
        name = getattr(op, "__name__", "") or getattr(getattr(op, "func", None), "__name__", "")
        if "add_messages" in name:
            keys.add(key)
    return frozenset(keys)


def plain_keys(builder: Any) -> frozenset[str]:
    """State keys whose channel keeps the last value written, with no reducer: writing
    such a key the value it holds changes nothing. Every other channel (a reducer, a
    topic, an ephemeral value) takes each write as it comes."""
    from langgraph.channels.last_value import LastValue, LastValueAfterFinish

    return frozenset(
        key
        for key, channel in (getattr(builder, "channels", None) or {}).items()
        if type(channel) in (LastValue, LastValueAfterFinish)
    )


def output_keys(obj: Any) -> frozenset[str] | None:
    """The state keys a compiled graph used as a node returns (``None``: not a graph)."""
    from langgraph.pregel import Pregel

    if not isinstance(obj, Pregel):
        return None
    out = obj.output_channels
    return frozenset([out] if isinstance(out, str) else out)


def append_only(builder: Any, key: str) -> bool:
    """Whether ``key``'s channel only ever grows: messages under ``add_messages`` (new
    ids appended) or a list under ``operator.add``."""
    import operator

    if key in message_keys(builder):
        return True
    op = reducers(builder).get(key)
    return op is operator.add or op is operator.iadd


def reducers(builder: Any) -> dict[str, Any]:
    """The reducer of each state key that has one (``Annotated[list, operator.add]``)."""
    from langgraph.channels.binop import BinaryOperatorAggregate

    return {
        key: channel.operator
        for key, channel in (getattr(builder, "channels", None) or {}).items()
        if isinstance(channel, BinaryOperatorAggregate)
    }


def is_root_graph(builder: Any) -> bool:
    channels = getattr(builder, "channels", None) or {}
    return list(channels) == ["__root__"]


# --- reading a builder (audit and guard read graphs only through these) ------------------


def node_specs(builder: Any) -> dict[str, Any]:
    return dict(getattr(builder, "nodes", None) or {})


def node_runnable(spec: Any) -> Any:
    return getattr(spec, "runnable", None)


def node_ends(spec: Any) -> Any:
    """Where a node may route with ``Command(goto=...)`` (``destinations``)."""
    return getattr(spec, "ends", None)


def edges(builder: Any) -> set[tuple[str, str]]:
    return set(getattr(builder, "edges", None) or ())


def waiting_edges(builder: Any) -> set[tuple[tuple[str, ...], str]]:
    return set(getattr(builder, "waiting_edges", None) or ())


def branch_ends(builder: Any, node: str) -> list[tuple[str, Any]]:
    """(name, declared ends) of each conditional branch out of ``node``."""
    branches = (getattr(builder, "branches", None) or {}).get(node, {})
    return [(name, getattr(b, "ends", None)) for name, b in branches.items()]


def branch_paths(builder: Any) -> list[tuple[str, str, Any, Any]]:
    """(node, name, path runnable, declared ends) of every conditional branch: the
    routing functions, which run in the node's task after the node returned."""
    out: list[tuple[str, str, Any, Any]] = []
    for node, branches in (getattr(builder, "branches", None) or {}).items():
        for name, b in branches.items():
            out.append((str(node), str(name), getattr(b, "path", None), getattr(b, "ends", None)))
    return out


def channels(builder: Any) -> dict[str, Any]:
    return dict(getattr(builder, "channels", None) or {})


# --- builders and compiled graphs -------------------------------------------------------


def copy_builder(builder: Any, cls: type) -> Any:
    """A copy of ``builder`` of class ``cls`` whose node specs can be replaced freely."""
    from langgraph.graph.state import _DEFAULT_ERROR_HANDLER_NODE

    new = copy.copy(builder)
    new.__class__ = cls
    new.nodes = {k: dataclasses.replace(v) for k, v in builder.nodes.items()}
    if (
        builder._node_defaults.error_handler is not None
        and _DEFAULT_ERROR_HANDLER_NODE in new.nodes
    ):
        # compile() added it to the original; compiling the copy adds it again
        del new.nodes[_DEFAULT_ERROR_HANDLER_NODE]
        for name, spec in new.nodes.items():
            if spec.error_handler_node == _DEFAULT_ERROR_HANDLER_NODE:
                new.nodes[name] = dataclasses.replace(spec, error_handler_node=None)
    new.edges = set(builder.edges)
    new.branches = defaultdict(dict, {k: dict(v) for k, v in builder.branches.items()})
    new.waiting_edges = set(builder.waiting_edges)
    new.channels = dict(builder.channels)
    new.managed = dict(builder.managed)
    new.schemas = dict(builder.schemas)
    new.compiled = False
    new._node_defaults = copy.copy(builder._node_defaults)
    return new


def replace_runnable(builder: Any, node: str, runnable: Any) -> None:
    builder.nodes[node] = dataclasses.replace(builder.nodes[node], runnable=runnable)


def add_channels(builder: Any, schema: Any) -> None:
    builder._add_schema(schema)


def hide_channels(compiled: Any, keys: set[str]) -> None:
    """Keep channels out of ``values``/``updates`` streams and state snapshots."""
    from langgraph.graph.state import _pick_mapper

    visible = [k for k in compiled.stream_channels_list if k not in keys]
    if len(visible) == len(compiled.stream_channels_list):
        return
    compiled.stream_channels = visible
    compiled._state_mapper = _pick_mapper(visible, compiled.builder.state_schema)


def _never_on(policies: Any, never: tuple[type[BaseException], ...]) -> Any:
    """Retry policies that retry everything they did before except ``never``."""
    from langgraph.types import RetryPolicy

    if policies is None:
        return None
    seq = [policies] if isinstance(policies, RetryPolicy) else list(policies)
    out = []
    for p in seq:
        retry_on = p.retry_on

        def retry(exc: Exception, retry_on: Any = retry_on) -> bool:
            if isinstance(exc, never):
                return False
            if isinstance(retry_on, (type, tuple)):
                return isinstance(exc, retry_on)
            return bool(retry_on(exc))

        out.append(p._replace(retry_on=retry))
    return out


def keep_mappers(fresh: Any, copied: Any) -> Any:
    """``Pregel.copy`` rebuilds through ``__init__`` and drops the typed-stream mappers
    ``compile()`` set; put them back."""
    for attr in ("_output_mapper", "_state_mapper"):
        if hasattr(fresh, attr):
            setattr(copied, attr, getattr(fresh, attr))
    return copied


def settle_policies(
    compiled: Any, guarded: Sequence[str], never: tuple[type[BaseException], ...]
) -> None:
    """Guarded nodes are never cached (a cached write would replay a verdict without
    running the gate) and never retried on a halt (a halt is an outcome)."""
    graph_cache = compiled.cache_policy
    graph_retry = compiled.retry_policy
    for name, node in list(compiled.nodes.items()):
        if name in guarded:
            retry = node.retry_policy if node.retry_policy else graph_retry
            compiled.nodes[name] = node.copy(
                {"cache_policy": None, "retry_policy": _never_on(retry, never) or None}
            )
        elif graph_cache is not None and node.cache_policy is None and node.node is not None:
            compiled.nodes[name] = node.copy({"cache_policy": graph_cache})
    if graph_cache is not None and any(n in compiled.nodes for n in guarded):
        compiled.cache_policy = None


def durable(fn: Callable[[Any], Any], name: str) -> Callable[[Any], Any]:
    """``fn`` as a durable task: called from a node, its result is checkpointed and
    not computed again when the node re-runs after an interrupt."""
    from langgraph.func import task

    return cast(Callable[[Any], Any], task(name=name)(cast(Any, fn)))


def tool_nodes(runnable: Any) -> list[str]:
    """Names of the tool-running nodes inside a compiled graph used as a node (an agent
    from ``create_agent``/``create_react_agent``), at any depth; ``[]`` when the node is
    not a graph or has none."""
    from langgraph.prebuilt import ToolNode

    found: list[str] = []
    seen: set[int] = set()

    def walk(graph: Any, prefix: str) -> None:
        if id(graph) in seen:
            return
        seen.add(id(graph))
        builder = getattr(graph, "builder", None)
        for name, spec in (getattr(builder, "nodes", None) or {}).items():
            inner = getattr(spec, "runnable", None)
            if isinstance(inner, ToolNode):
                found.append(f"{prefix}{name}")
            elif hasattr(inner, "builder"):
                walk(inner, f"{prefix}{name}/")

    walk(runnable, "")
    return found


# --- LangChain internals the audit's sample run touches ---------------------------------
#
# The sample run (trustgate._audit._sample_run) replaces chat models and tools while it
# runs a copy of a graph. It patches LangChain's public entry points (BaseChatModel
# generate/agenerate/stream/astream, BaseTool run/arun); the three things below are not
# public, and are reached only through these functions.


def structured_output_schema(kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON schema a ``with_structured_output`` request carries to ``generate``
    (LangChain passes it as the ``ls_structured_output_format`` keyword), or ``None``."""
    structured = kwargs.get("ls_structured_output_format")
    schema = structured.get("schema") if isinstance(structured, Mapping) else None
    return schema if isinstance(schema, Mapping) else None


def run_node(metadata: Mapping[str, Any] | None) -> str | None:
    """The top-level graph node a model or tool run belongs to, from the run metadata
    LangGraph attaches (``langgraph_checkpoint_ns``, ``langgraph_node``)."""
    md = metadata or {}
    ns = md.get("langgraph_checkpoint_ns") or md.get("checkpoint_ns")
    node = md.get("langgraph_node")
    if isinstance(ns, str) and ns:
        node = ns.split("|", 1)[0].split(":", 1)[0] or node
    return node if isinstance(node, str) and node else None


def wrap_chat_model_factory(
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> bool:
    """Replace the helper ``langchain.chat_models.init_chat_model`` builds a provider's
    model through (``_init_chat_model_helper``) with ``wrap(helper)``. ``False`` when
    langchain is not installed or has no such helper (nothing is replaced)."""
    try:
        from langchain.chat_models import base
    except ImportError:  # langchain not installed: no init_chat_model to stub
        return False
    helper = getattr(base, "_init_chat_model_helper", None)
    if not callable(helper):
        logger.warning(
            "langchain's init_chat_model has no _init_chat_model_helper: models it builds "
            "are not replaced by the audit's sample run (only stubbed when called)"
        )
        return False
    base._init_chat_model_helper = wrap(helper)
    return True


# --- LangChain's create_agent model-call chain (TrustGateMiddleware) ---------------------
#
# ``create_agent`` composes the ``wrap_model_call`` hooks of its middleware so that the
# first listed is outermost (``langchain.agents.factory._chain_model_call_handlers``).
# A hook further in may return ``ExtendedModelResponse(command=...)``; the composition
# takes that command off the response before the hook outside it sees the response, and
# keeps it in the list ``accumulated_commands`` of the ``inner_handler`` closure it hands
# the outer hook as ``handler``. The model node writes those commands after the model
# response (``_build_commands``). They are model-step output a gate must see, and the
# list is the only place they can be seen: this reads it, and writes it back rewritten.


def model_call_commands(handler: Any) -> list[Any] | None:
    """The live list of commands the ``wrap_model_call`` hooks inside ``handler`` add
    (filled once ``handler`` returned), or ``None`` when ``handler`` is not LangChain's
    composed inner handler (the model call itself, or a caller's own function: then
    nothing but the response it returns is written)."""
    code = getattr(handler, "__code__", None)
    module = str(getattr(handler, "__module__", "") or "")
    if code is None or not module.startswith("langchain.agents"):
        return None
    if code.co_name != "inner_handler":
        return None
    names = code.co_freevars
    cells = getattr(handler, "__closure__", None) or ()
    if "accumulated_commands" in names and len(cells) == len(names):
        try:
            value = cells[names.index("accumulated_commands")].cell_contents
        except ValueError:  # an empty cell
            value = None
        if isinstance(value, list):
            return value
    raise LangGraphCompatibilityError(
        "langchain's create_agent no longer keeps the commands of inner wrap_model_call "
        "middleware where TrustGateMiddleware can see them "
        "(inner_handler.accumulated_commands): list TrustGateMiddleware last among the "
        "middleware that wrap the model call, or guard the model node with "
        "trustgate.guard(agent, {'model': gate})"
    )


@functools.cache
def check_model_call_chain() -> None:
    """Raise :class:`LangGraphCompatibilityError` unless :func:`model_call_commands`
    sees the command of an inner ``wrap_model_call`` hook in the installed LangChain:
    composed the way ``create_agent`` composes them, once per process."""
    try:
        from langchain.agents import factory
        from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
        from langgraph.types import Command
    except ImportError as exc:
        raise LangGraphCompatibilityError(f"langchain.agents: {exc}") from exc
    chain = getattr(factory, "_chain_model_call_handlers", None)
    if not callable(chain):
        raise LangGraphCompatibilityError(
            "langchain.agents.factory has no _chain_model_call_handlers"
        )
    handed: list[Any] = []
    seen: list[Any] = []

    def outer(request: Any, handler: Any) -> Any:
        handed.append(handler)
        response = handler(request)
        seen.extend(model_call_commands(handler) or [])
        return response

    def inner(request: Any, handler: Any) -> Any:
        return ExtendedModelResponse(model_response=handler(request), command=Command())

    chain([outer, inner])(None, lambda request: ModelResponse(result=[]))
    if len(seen) != 1 or not isinstance(seen[0], Command):
        raise LangGraphCompatibilityError(
            "langchain's create_agent no longer composes wrap_model_call middleware as "
            "TrustGateMiddleware expects: it cannot see what middleware listed after it "
            "writes beside the model's response"
        )
