"""Holding what a guarded node streams until its gate has decided.

A model inside a guarded node streams tokens through callbacks while it runs, a
subgraph or agent inside it streams its own updates, and the node may write to the
stream writer: all of that would reach the consumer before any gate has seen the
output. So the node runs with every streaming sink in its config replaced by a
buffer: LangGraph's stream protocol for nested graphs, the runtime's stream writer,
and the callback handlers that feed ``stream_mode="messages"``/``"tools"``,
``astream_events`` and ``astream_log``. When the gate decides, the buffer is replayed
into the real sinks in order (``pass``), partly (a rewrite: only what the gate
accounted for, the stream-writer payloads; the rewritten messages reach the stream
when the node returns), or dropped (a halt, a failed attempt). This happens inside
the node's own task, so it holds whichever graph or API the consumer streams from.

The other ways out of a running node are held in the same config: the checkpoints a
subgraph inside it writes and its store writes (:mod:`trustgate.graph._held`), the
channel writes it makes while it runs (``push_message``, a raw send), a user's own
token handler, and functional-API tasks, which run in line as part of the node.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from trustgate.graph import _compat
from trustgate.graph._held import HeldSaver, HeldStore

__all__ = ["StreamHold"]

logger = logging.getLogger(__name__)


class _Sink:
    """Stands in for a stream sink: records what would have been emitted."""

    __slots__ = ("hold", "kind", "real")

    def __init__(self, hold: StreamHold, real: Any, kind: str) -> None:
        self.hold = hold
        self.real = real
        self.kind = kind

    def __call__(self, item: Any) -> None:
        self.hold.events.append((self, "call", item, None))

    # the send_stream protocol of astream_events / astream_log handlers
    def send_nowait(self, item: Any) -> None:
        self.hold.events.append((self, "send_nowait", item, None))

    async def send(self, item: Any) -> None:
        self.hold.events.append((self, "send_nowait", item, None))

    def close(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _clone(obj: Any) -> Any:
    """A shallow copy that really is a copy: LangChain's callback handlers answer
    ``copy.copy`` with themselves, so configs can be copied without copying them."""
    twin = object.__new__(type(obj))
    if hasattr(obj, "__dict__"):
        twin.__dict__.update(obj.__dict__)
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                setattr(twin, slot, getattr(obj, slot))
    return twin


def _inline_call(
    func: Callable[..., Any], input: tuple[tuple[Any, ...], dict[str, Any]], **_options: Any
) -> Any:
    """LangGraph's task-call hook, run in line: the task's result is part of the node's
    work, held with it. Retry and cache policies of such a task do not apply."""
    import asyncio
    import concurrent.futures
    import inspect

    args, kwargs = input
    if inspect.iscoroutinefunction(func):
        return asyncio.ensure_future(func(*args, **kwargs))
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as exc:  # the task's own failure: raised where its result is read
        fut.set_exception(exc)
    return fut


# what a callback handler is told while a run goes on
_EVENTS = (
    "on_llm_start",
    "on_chat_model_start",
    "on_llm_new_token",
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


class _HeldHandler(BaseCallbackHandler):
    """A user's own handler that consumes a model's tokens (a UI feed, stdout): inside
    a guarded node everything it is told waits with the node's output and is replayed
    in order when the gate releases it unchanged. Tracers are not held (their timings
    would be wrong)."""

    def __init__(self, hold: StreamHold, real: Any) -> None:
        self._hold = hold
        self._real = real
        self.raise_error = getattr(real, "raise_error", False)
        self.run_inline = getattr(real, "run_inline", False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @property
    def ignore_llm(self) -> bool:
        return bool(self._real.ignore_llm)

    @property
    def ignore_chat_model(self) -> bool:
        return bool(self._real.ignore_chat_model)

    @property
    def ignore_chain(self) -> bool:
        return bool(self._real.ignore_chain)

    @property
    def ignore_agent(self) -> bool:
        return bool(self._real.ignore_agent)

    @property
    def ignore_retriever(self) -> bool:
        return bool(self._real.ignore_retriever)

    @property
    def ignore_retry(self) -> bool:
        return bool(self._real.ignore_retry)

    @property
    def ignore_custom_event(self) -> bool:
        return bool(self._real.ignore_custom_event)


def _held_event(name: str) -> Callable[..., None]:
    def event(self: _HeldHandler, *args: Any, **kwargs: Any) -> None:
        if getattr(type(self._real), name, None) is getattr(BaseCallbackHandler, name, None):
            if name == "on_chat_model_start":
                # LangChain falls back to on_llm_start for a handler without it
                raise NotImplementedError(f"{type(self._real).__name__} has no {name}")
            return  # the handler does nothing with this event
        sink = _Sink(self._hold, getattr(self._real, name), "handler")
        self._hold.events.append((sink, "event", (args, kwargs), None))

    event.__name__ = name
    return event


for _name in _EVENTS:
    setattr(_HeldHandler, _name, _held_event(_name))


class StreamHold:
    """The buffered sinks of one guarded task (see the module docstring)."""

    def __init__(self, config: dict[str, Any], *, strict: bool = True) -> None:
        self._strict = strict
        self.events: list[tuple[_Sink, str, Any, Any]] = []
        self.custom: list[Any] = []
        self.sent: list[tuple[str, Any]] = []  # channel writes made during the run
        self._copies: list[tuple[Any, Any]] = []  # (copy, original) message handlers
        self.saver: HeldSaver | None = None
        self.store: HeldStore | None = None
        self.held_store: list[Any] | None = None  # a durable task's store writes, unsealed
        self.config = self._hold(config)

    # -- swapping sinks ---------------------------------------------------------------

    def _hold(self, config: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        protocol = _compat.stream_protocol(config)
        if protocol is not None:
            sink = _Sink(self, protocol, "nested")
            values["stream"] = _compat.new_stream_protocol(sink, set(protocol.modes))
        runtime = _compat.runtime(config)
        if runtime is not None and hasattr(runtime, "override"):
            extra: dict[str, Any] = {}
            if self._strict and getattr(runtime, "store", None) is not None:
                self.store = HeldStore(runtime.store)
                extra["store"] = self.store
            values["runtime"] = runtime.override(
                stream_writer=self._writer(runtime.stream_writer), **extra
            )
        real_send = _compat.sender(config)
        if real_send is not None:
            # writes made while the node runs (push_message, push_ui_message, a raw
            # send): held as output, written when the gate releases. LangGraph's own
            # record of resume values (``interrupt()``) is bookkeeping: it goes through
            passing = _compat.bookkeeping_channels()

            def send(writes: Any) -> None:
                writes = list(writes)
                own = [w for w in writes if w[0] in passing]
                if own:
                    real_send(own)
                self.sent.extend(w for w in writes if w[0] not in passing)

            values["send"] = send
        if self._strict and _compat.caller(config) is not None:
            # a functional-API task called inside the node would be checkpointed and
            # streamed by the run as it completes, before the gate decides: inside a
            # guarded node it runs in line, as part of the node
            values["call"] = _inline_call
        real = _compat.checkpointer(config)
        if real is not None:
            self.saver = HeldSaver(real)
            values["checkpointer"] = self.saver
        held = _compat.patch(config, **values) if values else dict(config)
        callbacks = config.get("callbacks")
        if callbacks is not None:
            held["callbacks"] = self._callbacks(callbacks)
        return held

    def _writer(self, real: Callable[[Any], None]) -> Callable[[Any], None]:
        from langchain_core.runnables.config import var_child_runnable_config

        def write(payload: Any) -> None:
            self.custom.append(payload)
            sink = _Sink(self, real, "custom")
            self.events.append((sink, "custom", payload, var_child_runnable_config.get()))

        return write

    def _swap(self, handler: Any) -> Any | None:
        sinks = _compat.streaming_sinks(handler)
        if not sinks:
            if self._strict and _compat.consumes_tokens(handler):
                return _HeldHandler(self, handler)
            return handler
        if sinks == ("?",):
            logger.warning(
                "a streaming callback handler of type %s is kept out of a guarded node: "
                "trustgate cannot hold what it would stream",
                type(handler).__name__,
            )
            return None
        twin = _clone(handler)
        for attr in sinks:
            setattr(twin, attr, _Sink(self, getattr(handler, attr), attr))
        if hasattr(handler, "seen") and isinstance(handler.seen, set):
            twin.seen = set(handler.seen)
            twin.metadata = {}
            self._copies.append((twin, handler))
        return twin

    def _handlers(self, handlers: list[Any]) -> list[Any]:
        out = []
        for h in handlers:
            twin = self._swap(h)
            if twin is not None:
                out.append(twin)
        return out

    def _callbacks(self, callbacks: Any) -> Any:
        if isinstance(callbacks, list):
            return self._handlers(callbacks)
        if hasattr(callbacks, "handlers") and hasattr(callbacks, "copy"):
            if not any(
                _compat.streaming_sinks(h) or (self._strict and _compat.consumes_tokens(h))
                for h in callbacks.handlers
            ):
                return callbacks
            twins: dict[int, Any] = {}

            def swap_all(handlers: list[Any]) -> list[Any]:
                out = []
                for h in handlers:
                    if id(h) not in twins:
                        twins[id(h)] = self._swap(h)
                    if twins[id(h)] is not None:
                        out.append(twins[id(h)])
                return out

            mgr = callbacks.copy()
            mgr.handlers = swap_all(list(callbacks.handlers))
            mgr.inheritable_handlers = swap_all(list(callbacks.inheritable_handlers))
            return mgr
        return callbacks

    # -- deciding -----------------------------------------------------------------------

    def drop(self) -> None:
        """A failed attempt, a halt: nothing held reaches anyone."""
        self.events.clear()
        self.custom.clear()
        self.sent.clear()
        if self.store is not None:
            self.store.take()

    def keep_checkpoints(self) -> None:
        """The output passed unchanged, or the subgraph paused: its rows are kept."""
        if self.saver is not None:
            self.saver.flush()

    async def akeep_checkpoints(self) -> None:
        if self.saver is not None:
            await self.saver.aflush()

    def store_writes(self) -> list[Any]:
        return list(self.store.ops) if self.store is not None else []

    def close(self) -> None:
        """Break the references back to the run (its config, its sinks) so that the
        run's loop is freed by reference counting when it ends, cycles or not.
        Whatever is still held is dropped."""
        self.drop()
        if self.saver is not None:
            self.saver.drop()
            self.saver = None
        self._copies.clear()
        self.config = {}

    def release(self, *, everything: bool, nested: bool = True) -> None:
        """Replay what is held: everything (the gate passed the output unchanged), or
        only the stream-writer payloads (the gate rewrote something; the rewritten
        messages reach the stream when the node returns)."""
        from langchain_core.runnables.config import var_child_runnable_config

        events, self.events = self.events, []
        self.custom = []
        if everything:
            for twin, original in self._copies:
                original.seen.update(twin.seen)
        for sink, how, item, cfg in events:
            if how == "custom":
                token = var_child_runnable_config.set(cfg) if cfg is not None else None
                try:
                    sink.real(item)
                finally:
                    if token is not None:
                        var_child_runnable_config.reset(token)
            elif not everything or (sink.kind == "nested" and not nested):
                continue  # nested graphs' own events: released only when declared
            elif how == "call":
                sink.real(item)
            elif how == "event":
                args, kwargs = item
                sink.real(*args, **kwargs)
            else:
                sink.real.send_nowait(item)
