"""Paths out of a crossing, and whether a gate holds each one.

Paths: plain, waiting and conditional edges, the ``Command`` destinations a node
declares, and handoffs (``Command(graph=Command.PARENT, goto=...)`` raised by a tool or
node anywhere inside it), followed to their targets. Which nodes carry gates is asked
of what ``guard()`` installed on them (:func:`trustgate.graph.guarded_nodes` names
them) and nothing else: a gate on a node holds everything the node emits, so every path
out of it is guarded by that gate. ``TrustGateMiddleware`` in a ``create_agent`` agent:
its model gates run inside the model node (around the model call), so they guard every
path out of it like a gate on the node; its tool gates guard the path to the tools.

Three things are not a guard, however a node is gated:

* a gate that verifies nothing (no verifiers: what it reads is released unchecked,
  what it lets through unread too): the node counts as ungated, and the row says so;
* a routing function (a conditional edge's path function) that calls a model: it runs
  in the node's task *after* the gates released the node's output, so what it decides
  is never held. It is a crossing of its own, always ``unguarded``;
* a remote graph the node calls (``RemoteGraph``): the gate holds what comes back, but
  the remote side has already run its tools. Such a path is ``unknown``.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.constants import END, START

from trustgate import _compat
from trustgate._audit._discovery import (
    _find,
    _find_routing,
    _Found,
    _Graph,
    _Handoff,
    _middleware_hook,
)
from trustgate._audit._results import (
    AuditedCrossing,
    AuditPath,
    AuditResult,
    Detection,
    PathKind,
    Status,
)

__all__: list[str] = []

ROUTING_FIX = (
    "move the model call into a node that returns Command(goto=...) or writes the "
    "decision to state, and gate that node with Routes() or FromKey(...)"
)
"""How to close a routing function that calls a model: make the decision a node's
output, which a gate can read and hold."""
REMOTE_FIX = "guard the remote graph's model node on the server that runs it"


def _verifies(gate: Any) -> bool:
    """A gate with no verifier, or one that reads nothing, checks nothing: it only
    declares what it lets through."""
    verifies = getattr(gate, "verifies", None)
    return bool(verifies) if verifies is not None else bool(getattr(gate, "verifiers", ()))


@dataclass(frozen=True)
class _Gates:
    """The gates on one node: those that verify something, and those that verify nothing."""

    holding: tuple[str, ...] = ()
    idle: tuple[str, ...] = ()

    @classmethod
    def of(cls, gates: Iterable[Any]) -> _Gates:
        gates = list(gates)
        return cls(
            tuple(g.name for g in gates if _verifies(g)),
            tuple(g.name for g in gates if not _verifies(g)),
        )

    @property
    def any(self) -> bool:
        return bool(self.holding or self.idle)


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _model_gates(middleware: Any) -> list[Any]:
    try:
        from trustgate.graph._middleware import TrustGateMiddleware
    except ImportError:  # pragma: no cover
        return []
    if isinstance(middleware, TrustGateMiddleware):
        return list(middleware.model_gates)
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


def _tool_gates(spec: Any) -> list[Any]:
    """Tool gates of ``TrustGateMiddleware`` wrapped around a ``create_agent`` tool node.

    They check each tool call of the model's message before the tool runs, so the path
    model → tools carries a gate even without model gates.
    """
    runnable = _compat.node_runnable(spec)
    roots = [getattr(runnable, attr, None) for attr in ("_wrap_tool_call", "_awrap_tool_call")]
    gates = [g for m in _middleware_in(roots) for g in m.tool_gates]
    return list({id(g): g for g in gates}.values())


def _agent_model_gates(spec: Any) -> list[Any]:
    """Model gates of ``TrustGateMiddleware`` around a ``create_agent`` model call.

    They run inside the model node (``wrap_model_call``) and see everything the model
    step writes before it is written, like a gate ``guard()`` put on the node."""
    runnable = _compat.node_runnable(spec)
    roots = [getattr(runnable, attr, None) for attr in ("func", "afunc")]
    gates = [g for m in _middleware_in(roots) for g in m.model_gates]
    return list({id(g): g for g in gates}.values())


def _gates_of(builder: Any, guarded: Mapping[str, _Gates], name: str) -> _Gates:
    """The gates holding a node: those ``guard()`` put on it, else the model gates of
    ``TrustGateMiddleware`` running inside it."""
    if name in guarded:
        return guarded[name]
    spec = _compat.node_specs(builder).get(name)
    return _Gates.of(_agent_model_gates(spec)) if spec is not None else _Gates()


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
    idle: tuple[str, ...] = ()
    """Middleware gates met on the way that verify nothing (no guard)."""


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

    def follow(
        source: str, gates: list[str], idle: list[str], via: str | None, visited: set[str]
    ) -> None:
        for target, kind in _raw_paths(builder, source):
            spec = _compat.node_specs(builder).get(target) if target is not None else None
            hook = _middleware_hook(spec) if spec is not None else None
            if target is not None and hook is not None and target not in visited:
                # create_agent: model → after_model hooks (last middleware first) → routing
                more = _Gates.of(_model_gates(hook[0]))
                follow(
                    target,
                    [*gates, *more.holding],
                    [*idle, *more.idle],
                    target if more.holding else via,
                    visited | {target},
                )
                continue
            tools = _Gates.of(_tool_gates(spec)) if spec is not None and not gates else _Gates()
            if tools.holding:
                add(_Route(target, kind, tools.holding, target))
                continue
            add(
                _Route(
                    target,
                    kind,
                    tuple(dict.fromkeys(gates)),
                    via,
                    tuple(dict.fromkeys([*idle, *tools.idle])),
                )
            )

    follow(node, [], [], None, {node})
    return out


def _check(builder: Any) -> None:
    from trustgate._compat import check_builder

    check_builder(builder)


def _guarded(builder: Any) -> dict[str, _Gates]:
    """The gates ``guard()`` put on each node (those that verify something apart)."""
    from trustgate.graph._node import GuardedNode

    out: dict[str, _Gates] = {}
    for name, spec in _compat.node_specs(builder).items():
        node = getattr(_compat.node_runnable(spec), "trustgate_node", None)
        if isinstance(node, GuardedNode):
            out[name] = _Gates.of(node.gates)
    return out


def _static_crossings(builder: Any, seen: set[int] | None = None, depth: int = 0) -> _Graph:
    """The crossings of one graph (nodes and routing functions), the handoffs raised
    anywhere inside it (each marked held when the inner node raising it carries a gate
    that verifies something), and the remote graphs in it."""
    _check(builder)
    guarded = _guarded(builder)
    graph = _Graph([], [], [], [])
    for name, found in _find(builder, seen, depth, _static_crossings).items():
        gates = _gates_of(builder, guarded, name)
        for h in found.handoffs:
            graph.handoffs.append(
                _Handoff(h.candidates, h.where, h.held_by or gates.holding)
                if gates.holding or h.held_by
                else h
            )
        graph.remote_nodes.extend(found.remote_nodes)
        graph.remotes.extend(found.remotes)
        if _is_crossing(found):
            graph.crossings.append(_crossing(builder, name, "static", found, gates, ()))
    for (node, fn), found in _find_routing(builder, seen, depth, _static_crossings).items():
        graph.remotes.extend(found.remotes + found.remote_nodes)
        if _is_crossing(found):
            graph.crossings.append(
                _crossing(
                    builder, node, "static", found, guarded.get(node, _Gates()), (), routing=fn
                )
            )
    return graph


def _is_crossing(found: _Found) -> bool:
    return bool(found.models or found.inner_gates or found.unknown)


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


def _subject(node: str, routing: str | None) -> str:
    if routing is None:
        return f"node {node!r}"
    return f"routing function {routing!r} " + ("at START" if node == START else f"of {node!r}")


def _found_text(subject: str, found: _Found) -> str:
    """What was found, in one line: ``node 'x' calls ChatOpenAI``."""
    labels = list(dict.fromkeys(found.labels))
    remote = [*found.remote_nodes, *found.remotes]
    if labels:
        text = f"{subject} calls {', '.join(labels)}"
    elif remote:
        return f"{subject} calls a remote graph ({remote[0]})"
    elif found.models:  # seen only in the sample run
        text = f"{subject}: {found.models[0]}"
    elif found.inner_gates:
        text = f"{subject} runs a subgraph whose models are gated inside it"
    elif found.unknown:
        text = f"{subject}: {found.unknown[0]}"
    else:
        text = subject
    if remote:
        text += f", and a remote graph ({remote[0]})"
    return text


def _unknown_fix(reason: str) -> str:
    """How to close a path the audit could not follow, from why it could not."""
    if "remote graph" in reason or "RemoteGraph" in reason:
        return REMOTE_FIX
    if "dynamic import" in reason:
        return "import the model's module statically, so the audit can follow it"
    if "Pregel graph" in reason:
        return "build it as a StateGraph, so the audit can open it"
    if "handoff target" in reason:
        return "name the handoff target as a string in the code or the tool's metadata"
    return "give the audit a sample_input, so a sample run can see what the node does"


def _crossing(
    builder: Any,
    node: str,
    found_by: Detection,
    found: _Found,
    gates: _Gates,
    sample_notes: Sequence[str],
    *,
    routing: str | None = None,
) -> AuditedCrossing:
    unknown_node = not found.models and not found.inner_gates and bool(found.unknown)
    inner = [g for g in found.inner_gates if g]
    inner_only = bool(inner) and not found.models and not found.unknown
    routes: list[tuple[_Route, str, tuple[str, ...]]]
    if routing is not None:
        routes = [(r, "", ()) for r in _routing_routes(builder, node, routing)]
    else:
        routes = [(r, "", ()) for r in _routes(builder, node)]
        if not routes:
            # nowhere to go: the output stays in the final state the caller reads
            routes = [(_Route(END, "plain"), "", ())]
        if found.models or inner_only or unknown_node:
            routes += _handoff_routes(builder, found)
    subject = _subject(node, routing)
    paths: list[AuditPath] = []
    seen: set[tuple[Any, ...]] = set()
    for route, where, held_by in routes:
        key = (route.target, route.kind)
        if key in seen:
            continue
        seen.add(key)
        if routing is not None:
            paths.append(_routing_path(node, route, gates, inner, inner_only, found))
        else:
            paths.append(_path(node, route, where, held_by, gates, inner, inner_only, found))
    detail = [*found.models, *found.unknown, *sample_notes]
    if inner_only:
        detail += [f"subgraph gated inside by {g}" for g in inner]
    detail += [f"remote graph: {r}" for r in (*found.remote_nodes, *found.remotes)]
    statuses = {p.status for p in paths}
    status: Status = (
        "unguarded"
        if "unguarded" in statuses
        else "unknown"
        if "unknown" in statuses
        else "guarded"
    )
    reason = next((p.reason for p in paths if p.status == status), "")
    own = gates.holding if routing is None else ()
    return AuditedCrossing(
        node=node,
        found_by=found_by,
        status=status,
        reason=reason,
        paths=tuple(paths),
        gates=own
        or tuple(dict.fromkeys(g for p in paths if p.gate and p.guarded for g in [p.gate])),
        detail=tuple(dict.fromkeys(detail)),
        found=_found_text(subject, found),
        routing=routing,
    )


def _routing_routes(builder: Any, node: str, routing: str) -> list[_Route]:
    """Where a routing function can send the run: its branch's declared ends."""
    for name, ends in _compat.branch_ends(builder, node):
        if name == routing:
            targets = list(dict.fromkeys(_targets(ends)))
            return [_Route(t, "conditional") for t in targets] or [_Route(None, "conditional")]
    return [_Route(None, "conditional")]


