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

Three things narrow a passing release further:

* **Model calls the node discarded.** A node may ask its model twice (a draft, then a
  revision; a middleware that re-asks) and return only the last answer. Every held
  event is tagged with the callback run it was emitted for, the hold records each
  model run's final message, and a release replays a model run's events only when
  its message is among the released ones (same id, or the same text and tool calls:
  a node that re-wraps the model's text releases that text). Events of no model run
  (the node's chain and tool events) follow the rules above.
* **The gate's feedback.** On a re-render the next attempt's input carries what the
  gate told the node (the issues, a feedback message, the messages it carried), and
  that quotes the rejected output. Before an attempt after the first is replayed,
  every held payload is scrubbed of it: a feedback message becomes a content-free
  placeholder of the same id (start and end events stay paired), an issue text
  inside any string is replaced.
* **User callback handlers.** A user's own handler (sync or async, any hook that
  receives model or node output) is held like the graph's own streams, and replayed
  in order through LangChain's own dispatch on release (subject to the above).
  Tracers and telemetry handlers stay live (:func:`~trustgate._compat.is_telemetry`).

The other ways out of a running node are held in the same config: the checkpoints a
subgraph inside it writes and its store writes (:mod:`trustgate.graph._held`), the
channel writes it makes while it runs (``push_message``, a raw send), and
functional-API tasks, which run in line as part of the node.
"""

from __future__ import annotations

import contextvars
import dataclasses
import inspect
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage

from trustgate import _compat
from trustgate.graph._held import HeldSaver, HeldStore

__all__ = ["Feedback", "StreamHold"]

logger = logging.getLogger(__name__)

# the callback run a swapped handler is handling while it emits into a sink
_RUN: contextvars.ContextVar[Any] = contextvars.ContextVar("trustgate_callback_run", default=None)
# the model runs a guarded node's gates released, told to the guarded node it runs
# inside (a guarded graph used as a node): their events reach the outer hold already
# vetted by an inner gate, and the outer node need not return their answers itself
_RELEASED: contextvars.ContextVar[set[Any] | None] = contextvars.ContextVar(
    "trustgate_released_model_runs", default=None
)

WITHHELD = "[withheld by trustgate]"
"""What stands in a replayed payload where the gate's feedback to the node, or an answer
the node discarded, was."""


@dataclass(slots=True)
class _Event:
    """One held emission: the sink it was meant for, how it was emitted, the payload,
    the LangChain config of a stream-writer call, and the callback run it belongs to."""

    sink: _Sink
    how: str
    item: Any
    cfg: Any = None
    run: Any = None


class _Sink:
    """Stands in for a stream sink: records what would have been emitted."""

    __slots__ = ("hold", "kind", "real")

    def __init__(self, hold: StreamHold, real: Any, kind: str) -> None:
        self.hold = hold
        self.real = real
        self.kind = kind

    def __call__(self, item: Any) -> None:
        self.hold.events.append(_Event(self, "call", item, run=_RUN.get()))

    # the send_stream protocol of astream_events / astream_log handlers
    def send_nowait(self, item: Any) -> None:
        self.hold.events.append(_Event(self, "send_nowait", item, run=_RUN.get()))

    async def send(self, item: Any) -> None:
        self.hold.events.append(_Event(self, "send_nowait", item, run=_RUN.get()))

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

    args, kwargs = input
    if inspect.iscoroutinefunction(func):
        return asyncio.ensure_future(func(*args, **kwargs))
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as exc:  # the task's own failure: raised where its result is read
        fut.set_exception(exc)
    return fut


_MODEL_EVENTS = frozenset(
    {
        "on_llm_start",
        "on_chat_model_start",
        "on_llm_new_token",
        "on_llm_end",
        "on_llm_error",
        "on_stream_event",
    }
)


class _HeldHandler(BaseCallbackHandler):
    """A user's own handler (a UI feed, stdout, a log of model answers, sync or async):
    inside a guarded node everything it is told waits with the node's output and is
    replayed in order when the gate releases it unchanged. Telemetry is not held (its
    timings would be wrong)."""

    # recording is instant and must keep the order of events; the real handler's own
    # ``run_inline`` applies when it is replayed
    run_inline = True

    def __init__(self, hold: StreamHold, real: Any) -> None:
        self._hold = hold
        self._real = real
        self.raise_error = getattr(real, "raise_error", False)

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
        self._hold.note(name, args, kwargs)
        if not _compat.overrides(self._real, name):
            if name == "on_chat_model_start":
                # LangChain falls back to on_llm_start for a handler without it
                raise NotImplementedError(f"{type(self._real).__name__} has no {name}")
            return  # the handler does nothing with this event
        sink = _Sink(self._hold, self._real, "handler")
        self._hold.events.append(
            _Event(sink, "event", (name, args, kwargs), run=kwargs.get("run_id"))
        )

    event.__name__ = name
    return event


for _name in _compat.CALLBACK_EVENTS:
    setattr(_HeldHandler, _name, _held_event(_name))


# --- which model calls were released ------------------------------------------------------


def _calls(message: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(message, AIMessage):
        return ()
    return tuple(
        (str(c.get("name") or ""), json.dumps(c.get("args"), sort_keys=True, default=str))
        for c in message.tool_calls
    )


def _text(value: Any) -> str:
    if isinstance(value, BaseMessage):
        return value.text
    return value if isinstance(value, str) else ""


class _Released:
    """What a release hands on, as a model run's output is compared with it: message
    ids, (text, tool calls) of every message, and the texts of other written values."""

    def __init__(self, messages: Iterable[Any], values: Iterable[Any]) -> None:
        self.ids: set[str] = set()
        self.shapes: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        self.texts: set[str] = set()
        for m in messages:
            if not isinstance(m, BaseMessage):
                continue
            if m.id:
                self.ids.add(str(m.id))
            self.shapes.add((m.text, _calls(m)))
        for v in values:
            self._strings(v, 0)

    def _strings(self, value: Any, depth: int) -> None:
        if depth > 8:
            return
        if isinstance(value, str):
            self.texts.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                self._strings(v, depth + 1)
            try:
                self.texts.add(json.dumps(value, sort_keys=True, default=str))
            except (TypeError, ValueError) as exc:  # a value JSON cannot show
                logger.debug("a released value is not JSON: %s", exc)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self._strings(v, depth + 1)
        elif hasattr(value, "model_dump"):
            self._strings(value.model_dump(mode="json"), depth + 1)

    def has(self, output: Any) -> bool:
        if isinstance(output, BaseMessage) and output.id and str(output.id) in self.ids:
            return True
        text, calls = _text(output), _calls(output)
        if not text and not calls:
            return False
        if (text, calls) in self.shapes:
            return True
        if calls:
            return False
        if text in self.texts:
            return True
        try:  # structured output: the model's JSON, released parsed
            parsed = json.loads(text)
        except ValueError:
            return False
        return isinstance(parsed, dict) and json.dumps(parsed, sort_keys=True) in self.texts


# --- the gate's feedback to a re-rendered node -------------------------------------------


@dataclass(frozen=True, slots=True)
class Feedback:
    """What the gate told the node for its next attempt (see the module docstring):
    the issue texts, the id prefix of its feedback messages, the messages it carried."""

    issues: tuple[str, ...] = ()
    prefix: str = ""
    messages: tuple[Any, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.issues or self.prefix or self.messages)

    def told(self, message: BaseMessage) -> bool:
        """Whether ``message`` is one the gate wrote into the node's input."""
        if self.prefix and str(message.id or "").startswith(self.prefix):
            return True
        for carried in self.messages:
            if not isinstance(carried, BaseMessage):
                continue
            if carried.id is not None and carried.id == message.id:
                return True
            if carried.id is None and message.id is None and carried == message:
                return True
        return False


def _placeholder(message: BaseMessage) -> BaseMessage:
    update: dict[str, Any] = {
        "content": WITHHELD,
        "additional_kwargs": {},
        "response_metadata": {},
        "name": None,
    }
    if isinstance(message, AIMessage):
        update.update(tool_calls=[], invalid_tool_calls=[])
        if hasattr(message, "tool_call_chunks"):
            update["tool_call_chunks"] = []
    if hasattr(message, "artifact"):
        update["artifact"] = None
    return message.model_copy(update=update)


class _Scrubber:
    """A copy of a held payload with the gate's feedback and the answers of discarded
    model calls replaced (a revision's input quotes its draft); objects with nothing to
    scrub are returned as they are (the same object)."""

    def __init__(self, feedback: Feedback, discarded: Sequence[Any] = ()) -> None:
        self.feedback = feedback
        self.ids = {str(m.id) for m in discarded if isinstance(m, BaseMessage) and m.id}
        self.shapes = {(_text(m), _calls(m)) for m in discarded if _text(m) or _calls(m)}
        texts = {_text(m) for m in discarded if len(_text(m)) >= 8}
        self.issues = sorted({i for i in (*feedback.issues, *texts) if i}, key=len, reverse=True)
        self.memo: dict[int, Any] = {}
        self.alive: list[Any] = []

    def __bool__(self) -> bool:
        return bool(self.feedback or self.ids or self.shapes)

    def _withheld(self, message: BaseMessage) -> bool:
        if self.feedback.told(message):
            return True
        if message.id and str(message.id) in self.ids:
            return True
        return (message.text, _calls(message)) in self.shapes

    def __call__(self, obj: Any, depth: int = 0) -> Any:
        if obj is None or isinstance(obj, (bool, int, float, bytes)) or depth > 40:
            return obj
        if isinstance(obj, str):
            for issue in self.issues:
                if issue in obj:
                    obj = obj.replace(issue, WITHHELD)
            return obj
        key = id(obj)
        if key in self.memo:
            return self.memo[key]
        self.alive.append(obj)
        self.memo[key] = obj  # a cycle back to this object keeps the original
        out = self._rebuild(obj, depth + 1)
        self.memo[key] = out
        return out

    def _rebuild(self, obj: Any, d: int) -> Any:
        if isinstance(obj, BaseMessage) and self._withheld(obj):
            return _placeholder(obj)
        if isinstance(obj, dict):
            pairs = [(k, self(k, d), self(v, d)) for k, v in obj.items()]
            if all(k is nk and v is obj[k] for k, nk, v in pairs):
                return obj
            try:
                new = type(obj)()
            except TypeError:
                new = {}
            for _k, nk, v in pairs:
                new[nk] = v
            return new
        if isinstance(obj, (list, tuple)):
            items = [self(v, d) for v in obj]
            if all(a is b for a, b in zip(items, obj, strict=True)):
                return obj
            if isinstance(obj, list):
                return items
            if hasattr(obj, "_make"):
                return obj._make(items)
            return tuple(items)
        if hasattr(obj, "model_copy") and hasattr(obj, "__dict__"):
            changed = {k: nv for k, v in vars(obj).items() if (nv := self(v, d)) is not v}
            return obj.model_copy(update=changed) if changed else obj
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            changed = {
                f.name: nv
                for f in dataclasses.fields(obj)
                if (nv := self(v := getattr(obj, f.name, None), d)) is not v
            }
            if not changed:
                return obj
            try:
                return dataclasses.replace(obj, **changed)
            except (TypeError, ValueError) as exc:  # a field init cannot take
                logger.debug("rebuilding a %s to scrub it: %s", type(obj).__name__, exc)
                return WITHHELD
        return obj


# --- the hold --------------------------------------------------------------------------


def stop_collecting(token: contextvars.Token[set[Any] | None]) -> None:
    _RELEASED.reset(token)


class StreamHold:
    """The buffered sinks of one guarded task (see the module docstring)."""

    def __init__(self, config: dict[str, Any], *, strict: bool = True) -> None:
        self._strict = strict
        self.events: list[_Event] = []
        self.custom: list[Any] = []
        self.sent: list[tuple[str, Any]] = []  # channel writes made during the run
        self._copies: list[tuple[Any, Any]] = []  # (copy, original) message handlers
        self._models: dict[Any, list[Any]] = {}  # model run id -> its final outputs
        self.inner_released: set[Any] = set()  # model runs an inner gate released
        self.feedback = Feedback()  # set for an attempt after the first
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
        def write(payload: Any) -> None:
            self.custom.append(payload)
            sink = _Sink(self, real, "custom")
            self.events.append(_Event(sink, "custom", payload, _compat.current_config()))

        return write

    def note(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
        """Keep track of model runs and their final output (any handler in the node
        reports the same callback events; noting them twice changes nothing)."""
        if name not in _MODEL_EVENTS:
            return
        run = kwargs.get("run_id")
        if run is None:
            return
        outputs = self._models.setdefault(run, [])
        if name == "on_llm_end":
            response = args[0] if args else kwargs.get("response")
            found = [
                getattr(gen, "message", None) or getattr(gen, "text", None)
                for gens in getattr(response, "generations", None) or ()
                for gen in gens
            ]
            for out in found:
                if out is not None and not any(out is o for o in outputs):
                    outputs.append(out)

    def _tagged(self, method: Callable[..., Any], name: str) -> Callable[..., Any]:
        """``method`` of a swapped handler, run with its callback run as the current
        one, so each emission it makes is tagged with the run it belongs to."""
        hold = self
        if inspect.iscoroutinefunction(method):

            async def atagged(*args: Any, **kwargs: Any) -> Any:
                hold.note(name, args, kwargs)
                token = _RUN.set(kwargs.get("run_id"))
                try:
                    return await method(*args, **kwargs)
                finally:
                    _RUN.reset(token)

            return atagged

        def tagged(*args: Any, **kwargs: Any) -> Any:
            hold.note(name, args, kwargs)
            token = _RUN.set(kwargs.get("run_id"))
            try:
                return method(*args, **kwargs)
            finally:
                _RUN.reset(token)

        return tagged

    def _holds(self, handler: Any) -> bool:
        return self._strict and _compat.receives_output(handler)

    def _swap(self, handler: Any) -> Any | None:
        sinks = _compat.streaming_sinks(handler)
        if not sinks:
            if self._holds(handler):
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
        for name in _compat.CALLBACK_EVENTS:
            method = getattr(twin, name, None)
            if callable(method):
                setattr(twin, name, self._tagged(method, name))
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
                _compat.streaming_sinks(h) or self._holds(h) for h in callbacks.handlers
            ) and not any(self._holds(h) for h in callbacks.inheritable_handlers):
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
        self._models.clear()
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

    def _unreleased_models(self, messages: Sequence[Any], values: Sequence[Any]) -> set[Any]:
        released = _Released(messages, values)
        return {
            run
            for run, outputs in self._models.items()
            if run not in self.inner_released and not any(released.has(out) for out in outputs)
        }

    def collecting(self) -> contextvars.Token[set[Any] | None]:
        """While the node runs: guarded nodes inside it tell this hold what they
        released (reset with :func:`stop_collecting`)."""
        return _RELEASED.set(self.inner_released)

    def _plan(
        self,
        everything: bool,
        nested: bool,
        messages: Sequence[Any] | None,
        values: Sequence[Any],
    ) -> list[_Event]:
        """What a release replays, in order, scrubbed of the gate's feedback."""
        events, self.events = self.events, []
        self.custom = []
        dropped: set[Any] = set()
        if everything:
            if messages is not None and self._models:
                dropped = self._unreleased_models(messages, values)
                if dropped:
                    logger.debug(
                        "%d model call(s) whose answer the node did not return: their "
                        "events are not replayed",
                        len(dropped),
                    )
            for twin, original in self._copies:
                original.seen.update(twin.seen)
        discarded = [out for run in dropped for out in self._models.get(run, ())]
        outer = _RELEASED.get()
        if everything and outer is not None and outer is not self.inner_released:
            outer.update(run for run in self._models if run not in dropped)
            outer.update(self.inner_released)
        self._models.clear()
        plan = []
        for ev in events:
            if ev.how != "custom":
                if not everything or (ev.sink.kind == "nested" and not nested):
                    continue  # nested graphs' own events: released only when declared
                if ev.run is not None and ev.run in dropped:
                    continue
            plan.append(ev)
        if plan and (self.feedback or discarded):  # else there is nothing to scrub
            scrub = _Scrubber(self.feedback, discarded)
            if scrub:
                for ev in plan:
                    ev.item = scrub(ev.item)
        return plan

    @staticmethod
    def _deliver(ev: _Event) -> None:
        if ev.how == "custom":
            token = _compat.set_config(ev.cfg) if ev.cfg is not None else None
            try:
                ev.sink.real(ev.item)
            finally:
                if token is not None:
                    _compat.reset_config(token)
        elif ev.how == "call":
            ev.sink.real(ev.item)
        elif ev.how == "event":
            name, args, kwargs = ev.item
            _compat.replay_event(ev.sink.real, name, args, kwargs)
        else:
            ev.sink.real.send_nowait(ev.item)

    def release(
        self,
        *,
        everything: bool,
        nested: bool = True,
        messages: Sequence[Any] | None = None,
        values: Sequence[Any] = (),
    ) -> None:
        """Replay what is held: everything (the gate passed the output unchanged), or
        only the stream-writer payloads (the gate rewrote something; the rewritten
        messages reach the stream when the node returns). ``messages`` (and the other
        ``values``) are what the release hands on: a model call whose answer is not
        among them is not replayed. An async user handler is replayed through
        LangChain's own sync dispatch (its coroutines run to completion)."""
        for ev in self._plan(everything, nested, messages, values):
            self._deliver(ev)

    async def arelease(
        self,
        *,
        everything: bool,
        nested: bool = True,
        messages: Sequence[Any] | None = None,
        values: Sequence[Any] = (),
    ) -> None:
        """:meth:`release` on the async path: user handlers are awaited in order."""
        for ev in self._plan(everything, nested, messages, values):
            if ev.how == "event":
                name, args, kwargs = ev.item
                await _compat.areplay_event(ev.sink.real, name, args, kwargs)
            else:
                self._deliver(ev)
