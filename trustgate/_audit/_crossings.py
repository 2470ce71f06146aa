"""Paths out of a crossing, and whether a gate holds each one.

Paths: plain, waiting and conditional edges, the ``Command`` destinations a node
declares, and handoffs (``Command(graph=Command.PARENT, goto=...)`` raised by a tool or
node anywhere inside it), followed to their targets. Which nodes carry gates is asked
of :func:`trustgate.graph.guarded_nodes` and nothing else: a gate on a node holds
everything the node emits, so every path out of it is guarded by that gate.
``TrustGateMiddleware`` in a ``create_agent`` agent: its model gates run inside the
model node (around the model call), so they guard every path out of it like a gate on
the node; its tool gates guard the path to the tools.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.constants import END

from trustgate._audit._discovery import _find, _Found, _Handoff, _middleware_hook
from trustgate._audit._results import (
    AuditedCrossing,
    AuditPath,
    AuditResult,
    Detection,
    PathKind,
    Status,
)
from trustgate.graph import _compat

__all__: list[str] = []


def _model_gates(middleware: Any) -> list[str]:
    try:
        from trustgate.graph._middleware import TrustGateMiddleware
    except ImportError:  # pragma: no cover
        return []
    if isinstance(middleware, TrustGateMiddleware):
        return [g.name for g in middleware.model_gates]
    return []


def _middleware_in(roots: Iterable[Any], depth_limit: int = 16) -> list[Any]:
    """The ``TrustGateMiddleware`` instances a ``create_agent`` node's functions close
    over (its composed ``wrap_model_call`` / ``wrap_tool_call`` handlers)."""
    try:
        from trustgate.graph._middleware import TrustGateMiddleware
    except ImportError:  # pragma: no cover
        return []
    found: list[Any] = []
    seen: set[int] = set()

    def walk(obj: Any, depth: int) -> None:
        if obj is None or depth > depth_limit or id(obj) in seen:
            return
        seen.add(id(obj))
        kind = type(obj)  # never the object's own __class__: a proxy may refuse it
        if issubclass(kind, TrustGateMiddleware):
            found.append(obj)
        elif issubclass(kind, types.MethodType):
            walk(obj.__self__, depth + 1)
            walk(obj.__func__, depth + 1)
        elif issubclass(kind, functools.partial):
            walk(obj.func, depth + 1)
            for a in (*obj.args, *obj.keywords.values()):
                walk(a, depth + 1)
        elif issubclass(kind, types.FunctionType):
            for cell in obj.__closure__ or ():
                try:
                    walk(cell.cell_contents, depth + 1)
                except ValueError:
                    continue

    for root in roots:
        walk(root, 0)
    return found


def _tool_gates(spec: Any) -> list[str]:
    """Tool gates of ``TrustGateMiddleware`` wrapped around a ``create_agent`` tool node.

    They check each tool call of the model's message before the tool runs, so the path
    model → tools carries a gate even without model gates.
    """
    runnable = _compat.node_runnable(spec)
    roots = [getattr(runnable, attr, None) for attr in ("_wrap_tool_call", "_awrap_tool_call")]
    return list(dict.fromkeys(g.name for m in _middleware_in(roots) for g in m.tool_gates))


def _agent_model_gates(spec: Any) -> tuple[str, ...]:
    """Model gates of ``TrustGateMiddleware`` around a ``create_agent`` model call.

    They run inside the model node (``wrap_model_call``) and see everything the model
    step writes before it is written, like a gate ``guard()`` put on the node."""
    runnable = _compat.node_runnable(spec)
    roots = [getattr(runnable, attr, None) for attr in ("func", "afunc")]
    return tuple(dict.fromkeys(g.name for m in _middleware_in(roots) for g in m.model_gates))


def _gates_of(builder: Any, guarded: Mapping[str, tuple[str, ...]], name: str) -> tuple[str, ...]:
    spec = _compat.node_specs(builder).get(name)
    return guarded.get(name, ()) or (_agent_model_gates(spec) if spec is not None else ())


def _targets(ends: Any) -> list[str]:
    if ends is None:
        return []
    if isinstance(ends, Mapping):
        return [str(v) for v in ends.values()]
    return [str(e) for e in ends]


def _raw_paths(builder: Any, node: str) -> Iterator[tuple[str | None, PathKind]]:
    """Every declared way out of ``node``: (target, kind); target None when unknown."""
    for start, end in sorted(_compat.edges(builder)):
        if start == node:
            yield end, "plain"
    for starts, end in sorted(_compat.waiting_edges(builder), key=repr):
        if node in starts:
            yield end, "waiting"
    for _name, branch_ends in sorted(_compat.branch_ends(builder, node), key=repr):
        ends = _targets(branch_ends)
        if not ends:
            yield None, "conditional"
        for end in dict.fromkeys(ends):
            yield end, "conditional"
    spec = _compat.node_specs(builder).get(node)
    for end in dict.fromkeys(_targets(_compat.node_ends(spec))):
        yield end, "command"


@dataclass
class _Route:
    target: str | None
    kind: PathKind
    gates: tuple[str, ...] = ()
    via: str | None = None


def _routes(builder: Any, node: str) -> list[_Route]:
    """Where the node's output goes, through trustgate's own nodes and agent
    middleware hooks, with the middleware gates met on the way."""
    out: list[_Route] = []
    seen: set[tuple[Any, ...]] = set()

    def add(route: _Route) -> None:
        key = (route.target, route.kind, route.via)
        if key not in seen:
            seen.add(key)
            out.append(route)

    def follow(source: str, gates: list[str], via: str | None, visited: set[str]) -> None:
        for target, kind in _raw_paths(builder, source):
            spec = _compat.node_specs(builder).get(target) if target is not None else None
            hook = _middleware_hook(spec) if spec is not None else None
            if target is not None and hook is not None and target not in visited:
                # create_agent: model → after_model hooks (last middleware first) → routing
                more = _model_gates(hook[0])
                follow(target, [*gates, *more], target if more else via, visited | {target})
                continue
            tool_gates = _tool_gates(spec) if spec is not None and not gates else []
            if tool_gates:
                add(_Route(target, kind, tuple(tool_gates), target))
                continue
            add(_Route(target, kind, tuple(dict.fromkeys(gates)), via))

    follow(node, [], None, {node})
    return out


def _check(builder: Any) -> None:
    from trustgate.graph._compat import check_builder

    check_builder(builder)


def _guarded(builder: Any) -> dict[str, tuple[str, ...]]:
    from trustgate.graph import guarded_nodes

    return guarded_nodes(builder)


def _static_crossings(
    builder: Any, seen: set[int] | None = None, depth: int = 0
) -> tuple[list[AuditedCrossing], list[_Handoff]]:
    """The crossings of one graph, and the handoffs raised anywhere inside it (each
    marked held when the inner node raising it carries a gate)."""
    _check(builder)
    guarded = _guarded(builder)
    crossings: list[AuditedCrossing] = []
    handoffs: list[_Handoff] = []
    for name, found in _find(builder, seen, depth).items():
        gates = _gates_of(builder, guarded, name)
        for h in found.handoffs:
            handoffs.append(
                _Handoff(h.candidates, h.where, h.held_by or tuple(gates))
                if gates or h.held_by
                else h
            )
        if found.models or found.inner_gates or found.unknown:
            crossings.append(_crossing(builder, name, "static", found, gates, ()))
    return crossings, handoffs


def _handoff_routes(builder: Any, found: _Found) -> list[tuple[_Route, str, tuple[str, ...]]]:
    """(route, where, held_by) for each handoff target raised inside a node."""
    nodes = set(_compat.node_specs(builder))
    out: list[tuple[_Route, str, tuple[str, ...]]] = []
    for h in found.handoffs:
        targets = sorted(h.candidates & nodes)
        if not targets:
            out.append((_Route(None, "handoff"), h.where, h.held_by))
        for t in targets:
            out.append((_Route(t, "handoff"), h.where, h.held_by))
    return out


def _crossing(
    builder: Any,
    node: str,
    found_by: Detection,
    found: _Found,
    gates: tuple[str, ...],
    sample_notes: Sequence[str],
) -> AuditedCrossing:
    unknown_node = not found.models and not found.inner_gates and bool(found.unknown)
    inner = [g for g in found.inner_gates if g]
    inner_only = bool(inner) and not found.models and not found.unknown
    routes: list[tuple[_Route, str, tuple[str, ...]]] = [
        (r, "", ()) for r in _routes(builder, node)
    ]
    if not routes:
        # nowhere to go: the output stays in the final state the caller reads
        routes = [(_Route(END, "plain"), "", ())]
    if found.models or inner_only or unknown_node:
        routes += _handoff_routes(builder, found)
    paths: list[AuditPath] = []
    seen: set[tuple[Any, ...]] = set()
    for route, where, held_by in routes:
        key = (route.target, route.kind)
        if key in seen:
            continue
        seen.add(key)
        paths.append(_path(node, route, where, held_by, gates, inner, inner_only, found))
    detail = [*found.models, *found.unknown, *sample_notes]
    if inner_only:
        detail += [f"subgraph gated inside by {g}" for g in inner]
    statuses = {p.status for p in paths}
    status: Status = (
        "unguarded"
        if "unguarded" in statuses
        else "unknown"
        if "unknown" in statuses
        else "guarded"
    )
    reason = next((p.reason for p in paths if p.status == status), "")
    return AuditedCrossing(
        node=node,
        found_by=found_by,
        status=status,
        reason=reason,
        paths=tuple(paths),
        gates=tuple(gates) or tuple(dict.fromkeys(g for p in paths if p.gate for g in [p.gate])),
        detail=tuple(detail),
    )


def _path(
    node: str,
    route: _Route,
    where: str,
    held_by: tuple[str, ...],
    gates: tuple[str, ...],
    inner: list[str],
    inner_only: bool,
    found: _Found,
) -> AuditPath:
    common = {"target": route.target, "kind": route.kind}
    if gates:
        return AuditPath(
            **common,
            status="guarded",
            reason=f"held by the gate on {node!r}",
            gate=", ".join(gates),
            via=node,
        )
    if route.kind == "handoff":
        if held_by:
            return AuditPath(
                **common,
                status="guarded",
                reason=f"the handoff ({where}) is raised inside a gated node",
                gate=", ".join(held_by),
                via=node,
            )
        why = "no gate holds this handoff" if route.target else "handoff target not resolved"
        return AuditPath(
            **common,
            status="unguarded" if found.models else "unknown",
            reason=f"{why}: {where}",
        )
    if route.gates:
        return AuditPath(
            **common,
            status="guarded",
            reason="held by agent middleware",
            gate=", ".join(route.gates),
            via=route.via,
        )
    if inner_only:
        return AuditPath(
            **common,
            status="guarded",
            reason="every model inside the subgraph is gated there",
            gate="; ".join(inner),
            via=node,
        )
    if found.models:
        return AuditPath(**common, status="unguarded", reason="no gate on this node")
    if found.unknown:
        return AuditPath(**common, status="unknown", reason=found.unknown[0])
    return AuditPath(**common, status="unguarded", reason="model run seen in the sample run")


def _combine(graph: Any, builder: Any, run: Any) -> AuditResult:
    # a node that refers to the audited graph itself (``app.get_state``) is not a
    # subgraph of it
    roots = {id(graph), id(builder)}
    guarded = _guarded(builder)
    found = _find(builder, roots, 0)
    dynamic: Mapping[str, int] = run.model_nodes if run is not None else {}
    unreached: Iterable[str] = run.sample.unreached if run is not None else ()
    result = AuditResult()
    for name in _compat.node_specs(builder):
        if name not in found:
            continue  # trustgate's own nodes, agent middleware hooks
        f = found[name]
        static = bool(f.models or f.inner_gates or f.unknown)
        seen_run = name in dynamic
        if not static and not seen_run:
            continue
        notes: list[str] = []
        if seen_run and not f.models and not f.inner_gates:
            f = _Found(
                [f"{dynamic[name]} model run(s) in the sample run"],
                [],
                list(f.unknown),
                list(f.handoffs),
            )
        if name in unreached:
            notes.append("the sample run stopped at an interrupt in this node")
        found_by: Detection = (
            "static+sample_run" if static and seen_run else "static" if static else "sample_run"
        )
        gates = _gates_of(builder, guarded, name)
        result.append(_crossing(builder, name, found_by, f, gates, notes))
    result.sample_run = run.sample if run is not None else None
    return result