def _routing_path(
    node: str,
    route: _Route,
    gates: _Gates,
    inner: list[str],
    inner_only: bool,
    found: _Found,
) -> AuditPath:
    """A path a routing function picks. Whatever gates the node carries, the function
    runs after they released the node's output: no gate holds its decision."""
    common = {"target": route.target, "kind": route.kind}
    if inner_only:
        return AuditPath(
            **common,
            status="guarded",
            reason="every model inside the subgraph it runs is gated there",
            gate="; ".join(inner),
            via=node,
        )
    held = gates.holding + gates.idle
    why = "it runs after the gates of its node have released the node's output, so " + (
        f"the gate on {node!r} ({_names(held)}) does not hold what it decides"
        if held
        else "no gate holds what it decides"
    )
    if found.models:
        return AuditPath(**common, status="unguarded", reason=why, fix=ROUTING_FIX)
    reason = found.unknown[0] if found.unknown else why
    return AuditPath(**common, status="unknown", reason=reason, fix=_unknown_fix(reason))


def _path(
    node: str,
    route: _Route,
    where: str,
    held_by: tuple[str, ...],
    gates: _Gates,
    inner: list[str],
    inner_only: bool,
    found: _Found,
) -> AuditPath:
    common = {"target": route.target, "kind": route.kind}
    remote = [*found.remote_nodes, *found.remotes]
    if gates.holding and remote:
        # the gate holds what comes back; the remote side already ran (its tools too)
        return AuditPath(
            **common,
            status="unknown",
            reason=(
                f"the gate on {node!r} holds only what comes back from the remote graph: "
                "what runs there, its tools included, has run before the gate sees it"
            ),
            gate=", ".join(gates.holding),
            via=node,
            fix=REMOTE_FIX,
        )
    if gates.holding:
        return AuditPath(
            **common,
            status="guarded",
            reason=f"held by the gate on {node!r}",
            gate=", ".join(gates.holding),
            via=node,
        )
    path = _open_path(node, route, where, held_by, inner, inner_only, found)
    idle = tuple(dict.fromkeys([*gates.idle, *route.idle]))
    if idle and not path.guarded:
        # a gate with nothing to verify is no guard: say so where a gate seems to stand
        which = "which verifies" if len(idle) == 1 else "which verify"
        path = path.model_copy(
            update={
                "reason": f"gated by {_names(idle)}, {which} nothing",
                "gate": ", ".join(idle),
                "via": node if gates.idle else route.via,
                "fix": f"add a verifier to {_names(idle)}",
            }
        )
    return path


