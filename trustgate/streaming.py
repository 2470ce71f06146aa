"""Streaming that never leaks what a gate has not released.

``guard()`` already keeps held content out of ``updates``/``values`` streams and
state. Token streams are different: a model inside a guarded node streams its tokens
through callbacks while it runs, before any gate has seen the answer. ``stream`` /
``astream`` wrap a guarded graph's stream and hold every ``messages`` chunk a guarded
node produces until its gate reports:

* ``pass``: the held chunks are released as they were (the consumer still gets the
  content token by token);
* ``modified`` / ``caveat`` / ``review``: the held chunks are dropped and the released
  (rewritten) messages are emitted instead, from the gate's own update;
* ``halted`` / ``rerender``: the held chunks are dropped.

Whatever is still held when the run ends (an interrupt, an error) is dropped.
``astream_events`` applies the same rule to the events API.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from trustgate.report import Report
from trustgate.wiring import HALT_NODE

__all__ = ["astream", "astream_events", "stream"]

_FORCED = ("messages", "custom", "updates")


def _gate_map(graph: Any) -> dict[str, str]:
    """gate node name → guarded node name, over the graph and its subgraphs."""
    out: dict[str, str] = {}
    graphs = [graph]
    with contextlib.suppress(Exception):  # no subgraph introspection: top level only
        graphs += [g for _, g in graph.get_subgraphs(recurse=True)]
    for g in graphs:
        builder = getattr(g, "builder", None)
        for name, spec in (getattr(builder, "nodes", None) or {}).items():
            meta = (getattr(spec, "metadata", None) or {}).get("trustgate")
            if isinstance(meta, Mapping) and "guards" in meta:
                out[name] = str(meta["guards"])
    return out


def _messages_in(update: Any) -> list[BaseMessage]:
    found: list[BaseMessage] = []
    if isinstance(update, Mapping):
        for key, value in update.items():
            if key == "trust_reports":
                continue
            items = value if isinstance(value, (list, tuple)) else [value]
            found.extend(m for m in items if isinstance(m, AIMessage))
    return found


def _as_chunk(message: BaseMessage) -> AIMessageChunk:
    if isinstance(message, AIMessageChunk):
        return message
    return AIMessageChunk(
        content=message.content,
        id=message.id,
        tool_call_chunks=[
            {
                "name": c["name"],
                "args": json.dumps(c["args"]),
                "id": c.get("id"),
                "index": i,
                "type": "tool_call_chunk",
            }
            for i, c in enumerate(getattr(message, "tool_calls", []) or [])
        ],
    )


class _Holder:
    """Holds guarded nodes' message chunks per (namespace, node) until the gate speaks."""

    def __init__(self, graph: Any) -> None:
        self.gates = _gate_map(graph)
        self.guarded = set(self.gates.values())
        self.held: dict[tuple[tuple[str, ...], str], list[Any]] = {}
        self.replace: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}

    def message(self, ns: tuple[str, ...], data: Any) -> list[Any]:
        _chunk, meta = data
        node = meta.get("langgraph_node") if isinstance(meta, Mapping) else None
        if node in self.guarded:
            self.held.setdefault((ns, node), []).append(data)
            return []
        return [data]

    def report(self, ns: tuple[str, ...], report: Report) -> list[Any]:
        key = (ns, report.node)
        held = self.held.pop(key, [])
        if report.decision == "pass" and report.released:
            return held
        if report.released:
            meta = dict(held[0][1]) if held else {"langgraph_node": report.node}
            self.replace[(ns, report.gate)] = meta
        return []

    def task(self, data: Any, mode: str) -> Any:
        """Task views show a task's input: a gate's input is the held, unreleased update."""
        payload = data.get("payload") if mode == "debug" and isinstance(data, Mapping) else data
        if not isinstance(payload, Mapping) or "input" not in payload:
            return data
        name = payload.get("name")
        if name not in self.gates and name != HALT_NODE:
            return data
        clean = {k: v for k, v in payload.items() if k != "input"}
        return {**data, "payload": clean} if mode == "debug" else clean

    def update(self, ns: tuple[str, ...], data: Any) -> list[Any]:
        out: list[Any] = []
        if not isinstance(data, Mapping):
            return out
        for node, update in data.items():
            meta = self.replace.pop((ns, node), None)
            if meta is None or node not in self.gates:
                continue
            out.extend((_as_chunk(m), meta) for m in _messages_in(update))
        return out


def _split(part: Any) -> tuple[tuple[str, ...], str, Any]:
    ns, mode, data = part
    return tuple(ns), mode, data


def _shape(
    ns: tuple[str, ...], mode: str, data: Any, modes: Sequence[str], single: bool, subgraphs: bool
) -> Any:
    if single:
        return (ns, data) if subgraphs else data
    return (ns, mode, data) if subgraphs else (mode, data)


def _modes(stream_mode: str | Sequence[str] | None) -> tuple[list[str], bool]:
    if stream_mode is None:
        return ["values"], True
    if isinstance(stream_mode, str):
        return [stream_mode], True
    return list(stream_mode), False


