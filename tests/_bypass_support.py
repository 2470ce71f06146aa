"""What the bypass tests look through: every place a lie could surface, channel by channel.

A lie is blocked only if it appears nowhere a person or a downstream component can see
it: not in the final state, not in ``get_state``/``get_state_history`` at any depth, not
in any checkpoint row (channel values and pending writes, every namespace), not in any
stream item of any mode (sync, async, with and without subgraphs), not in
``astream_events`` (v2) or ``stream_events(version="v3")``, not in a tool's arguments,
not in a downstream node's input, not in a marker file. Only the durable audit record
may name it: ``trust_reports``, ``GateHalted.report`` and the payload of a review
interrupt (the person must see what they decide on). A gate's report on the custom
stream is searched like any other stream item: that stream reaches end users, so the
report is streamed content-free.

:class:`Observation` collects, per channel, which lie fragments it met; a test asserts
the collection is empty, and the control tests assert that the same observation of the
same graph, unguarded, finds the lie (so a green run means something).

The search walks every string inside an object, including message fields
``trustgate.testing`` does not look at (``additional_kwargs``, ``response_metadata``,
names, artifacts), exceptions as a traceback prints them (message, notes, the whole
chain) and their attributes, ``Send`` arguments and ``Command`` fields. A string that
is base64 is searched decoded as well: encoding hides nothing from a reader.
Stream items are searched the moment they arrive: a node that mutates an object after
it was streamed cannot hide that it was streamed with the lie, nor add a lie afterwards.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import json
import re
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Interrupt, Send
from pydantic import BaseModel

from trustgate import Report
from trustgate.errors import GateHalted

__all__ = [
    "ALL_MODES",
    "LieNotBlocked",
    "Observation",
    "Run",
    "find_lies",
    "is_audit",
    "observe",
    "observe_async",
    "strings",
]

ALL_MODES = ("values", "updates", "messages", "custom", "debug", "tasks", "checkpoints", "tools")
"""Every stream mode that can carry what a node emitted."""


class LieNotBlocked(AssertionError):
    """The lie surfaced somewhere outside the audit record."""


# --- searching ----------------------------------------------------------------------------


def is_audit(obj: Any) -> bool:
    """The part of the audit record a stream item can be, which names the lie on
    purpose: a review interrupt's payload (the person decides on what they see). A
    gate's report on the custom stream (``{"trustgate": Report}``) is not: it reaches
    end users, and is searched like everything else."""
    if isinstance(obj, Mapping) and obj.get("trustgate") == "review":
        return True
    if isinstance(obj, Interrupt):
        return is_audit(obj.value)
    return False


_SKIP_KEYS = frozenset({"trust_reports"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def _decoded(text: str) -> str | None:
    """``text`` decoded, when it is base64 (what a reader would try first)."""
    if len(text) < 16 or len(text) % 4 or not _BASE64.fullmatch(text):
        return None
    try:
        return base64.b64decode(text, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def _exception_text(exc: BaseException) -> str:
    """What a traceback printer (``logging.exception``, an error tracker) shows."""
    return "".join(traceback.format_exception(exc))


def strings(obj: Any, out: list[str] | None = None) -> list[str]:
    """Every string inside ``obj`` outside the audit record."""
    found: list[str] = [] if out is None else out
    stack: list[tuple[Any, int]] = [(obj, 0)]
    seen: set[int] = set()
    alive: list[Any] = []  # ids are only unique among live objects: keep every one
    while stack:
        item, depth = stack.pop()
        alive.append(item)
        if item is None or isinstance(item, (bool, int, float)) or depth > 60:
            continue
        if isinstance(item, str):
            found.append(item)
            plain = _decoded(item)
            if plain is not None:
                found.append(plain)
            continue
        if isinstance(item, (bytes, bytearray)):
            found.append(bytes(item).decode("utf-8", "replace"))
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        d = depth + 1
        if isinstance(item, BaseModel):
            # every field, extras included (a message's metadata, kwargs, artifact)
            stack.append((item.__dict__, d))
            stack.append((item.__pydantic_extra__, d))
        elif isinstance(item, Mapping):
            if is_audit(item):
                continue
            for k, v in item.items():
                if isinstance(k, str) and k in _SKIP_KEYS:
                    continue
                stack.append((k, d))
                stack.append((v, d))
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend((v, d) for v in item)
        elif isinstance(item, Send):
            stack.append((item.node, d))
            stack.append((item.arg, d))
        elif isinstance(item, BaseException):
            found.append(str(item))
            found.append(_exception_text(item))
            stack.extend((a, d) for a in item.args)
            attrs = {k: v for k, v in getattr(item, "__dict__", {}).items() if k != "__notes__"}
            if isinstance(item, GateHalted):
                attrs.pop("report", None)  # the durable record
            stack.append((attrs, d))
            for linked in (item.__cause__, item.__context__):
                if linked is not None:
                    stack.append((linked, d))
        elif isinstance(item, Interrupt):
            if not is_audit(item):
                stack.append((item.value, d))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            for f in dataclasses.fields(item):
                stack.append((getattr(item, f.name, None), d))
        elif hasattr(item, "_asdict"):  # named tuples (StateSnapshot, PregelTask)
            stack.append((item._asdict(), d))
        elif callable(item) or isinstance(item, type):
            continue
        elif hasattr(item, "__dict__"):
            stack.append((vars(item), d))
        elif hasattr(item, "__slots__"):
            for slot in item.__slots__:
                stack.append((getattr(item, slot, None), d))
    return found


def find_lies(obj: Any, lies: Sequence[str]) -> list[str]:
    """The lie fragments that appear in ``obj`` (outside the audit record)."""
    text = "\n".join(strings(obj))
    return [lie for lie in lies if lie in text]


# --- one observed run -----------------------------------------------------------------------


@dataclass
class Observation:
    """Where the lie fragments surfaced during and after one run, by channel."""

    lies: tuple[str, ...]
    hits: dict[str, set[str]] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)
    halted: GateHalted | None = None
    error: BaseException | None = None
    interrupts: list[Any] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    items: int = 0

    def see(self, channel: str, obj: Any) -> None:
        found = find_lies(obj, self.lies)
        if found:
            self.hits.setdefault(channel, set()).update(found)
            self.examples.setdefault(channel, f"{obj!r:.400}")

    @property
    def channels(self) -> set[str]:
        return set(self.hits)

    def assert_blocked(self, *, allow: Iterable[str] = ()) -> None:
        """Raise :class:`LieNotBlocked` naming every channel the lie reached."""
        allowed = set(allow)
        bad = {c: sorted(h) for c, h in self.hits.items() if c not in allowed}
        if bad:
            lines = [f"{c}: {h} e.g. {self.examples[c]}" for c, h in sorted(bad.items())]
            raise LieNotBlocked("the lie got through:\n  " + "\n  ".join(lines))


@dataclass
class Run:
    """How to run a graph once, from first input to the end, answering interrupts.

    ``answer(interrupt_value)`` returns the resume value for a pending interrupt, or
    ``None`` to stop there.
    """

    app: Any
    inputs: Any
    config: dict[str, Any]
    lies: tuple[str, ...]
    context: Any = None
    answer: Callable[[Any], Any] | None = None
    is_async: bool = False
    max_rounds: int = 6


def _pending(app: Any, config: dict[str, Any]) -> list[Any]:
    return [i.value for i in app.get_state(config).interrupts]


async def _apending(app: Any, config: dict[str, Any]) -> list[Any]:
    return [i.value for i in (await app.aget_state(config)).interrupts]


def _next_input(run: Run, obs: Observation, pending: list[Any]) -> Any:
    if not pending or run.answer is None:
        return None
    obs.interrupts.extend(pending)
    value = run.answer(pending[0])
    return None if value is None else Command(resume=value)


def _v3_transformers() -> list[Any]:
    from langgraph.stream.transformers import (
        CheckpointsTransformer,
        CustomTransformer,
        DebugTransformer,
        TasksTransformer,
        UpdatesTransformer,
    )

    return [
        UpdatesTransformer,
        CustomTransformer,
        DebugTransformer,
        TasksTransformer,
        CheckpointsTransformer,
    ]


def _see_stream(obs: Observation, how: str, part: Any) -> None:
    obs.items += 1
    if how.startswith("events"):
        name = part.get("event", "?") if isinstance(part, Mapping) else "?"
        obs.see(f"{how}:{name}", part)
        return
    if how == "v3":
        method = part.get("method", "?") if isinstance(part, Mapping) else "?"
        obs.see(f"v3:{method}", part)
        return
    # (ns, mode, data) with subgraphs, (mode, data) without
    if isinstance(part, tuple) and len(part) == 3:
        ns, mode, data = part
        where = f"{how}:{mode}" + (":nested" if ns else "")
    else:
        mode, data = part
        where = f"{how}:{mode}"
    obs.see(where, data)


def observe(run: Run, how: str, *, subgraphs: bool = True) -> Observation:
    """Run ``run`` synchronously (``how``: ``stream`` or ``v3``) and look everywhere."""
    obs = Observation(run.lies)
    current = run.inputs
    try:
        for _ in range(run.max_rounds):
            if how == "stream":
                for part in run.app.stream(
                    current,
                    run.config,
                    context=run.context,
                    stream_mode=list(ALL_MODES),
                    subgraphs=subgraphs,
                ):
                    _see_stream(obs, "stream", part)
            elif how == "v3":
                stream = run.app.stream_events(
                    current,
                    run.config,
                    version="v3",
                    context=run.context,
                    transformers=_v3_transformers(),
                )
                for event in stream:
                    _see_stream(obs, "v3", event)
                if stream._mux._events._error is not None:
                    raise stream._mux._events._error
            else:
                raise ValueError(how)
            current = _next_input(run, obs, _pending(run.app, run.config))
            if current is None:
                break
    except GateHalted as exc:
        obs.halted = exc
    except GraphRecursionError as exc:
        obs.error = exc
    _after(run, obs)
    return obs


async def observe_async(run: Run, how: str, *, subgraphs: bool = True) -> Observation:
    """Run ``run`` asynchronously (``how``: ``astream``, ``events`` (astream_events
    v2) or ``v3``) and look everywhere."""
    obs = Observation(run.lies)
    current = run.inputs
    try:
        for _ in range(run.max_rounds):
            if how == "astream":
                async for part in run.app.astream(
                    current,
                    run.config,
                    context=run.context,
                    stream_mode=list(ALL_MODES),
                    subgraphs=subgraphs,
                ):
                    _see_stream(obs, "astream", part)
            elif how == "events":
                async for event in run.app.astream_events(
                    current, run.config, version="v2", context=run.context
                ):
                    _see_stream(obs, "events", event)
            elif how == "v3":
                stream = await run.app.astream_events(
                    current,
                    run.config,
                    version="v3",
                    context=run.context,
                    transformers=_v3_transformers(),
                )
                async for event in stream:
                    _see_stream(obs, "v3", event)
                err = stream._mux._events._error
                if err is not None:
                    raise err
            else:
                raise ValueError(how)
            current = _next_input(run, obs, await _apending(run.app, run.config))
            if current is None:
                break
    except GateHalted as exc:
        obs.halted = exc
    except GraphRecursionError as exc:
        obs.error = exc
    await asyncio.to_thread(_after, run, obs)
    return obs


# --- after the run: state at every depth, history, checkpoint rows -----------------------------


def _snapshot(app: Any, obs: Observation, where: str, snap: Any, depth: int = 0) -> None:
    if snap is None or depth > 6:
        return
    obs.see(where, snap.values)
    for task in snap.tasks:
        obs.see(f"{where}.tasks", [task.error, task.interrupts, task.result])
        state = task.state
        if isinstance(state, Mapping) and "configurable" in state:
            # a history snapshot names its subgraph's state by config
            state = app.get_state(state, subgraphs=True)
        if state is not None and hasattr(state, "values"):
            _snapshot(app, obs, f"{where}.subgraph", state, depth + 1)


def _after(run: Run, obs: Observation) -> None:
    from trustgate import reports

    app, config = run.app, run.config
    thread = config["configurable"]["thread_id"]
    saver = app.checkpointer
    snap = app.get_state(config)
    values = snap.values
    if isinstance(values, Mapping):
        obs.final = {k: v for k, v in values.items() if k != "trust_reports"}
    else:  # a graph whose state is one root value
        obs.final = {"__root__": values}
    obs.see("final_state", obs.final)
    _snapshot(app, obs, "get_state(subgraphs=True)", app.get_state(config, subgraphs=True))
    for past in app.get_state_history(config):
        _snapshot(app, obs, "get_state_history", past)
    namespaces: set[str] = set()
    for item in saver.list({"configurable": {"thread_id": thread}}):
        cfg = item.config.get("configurable") or {}
        ns = cfg.get("checkpoint_ns") or ""
        namespaces.add(ns)
        values = {
            k: v
            for k, v in (item.checkpoint.get("channel_values") or {}).items()
            if k not in _SKIP_KEYS
        }
        writes = [w for w in item.pending_writes or () if w[1] not in _SKIP_KEYS]
        where = "checkpoint_rows" + (":nested" if ns else "")
        obs.see(where, [values, writes, item.metadata])
    for ns in sorted(n for n in namespaces if n):
        nested = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
        for past in app.get_state_history(nested):
            _snapshot(app, obs, "get_state_history:nested", past)
    obs.reports = reports(app, config)


def see_recorder(obs: Observation, recorder: Any, downstream: Sequence[str]) -> None:
    """Tool executions, downstream node inputs and the marker files real tools wrote."""
    obs.see("tool_runs", [(r.tool, dict(r.args)) for r in recorder.tool_runs])
    for node in downstream:
        obs.see(f"inputs_of:{node}", recorder.inputs_of(node))
    for marker in recorder.markers():
        obs.see(f"marker:{marker.name}", marker.read_text(encoding="utf-8"))


def marker_text(path: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(path.glob("*.ran")))


def normalise(value: Any) -> Any:
    """A state as comparable across two runs: message and tool-call ids (random or
    counted per build) replaced by their order of first appearance."""
    ids: dict[str, str] = {}

    def label(raw: Any) -> Any:
        if not isinstance(raw, str) or not raw:
            return raw
        return ids.setdefault(raw, f"#{len(ids)}")

    def walk(v: Any) -> Any:
        if isinstance(v, BaseMessage):
            data = v.model_dump()
            data["id"] = label(data.get("id"))
            if "tool_call_id" in data:
                data["tool_call_id"] = label(data["tool_call_id"])
            for key in ("tool_calls", "invalid_tool_calls", "tool_call_chunks"):
                if key in data:
                    data[key] = [{**c, "id": label(c.get("id"))} for c in data[key]]
            data.pop("response_metadata", None)
            data.pop("usage_metadata", None)
            return walk(data)
        if isinstance(v, BaseModel):
            return (type(v).__name__, walk(v.model_dump()))
        if isinstance(v, Mapping):
            return {str(k): walk(x) for k, x in v.items() if k != "trust_reports"}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return (type(v).__name__, walk(dataclasses.asdict(v)))
        return v

    return json.loads(json.dumps(walk(value), default=repr, sort_keys=True))