def _open_path(
    node: str,
    route: _Route,
    where: str,
    held_by: tuple[str, ...],
    inner: list[str],
    inner_only: bool,
    found: _Found,
) -> AuditPath:
    """A path out of a node no gate of its own holds (what else may stand on it)."""
    common = {"target": route.target, "kind": route.kind}
    guard_fix = f"put a gate on it: trustgate.guard(graph, {{{node!r}: gate}})"
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
        if found.models:
            return AuditPath(**common, status="unguarded", reason=f"{why}: {where}", fix=guard_fix)
        return AuditPath(
            **common,
            status="unknown",
            reason=f"{why}: {where}",
            fix=_unknown_fix(why) if not route.target else guard_fix,
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
        return AuditPath(**common, status="unguarded", reason="no gate on this node", fix=guard_fix)
    if found.unknown:
        return AuditPath(
            **common,
            status="unknown",
            reason=found.unknown[0],
            fix=_unknown_fix(found.unknown[0]),
        )
    return AuditPath(
        **common, status="unguarded", reason="model run seen in the sample run", fix=guard_fix
    )


def _combine(graph: Any, builder: Any, run: Any) -> AuditResult:
    # a node that refers to the audited graph itself (``app.get_state``) is not a
    # subgraph of it
    roots = {id(graph), id(builder)}
    guarded = _guarded(builder)
    found = _find(builder, roots, 0, _static_crossings)
    routing = _find_routing(builder, roots, 0, _static_crossings)
    dynamic: Mapping[str, int] = run.model_nodes if run is not None else {}
    dynamic_routing: Mapping[tuple[str, str], int] = run.routing if run is not None else {}
    unreached: Iterable[str] = run.sample.unreached if run is not None else ()
    result = AuditResult()
    for name in [START, *_compat.node_specs(builder)]:
        if name in found:  # not trustgate's own nodes, nor agent middleware hooks
            f = found[name]
            notes: list[str] = []
            if name in unreached:
                notes.append("the sample run stopped at an interrupt in this node")
            crossing = _with_sample(f, dynamic.get(name, 0))
            if crossing is not None:
                f, found_by = crossing
                result.append(
                    _crossing(builder, name, found_by, f, _gates_of(builder, guarded, name), notes)
                )
        for (source, fn), rf in routing.items():
            if source != name:
                continue
            crossing = _with_sample(rf, dynamic_routing.get((source, fn), 0))
            if crossing is not None:
                rf, found_by = crossing
                result.append(
                    _crossing(
                        builder,
                        source,
                        found_by,
                        rf,
                        _gates_of(builder, guarded, source),
                        (),
                        routing=fn,
                    )
                )
    result.sample_run = run.sample if run is not None else None
    return result


def _with_sample(f: _Found, runs: int) -> tuple[_Found, Detection] | None:
    """What was found, with the model runs the sample run saw; None: no crossing."""
    static = _is_crossing(f)
    if not static and not runs:
        return None
    if runs and not f.models and not f.inner_gates:
        f = _Found(
            [f"{runs} model run(s) in the sample run"],
            [],
            list(f.unknown),
            list(f.handoffs),
            ["a model (seen in the sample run)"],
            list(f.remote_nodes),
            list(f.remotes),
        )
    found_by: Detection = (
        "static+sample_run" if static and runs else "static" if static else "sample_run"
    )
    return f, found_by
