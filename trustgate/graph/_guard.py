"""``guard()``: put gates on the nodes of an existing graph.

Each guarded node's runnable is replaced by a :mod:`~trustgate.graph._node` wrapper
that runs the original node and its gates in the node's own task; edges, branches,
schemas, interrupts and the rest of the graph stay exactly as they were. The one
addition is the ``trust_reports`` channel, which is hidden from the graph's output,
streams and snapshots unless the state schema declares it (``TrustReports``).
Guarded nodes are never cached and never retried on a halt.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from trustgate import _compat
from trustgate._gate import TrustGate
from trustgate._report import REPORTS_KEY, ReportLog, TrustReports
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.graph._gatelog import ReportLogArg, gate_log
from trustgate.graph._node import GuardedNode, runnable
from trustgate.graph._provenance import Provenance
from trustgate.policies import Rerender

__all__ = ["GuardedStateGraph", "guard", "guarded_nodes"]

G = TypeVar("G")


logger = logging.getLogger(__name__)


def _node_of(spec: Any) -> GuardedNode | None:
    node = getattr(_compat.node_runnable(spec), "trustgate_node", None)
    return node if isinstance(node, GuardedNode) else None


def guarded_nodes(graph: Any) -> dict[str, tuple[str, ...]]:
    """Which nodes of ``graph`` (a builder or a compiled graph) ``guard()`` put gates
    on: node name → the names of its gates, in chain order.

    Example:
        ```python
        assert trustgate.guarded_nodes(app) == {"reviewer": ("inspector",)}
        ```
    """
    builder = getattr(graph, "builder", graph)
    found: dict[str, tuple[str, ...]] = {}
    for name, spec in _compat.node_specs(builder).items():
        node = _node_of(spec)
        if node is not None:
            found[name] = tuple(g.name for g in node.gates)
    return found


class GuardedStateGraph(StateGraph[Any, Any, Any, Any]):
    """A ``StateGraph`` with guarded nodes; compiles with the gates' rules in force
    (no cache and no retry-on-halt for guarded nodes, the report channel hidden
    unless the state schema declares it)."""

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        return _settle(super().compile(*args, **kwargs))


def _settle(compiled: Any) -> Any:
    guarded = list(guarded_nodes(compiled.builder))
    _compat.settle_policies(compiled, guarded, (GateHalted,))
    if REPORTS_KEY not in _state_keys(compiled.builder):
        _compat.hide_channels(compiled, {REPORTS_KEY})
    return compiled


def _state_keys(builder: Any) -> set[str]:
    schema = builder.state_schema
    keys = set(getattr(schema, "__annotations__", {}) or {})
    for base in getattr(schema, "__mro__", ()):
        keys |= set(getattr(base, "__annotations__", {}) or {})
    keys |= set(getattr(schema, "model_fields", {}) or {})
    return keys


def _gates(node: str, value: Any) -> tuple[TrustGate[Any], ...]:
    if isinstance(value, TrustGate):
        return (value,)
    out = tuple(value) if isinstance(value, (list, tuple)) else ()
    if not out or not all(isinstance(g, TrustGate) for g in out):
        raise ConfigurationError(
            f"guard(): the value for node {node!r} must be a TrustGate or a non-empty "
            f"list of TrustGates, not {value!r}"
        )
    return out


def _policies(gates: Sequence[TrustGate[Any]]) -> list[Any]:
    found: list[Any] = []
    todo = [p for g in gates for p in g.policies]
    while todo:
        p = todo.pop()
        found.append(p)
        nxt = getattr(p, "then", None)
        if nxt is not None:
            todo.append(nxt)
    return found


def _check_chain(node: str, gates: Sequence[TrustGate[Any]]) -> None:
    names = [g.name for g in gates]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"guard(): gate names on {node!r} repeat: {names}")
    for p in _policies(gates):
        if isinstance(p, Rerender) and p.to not in (None, node):
            raise ConfigurationError(
                f"Rerender(to={p.to!r}) on {node!r}: a re-render runs the guarded node "
                f"again in its own step, so `to` must be {node!r} or left out"
            )


def _check_provenance(
    node: str, gates: Sequence[TrustGate[Any]], builder: Any, provenance: Provenance
) -> None:
    """Evidence a model can write is no evidence: refuse a ``FromState`` key another
    node writes while it calls a model or runs model-chosen tools, unless trusted."""
    for g in gates:
        for source in g.evidence.state_sources():
            if source.before_step and not _compat.append_only(builder, source.key):
                raise ConfigurationError(
                    f"gate {g.name!r} on {node!r}: FromState({source.key!r}, before_step=True) "
                    "is for a channel that only grows (messages, a list under operator.add); "
                    f"{source.key!r} is not one"
                )
            if source.trusted:
                continue
            writers = provenance.model_writers(source.key, besides=node)
            if writers:
                who = "; ".join(f"{n!r} {why}" for n, why in sorted(writers.items()))
                raise ConfigurationError(
                    f"gate {g.name!r} on {node!r} takes evidence from state key "
                    f"{source.key!r}, which a model can write: {who}. What a model can write "
                    "is not evidence for its claims (it could write the line it then cites). "
                    "Take the evidence from the source itself (a workspace, a fixed value, "
                    f"FromContext), or mark it FromState({source.key!r}, trusted=True) if what "
                    "those nodes write is evidence for you"
                )


def guard(
    graph: G,
    gates: Mapping[str, TrustGate[Any] | Sequence[TrustGate[Any]]],
    *,
    report_log: ReportLogArg = None,
    stream_passes: bool = False,
) -> G:
    """Put gates on the named nodes of a graph; the original is untouched.

    Given a ``StateGraph`` builder it returns a new builder; given a compiled graph
    it returns a compiled graph with the same checkpointer, store, cache, interrupt
    settings, config and name.

    ``report_log``: a report log every gate of the graph writes each crossing's report
    into itself, whatever checkpointer runs the graph (the agent server brings its
    own): a :class:`~trustgate.persistence.ReportHistory`, a database URL (a SQLite
    path or ``postgresql://...``), or ``True`` for the database
    ``TRUSTGATE_DATABASE_URL`` names. A URL is opened once per process, at the first
    crossing. A released crossing is logged before anything is released (if the log
    fails, nothing is), a halted one before the halt is raised; one row per report id,
    so a :class:`~trustgate.persistence.ReportingSaver` on the same log adds none.

    ``stream_passes``: also put the report of a crossing that passed unchanged on the
    ``custom`` stream (by default only a gate that acted or halted says so there, so a
    graph whose gates all pass streams exactly what it streams unguarded).

    Example:
        ```python
        from langgraph.checkpoint.memory import InMemorySaver

        guarded = trustgate.guard(builder, {"reviewer": inspector_gate})
        app = guarded.compile(checkpointer=InMemorySaver())
        ```
    """
    if not isinstance(gates, Mapping):
        raise ConfigurationError(
            f"guard() takes a mapping of node name → gate, not {type(gates).__name__}"
        )
    if not gates:
        raise ConfigurationError("guard() needs at least one node → gate")
    log = gate_log(report_log)
    if not isinstance(stream_passes, bool):
        raise ConfigurationError(
            f"guard(stream_passes=...) takes True or False, not {stream_passes!r}"
        )
    if isinstance(graph, CompiledStateGraph):
        builder = graph.builder
    elif isinstance(graph, StateGraph):
        builder = graph
    else:
        raise ConfigurationError(
            f"guard() takes a StateGraph or a compiled StateGraph, not {type(graph).__name__}"
        )
    _compat.check()
    _compat.check_builder(builder)
    new = _compat.copy_builder(builder, GuardedStateGraph)
    root = _compat.is_root_graph(builder)
    declared = _compat.channels(new).get(REPORTS_KEY)
    if declared is None and not root:
        _compat.add_channels(
            new,
            TypedDict("TrustgateReports", {REPORTS_KEY: TrustReports}, total=False),  # type: ignore[operator]
        )
    elif declared is not None and not isinstance(declared, ReportLog):
        # another reducer would take any node's or the input's "reports" as crossings
        raise ConfigurationError(
            f"the state schema declares {REPORTS_KEY!r} as {type(declared).__name__}; "
            f"declare it as trustgate.graph.TrustReports (it admits only gate reports), "
            "or leave it out and guard() adds it"
        )
    keys = [k for k in _compat.channels(new) if k != REPORTS_KEY]
    message_keys = _compat.message_keys(new)
    provenance = Provenance(builder)  # the graph as given: before any node is wrapped
    for name, value in gates.items():
        chain = _gates(name, value)
        specs = _compat.node_specs(new)
        if name not in specs:
            raise ConfigurationError(f"guard(): the graph has no node {name!r}")
        spec = specs[name]
        if _node_of(spec) is not None:
            raise ConfigurationError(
                f"guard(): {name!r} is already guarded; to check it with several gates, "
                "pass them as one list in one guard() call"
            )
        _check_chain(name, chain)
        _compat.check_timeout(spec, _compat.node_runnable(spec), name)
        missing = sorted({k for g in chain for k in g.evidence_keys} - set(_compat.channels(new)))
        if missing:
            raise ConfigurationError(
                f"gates on {name!r} read evidence from state keys {missing}, which the "
                "state schema lacks"
            )
        _check_provenance(name, chain, new, provenance)
        inner_tools = _compat.tool_nodes(_compat.node_runnable(spec))
        if inner_tools and not any("*" in g.passthrough for g in chain):
            # a gate sees what the node hands on, after its own tools ran
            logger.warning(
                "guard(): %r runs tools inside it (%s): they execute before its gate sees "
                "anything; to stop a fabricated call, guard the agent's model node instead",
                name,
                ", ".join(inner_tools),
            )
        # --- remote graphs: what runs on another server cannot be held here ---------
        from trustgate._audit._remote import remote_graphs

        remote = remote_graphs(_compat.node_runnable(spec), f"node {name!r}")
        if remote.nodes:
            raise ConfigurationError(
                f"guard(): {name!r} is a remote graph or runs one as a node "
                f"({'; '.join(remote.nodes)}): its model and tools run on the remote "
                "server before a gate here sees anything; guard its model node where "
                "the remote graph is served"
            )
        if remote.called:
            logger.warning(
                "guard(): %r calls a remote graph (%s): its tools run on the remote "
                "server before the gate sees anything; guard its model node where the "
                "remote graph is served",
                name,
                "; ".join(remote.called),
            )
        # --- end of remote graphs -----------------------------------------------------
        # a policy that may pause for a person says so; the node then keeps its output
        # in a durable task, so a resumed run judges the output it paused on
        durable = any(getattr(p, "pauses", False) for p in _policies(chain))
        node = GuardedNode(
            name,
            _compat.node_runnable(spec),
            chain,
            keys=keys,
            message_keys=message_keys,
            root=root,
            durable=durable,
            plain_keys=_compat.plain_keys(new),
            reducers=_compat.reducers(new),
            log=log,
            stream_passes=stream_passes,
        )
        _compat.replace_runnable(new, name, runnable(node))
    if isinstance(graph, CompiledStateGraph):
        return cast(G, _recompile(graph, new))
    return cast(G, new)


def _recompile(original: Any, builder: GuardedStateGraph) -> Any:
    fresh = StateGraph.compile(
        builder,
        checkpointer=original.checkpointer,
        store=original.store,
        cache=original.cache,
        interrupt_before=original.interrupt_before_nodes,
        interrupt_after=original.interrupt_after_nodes,
        debug=original.debug,
        name=original.name,
    )
    compiled = fresh.copy(
        {
            "config": original.config,
            "step_timeout": original.step_timeout,
            "retry_policy": original.retry_policy,
            "cache_policy": original.cache_policy,
        }
    )
    return _settle(_compat.keep_mappers(fresh, compiled))