def _process(
    holder: _Holder,
    part: Any,
    modes: Sequence[str],
    single: bool,
    subgraphs: bool,
) -> list[Any]:
    ns, mode, data = _split(part)
    emitted: list[tuple[str, Any]] = []
    if mode == "messages":
        emitted += [("messages", d) for d in holder.message(ns, data)]
    elif mode == "custom":
        report = data.get("trustgate") if isinstance(data, Mapping) else None
        if isinstance(report, Report):
            emitted += [("messages", d) for d in holder.report(ns, report)]
        emitted.append(("custom", data))
    elif mode == "updates":
        replaced = holder.update(ns, data)
        emitted.append(("updates", data))
        emitted += [("messages", d) for d in replaced]
    elif mode in ("tasks", "debug"):
        emitted.append((mode, holder.task(data, mode)))
    else:
        emitted.append((mode, data))
    out = []
    for m, d in emitted:
        if m not in modes:
            continue
        if ns and not subgraphs and m != "messages":
            continue
        out.append(_shape(ns, m, d, modes, single, subgraphs))
    return out


def stream(
    graph: Any,
    input: Any,
    config: Any = None,
    *,
    stream_mode: str | Sequence[str] | None = None,
    subgraphs: bool = False,
    **kwargs: Any,
) -> Iterator[Any]:
    """``graph.stream`` that releases a guarded node's tokens only after its gate.

    Same arguments and output shape as ``CompiledStateGraph.stream``.

    Example:
        ```python
        for token, meta in trustgate.stream(app, inputs, config, stream_mode="messages"):
            print(token.content, end="")
        ```
    """
    modes, single = _modes(stream_mode)
    holder = _Holder(graph)
    forced = list(dict.fromkeys([*modes, *_FORCED]))
    for part in graph.stream(input, config, stream_mode=forced, subgraphs=True, **kwargs):
        yield from _process(holder, part, modes, single, subgraphs)


async def astream(
    graph: Any,
    input: Any,
    config: Any = None,
    *,
    stream_mode: str | Sequence[str] | None = None,
    subgraphs: bool = False,
    **kwargs: Any,
) -> AsyncIterator[Any]:
    """Async :func:`stream`."""
    modes, single = _modes(stream_mode)
    holder = _Holder(graph)
    forced = list(dict.fromkeys([*modes, *_FORCED]))
    async for part in graph.astream(input, config, stream_mode=forced, subgraphs=True, **kwargs):
        for out in _process(holder, part, modes, single, subgraphs):
            yield out


async def astream_events(
    graph: Any, input: Any, config: Any = None, *, version: str = "v2", **kwargs: Any
) -> AsyncIterator[dict[str, Any]]:
    """``graph.astream_events`` holding every event a guarded node emits until its gate.

    On ``pass`` the held events are released in order; on a rewrite they are dropped
    and one ``on_chat_model_stream`` event per released message carries the
    rewritten content; on a halt or re-render they are dropped.
    """
    gates = _gate_map(graph)
    guarded = set(gates.values())
    held: dict[tuple[str, str], list[dict[str, Any]]] = {}
    done: set[str] = set()
    async for event in graph.astream_events(input, config, version=version, **kwargs):
        meta = event.get("metadata") or {}
        node = meta.get("langgraph_node")
        ns = str(meta.get("langgraph_checkpoint_ns", "")).rsplit("|", 1)[0]
        parent = ns if "|" in str(meta.get("langgraph_checkpoint_ns", "")) else ""
        if node in guarded:
            held.setdefault((parent, node), []).append(event)
            continue
        if node in gates:
            # the gate's input is the staged, not yet released update
            event = {
                **event,
                "data": {k: v for k, v in (event.get("data") or {}).items() if k != "input"},
            }
        if node in gates and event.get("event") == "on_chain_end" and event.get("name") == node:
            yield event
            output = (event.get("data") or {}).get("output")
            update = getattr(output, "update", None)
            pairs = update if isinstance(update, list) else list((update or {}).items())
            values = {k: v for k, v in pairs if isinstance(k, str)}
            raw_reports = values.get("trust_reports") or []
            reports = [Report.coerce(r) for r in raw_reports]
            if not reports or any(r.id in done for r in reports):
                continue  # the inner runnable's end event repeats the node's
            done.update(r.id for r in reports)
            key = (parent, gates[node])
            pending = held.pop(key, [])
            if reports and all(r.decision == "pass" and r.released for r in reports):
                for e in pending:
                    yield e
            elif reports and all(r.released for r in reports):
                for message in _messages_in(values):
                    yield {
                        "event": "on_chat_model_stream",
                        "name": node,
                        "run_id": event.get("run_id"),
                        "parent_ids": event.get("parent_ids", []),
                        "tags": event.get("tags", []),
                        "metadata": {**meta, "langgraph_node": gates[node]},
                        "data": {"chunk": _as_chunk(message)},
                    }
            continue
        yield event
