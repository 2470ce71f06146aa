"""``guard()``: insert real gate nodes into an existing LangGraph graph.

For each guarded node X, ``guard`` rewires a *copy* of the builder:

* X's writes go to a private staging channel instead of user channels; the gate
  node reads them from there, so the claims it checks are this step's raw update
  and nothing X wrote is visible downstream (state, routers, streams of
  ``updates``/``values``, checkpoints of user channels) until the gate releases it;
* X → gate → X's former successors: plain edges and a ``Command(goto=...)`` X
  returned are re-issued by the gate only on release; conditional branches move to
  the gate and route only on release (they read the gated state); waiting edges
  wait for the gate instead of X;
* a halted crossing routes to a private halt node that raises
  :class:`~trustgate.errors.GateHalted` after the report was checkpointed.

LangGraph's builder internals (``nodes``, ``edges``, ``branches``,
``waiting_edges``, ``StateNodeSpec``, ``BranchSpec``) are private; this module
checks their shape at call time and raises
:class:`~trustgate.errors.LangGraphCompatibilityError` instead of miswiring.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar, cast, get_type_hints

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.constants import END, START
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, RetryPolicy
from pydantic import BaseModel
from typing_extensions import TypedDict

from trustgate import telemetry
from trustgate.errors import (
    ConfigurationError,
    GateHalted,
    LangGraphCompatibilityError,
)
from trustgate.gate import GateResult, TrustGate
from trustgate.policy import Rerender
from trustgate.report import REPORTS_KEY, Report, ReportLog

__all__ = ["HALT_NODE", "guard", "guarded_nodes", "is_gate_node"]

HALT_NODE = "trustgate_halt"
_SELF_HALTED = "__trustgate_self_halted"
_HALT_KEY = "__trustgate_halted"
_PREFIX = "__trustgate"

G = TypeVar("G")


def _never_retry(exc: Exception) -> bool:
    return False


_NO_RETRY = RetryPolicy(max_attempts=1, retry_on=_never_retry)


# --- internals check -----------------------------------------------------------------


@functools.cache
def _internals() -> tuple[Any, Any, Any, Any, Any, Any]:
    try:
        from langgraph._internal._constants import (
            CONF,
            CONFIG_KEY_READ,
            CONFIG_KEY_RUNTIME,
            CONFIG_KEY_TASK_ID,
        )
        from langgraph._internal._runnable import RunnableCallable
        from langgraph.graph._branch import BranchSpec
    except ImportError as exc:  # pragma: no cover - exercised only on other versions
        raise LangGraphCompatibilityError(
            f"this LangGraph version lacks an internal trustgate relies on: {exc}"
        ) from exc
    return (
        CONF,
        CONFIG_KEY_READ,
        CONFIG_KEY_RUNTIME,
        CONFIG_KEY_TASK_ID,
        RunnableCallable,
        BranchSpec,
    )


def check_builder_internals(builder: Any) -> None:
    """Raise ``LangGraphCompatibilityError`` unless the builder has the expected shape."""
    from langgraph.graph._branch import BranchSpec
    from langgraph.graph._node import StateNodeSpec

    problems: list[str] = []
    if not isinstance(getattr(builder, "nodes", None), dict):
        problems.append("StateGraph.nodes is not a dict")
    if not isinstance(getattr(builder, "edges", None), set):
        problems.append("StateGraph.edges is not a set")
    if not isinstance(getattr(builder, "branches", None), defaultdict):
        problems.append("StateGraph.branches is not a defaultdict")
    if not isinstance(getattr(builder, "waiting_edges", None), set):
        problems.append("StateGraph.waiting_edges is not a set")
    if not isinstance(getattr(builder, "channels", None), dict):
        problems.append("StateGraph.channels is not a dict")
    if not callable(getattr(builder, "_add_schema", None)):
        problems.append("StateGraph._add_schema is missing")
    spec_fields = (
        {f.name for f in dataclasses.fields(StateNodeSpec)}
        if dataclasses.is_dataclass(StateNodeSpec)
        else set()
    )
    for need in (
        "runnable",
        "metadata",
        "input_schema",
        "retry_policy",
        "ends",
        "is_error_handler",
    ):
        if need not in spec_fields:
            problems.append(f"StateNodeSpec has no dataclass field {need!r}")
    if getattr(BranchSpec, "_fields", None) != ("path", "ends", "input_schema"):
        problems.append("BranchSpec fields are not (path, ends, input_schema)")
    for spec in getattr(builder, "nodes", {}).values():
        if not isinstance(spec, StateNodeSpec):
            problems.append(f"node spec {type(spec).__name__} is not a StateNodeSpec")
            break
    for edge in getattr(builder, "edges", ()):
        if not (isinstance(edge, tuple) and len(edge) == 2):
            problems.append("an edge is not a (start, end) pair")
            break
    for starts, _end in getattr(builder, "waiting_edges", ()):
        if not isinstance(starts, tuple):
            problems.append("a waiting edge's starts is not a tuple")
            break
    for branches in getattr(builder, "branches", {}).values():
        for b in branches.values():
            if not isinstance(b, BranchSpec):
                problems.append("a branch is not a BranchSpec")
                break
    if problems:
        raise LangGraphCompatibilityError(
            "LangGraph builder internals are not what trustgate expects "
            "(pinned langgraph>=1.2,<1.3): " + "; ".join(problems)
        )


def is_gate_node(spec: Any) -> bool:
    """True for a node spec that ``guard()`` inserted (metadata ``{"trustgate": ...}``)."""
    meta = getattr(spec, "metadata", None) or {}
    return isinstance(meta, Mapping) and "trustgate" in meta


def guarded_nodes(graph: Any) -> dict[str, tuple[str, ...]]:
    """Which nodes of ``graph`` (a builder or a compiled graph) ``guard()`` put gates
    on: node name -> the names of its gates, in chain order.

    This is the one question other modules (``audit()``) may ask about the wiring;
    how a gate is installed is this module's business.
    """
    builder = getattr(graph, "builder", graph)
    found: dict[str, tuple[str, ...]] = {}
    for spec in (getattr(builder, "nodes", None) or {}).values():
        meta = (getattr(spec, "metadata", None) or {}).get("trustgate")
        if isinstance(meta, Mapping) and isinstance(meta.get("guards"), str):
            found[meta["guards"]] = tuple(str(g) for g in meta.get("gates") or ())
    return found


# --- the guarded builder ------------------------------------------------------------


def _hide_private(compiled: Any) -> Any:
    """Keep trustgate's private channels out of ``values``/``updates`` streams and state."""
    from langgraph.graph.state import _pick_mapper

    visible = [k for k in compiled.stream_channels_list if not k.startswith(_PREFIX)]
    compiled.stream_channels = visible
    compiled._state_mapper = _pick_mapper(visible, compiled.builder.state_schema)
    return compiled


class GuardedStateGraph(StateGraph[Any, Any, Any, Any]):
    """A ``StateGraph`` whose gates ``guard()`` inserted; compiles with private
    channels hidden from streams and snapshots."""

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        compiled = _stage_state_updates(super().compile(*args, **kwargs))
        return _hide_private(_join_on_release(compiled))


def _join_on_release(compiled: Any) -> Any:
    """A gate counts towards a waiting edge (``add_edge([gate, ...], end)``) only
    when it releases.

    LangGraph's join write is static: it would count a gate that sent its node back
    for a re-render, or halted, as done, and start the join target without the
    verified update. The gate's join write becomes conditional on its decision.
    """
    try:
        from langgraph.pregel._write import ChannelWrite, ChannelWriteEntry
    except ImportError as exc:  # pragma: no cover - other LangGraph versions
        raise LangGraphCompatibilityError(f"cannot condition join writes: {exc}") from exc
    for name, spec in compiled.builder.nodes.items():
        meta = (getattr(spec, "metadata", None) or {}).get("trustgate")
        if not isinstance(meta, Mapping) or name not in compiled.nodes:
            continue
        joins = [f"join:{'+'.join(s)}:{e}" for s, e in compiled.builder.waiting_edges if name in s]
        if not joins:
            continue
        decision_key = _keys(name)[2]

        def released(value: Any, name: str = name, decision_key: str = decision_key) -> Any:
            if not isinstance(value, Command):
                return name  # graph drawing and update_state: the static write
            for key, v in value._update_as_tuples():
                if key == decision_key:
                    return name if v == "release" else None
            return None

        node = compiled.nodes[name]
        writers: list[Any] = []
        found = 0
        for w in node.writers:
            entries = getattr(w, "writes", None)
            if (
                isinstance(w, ChannelWrite)
                and entries is not None
                and len(entries) == 1
                and isinstance(entries[0], ChannelWriteEntry)
                and entries[0].channel in joins
                and entries[0].value == name
            ):
                entry = ChannelWriteEntry(entries[0].channel, skip_none=True, mapper=released)
                writers.append(ChannelWrite((entry,)))
                found += 1
            else:
                writers.append(w)
        if found != len(joins):
            raise LangGraphCompatibilityError(
                f"gate {name!r}: found {found} of {len(joins)} join writes to condition"
            )
        compiled.nodes[name] = node.copy({"writers": writers})
    return compiled


def _stage_state_updates(compiled: Any) -> Any:
    """``update_state(..., as_node=X)`` on a guarded X goes through X's gate too.

    LangGraph applies such an update by running X's writers on the given values, not
    X itself: a first writer stages whatever is not already staged, so the gate checks
    it like any update X returns instead of releasing it unseen.
    """
    _c, _read, _rt, _t, runnable_callable, _bs = _internals()
    keys = list(compiled.builder.channels)
    for spec in compiled.builder.nodes.values():
        meta = (getattr(spec, "metadata", None) or {}).get("trustgate")
        if not isinstance(meta, Mapping) or meta.get("guards") not in compiled.nodes:
            continue
        guarded = str(meta["guards"])
        stage_key = _keys(str(meta["gate"]))[0]

        def stage(
            values: Any, config: RunnableConfig, guarded: str = guarded, stage_key: str = stage_key
        ) -> Any:
            if isinstance(values, Mapping) and set(values) == {stage_key}:
                return values  # what the wrapped node returned: already staged
            return {stage_key: [_staged_payload(values, config, guarded, keys)]}

        node = compiled.nodes[guarded]
        stager = runnable_callable(stage, name=f"{guarded}_stage", trace=False)
        compiled.nodes[guarded] = node.copy({"writers": [stager, *node.writers]})
    return compiled


# --- copying ---------------------------------------------------------------------------


def _copy_builder(builder: StateGraph[Any, Any, Any, Any]) -> StateGraph[Any, Any, Any, Any]:
    from langgraph.graph.state import _DEFAULT_ERROR_HANDLER_NODE

    new = copy.copy(builder)
    if not isinstance(new, GuardedStateGraph):
        new.__class__ = GuardedStateGraph
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


# --- staging -------------------------------------------------------------------------


def _stage_reducer(left: list[Any] | None, right: Any) -> list[Any]:
    """Append staged payloads; a ``{"consume": ids}`` write removes those payloads."""
    current = list(left or [])
    if isinstance(right, Mapping) and "consume" in right:
        gone = set(right["consume"])
        return [p for p in current if p.get("id") not in gone]
    if isinstance(right, list):
        return current + right
    return [*current, right]


def _keys(name: str) -> tuple[str, str, str]:
    return (f"{_PREFIX}_stage_{name}", f"{_PREFIX}_attempt_{name}", f"{_PREFIX}_decision_{name}")


def _to_payload(out: Any, task_id: str, node: str, keys: Sequence[str]) -> dict[str, Any]:
    from langgraph._internal._fields import get_cached_annotated_keys, get_update_as_tuples

    update: list[tuple[str, Any]] = []
    goto: list[Any] = []

    def take(o: Any) -> None:
        if o is None:
            return
        if isinstance(o, Command):
            if o.graph == Command.PARENT:
                raise ConfigurationError(
                    f"guarded node {node!r} returned Command(graph=PARENT); a gate cannot "
                    "hold a command addressed to the parent graph"
                )
            update.extend(o._update_as_tuples())
            targets = o.goto if isinstance(o.goto, (list, tuple)) else [o.goto]
            goto.extend(t for t in targets if t not in (None, ""))
        elif isinstance(o, Mapping):
            update.extend(o.items())
        elif isinstance(o, (list, tuple)) and any(isinstance(i, Command) for i in o):
            for i in o:
                take(i)
        elif isinstance(o, BaseModel) or get_cached_annotated_keys(type(o)):
            update.extend(get_update_as_tuples(o, keys))
        else:
            raise ConfigurationError(
                f"guarded node {node!r} returned {type(o).__name__}; expected a dict, "
                "a Command or a state object"
            )

    take(out)
    return {"id": task_id, "node": node, "update": [list(t) for t in update], "goto": goto}


# --- the gate node ---------------------------------------------------------------------


class _GateNode:
    """The callable installed as the gate node (one per guarded node)."""

    def __init__(
        self,
        gates: Sequence[TrustGate],
        node_name: str,
        guarded: str,
        successors: Sequence[str],
        user_keys: Sequence[str],
        issues_keys: Sequence[str],
    ) -> None:
        self.gates = tuple(gates)
        self.name = node_name
        self.guarded = guarded
        self.successors = tuple(successors)
        self.user_keys = tuple(user_keys)
        self.issues_keys = tuple(issues_keys)
        self.stage_key, self.attempt_key, self.decision_key = _keys(node_name)
        self.has_branches = False
        self.has_joins = False

    def _meta(self, config: RunnableConfig) -> tuple[dict[str, Any], Any]:
        _ck, _read, runtime_key, task_key, _rc, _bs = _internals()
        conf = _conf(config)
        runtime = conf.get(runtime_key)
        md: dict[str, Any] = dict(config.get("metadata") or {})
        meta = {
            "thread_id": conf.get("thread_id"),
            "run_id": str(config.get("run_id")) if config.get("run_id") else None,
            "step": md.get("langgraph_step"),
            "checkpoint_ns": conf.get("checkpoint_ns"),
            "task_id": conf.get(task_key),
            "started_at": datetime.now(UTC),
        }
        return meta, getattr(runtime, "context", None)

    def _emit(self, config: RunnableConfig, report: Report) -> None:
        _c, _read, runtime_key, _t, _rc, _bs = _internals()
        runtime = _conf(config).get(runtime_key)
        writer = getattr(runtime, "stream_writer", None)
        if writer is not None:
            writer({"trustgate": report})

    def _inputs(
        self, state: Mapping[str, Any], config: RunnableConfig
    ) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        # the private channels are read here, not taken as the node's input: a task's
        # input is shown by stream_mode="tasks"/"debug", and the staged update is held
        _c, read_key, _rt, _t, _rc, _bs = _internals()
        read = _conf(config).get(read_key)
        if read is None:
            raise LangGraphCompatibilityError("gate config carries no channel reader")
        staged = list(read(self.stage_key, False) or [])
        attempt = int(read(self.attempt_key, False) or 0) + 1
        user_state = {k: state[k] for k in self.user_keys if k in state}
        slots = read(_HALT_KEY, False)
        self_halted = isinstance(slots, Mapping) and slots.get(self.name) is not None
        user_state[_SELF_HALTED] = self_halted
        return staged, attempt, user_state

    def _combine(
        self,
        staged: list[dict[str, Any]],
        results: list[list[GateResult]],
        attempt: int,
        config: RunnableConfig,
        was_halted: bool,
    ) -> Command[Any]:
        """The gate's one write: reports, consumed payloads, and the released update.

        Bookkeeping channels are written only when they change: every extra write is
        paid again at every later step's checkpoint.
        """
        reports = [r.report for chain in results for r in chain]
        for report in reports:
            self._emit(config, report)
        finals = [chain[-1] for chain in results]
        writes: list[tuple[str, Any]] = [
            (REPORTS_KEY, [r.to_json_dict() for r in reports]),
            (self.stage_key, {"consume": [p["id"] for p in staged]}),
        ]
        halted = [r for r in finals if r.route == "halt"]
        rerender = [r for r in finals if r.route == "rerender"]
        goto: list[Any]
        decision: str
        if halted:
            writes.append((_HALT_KEY, {self.name: halted[0].report.to_json_dict()}))
            decision, goto = "halt", [HALT_NODE]
        elif rerender:
            for r in finals:
                writes.extend(r.writes.items())
            writes.append((self.attempt_key, attempt))
            decision = "rerender"
            goto = list(dict.fromkeys(r.rerender_to for r in rerender if r.rerender_to))
        else:
            goto = []
            for payload, r in zip(staged, finals, strict=True):
                if r.update is not None:
                    writes.extend(r.update.items())
                goto.extend(payload.get("goto") or [])
            if attempt > 1:
                writes.extend((k, []) for k in self.issues_keys)
            decision = "release"
            goto = list(self.successors) + goto
        if decision != "rerender" and attempt > 1:
            writes.append((self.attempt_key, 0))
        if decision != "halt" and was_halted:
            writes.append((_HALT_KEY, {self.name: None}))
        if self.has_branches or self.has_joins:
            writes.append((self.decision_key, decision))
        return Command(update=writes, goto=[g for g in goto if g != END])

    def _check_all(
        self,
        payload: dict[str, Any],
        user_state: dict[str, Any],
        context: Any,
        attempt: int,
        meta: dict[str, Any],
        config: RunnableConfig,
    ) -> list[GateResult]:
        update = {k: v for k, v in payload.get("update") or []}
        chain: list[GateResult] = []
        for gate in self.gates:
            r = gate.check(
                update,
                node=self.guarded,
                state=user_state,
                context=context,
                attempt=attempt,
                meta=meta,
                config=cast(dict[str, Any], config),
                parent=payload.get("span"),
            )
            chain.append(r)
            if r.update is None:
                break
            update = r.update
        return chain

    async def _acheck_all(
        self,
        payload: dict[str, Any],
        user_state: dict[str, Any],
        context: Any,
        attempt: int,
        meta: dict[str, Any],
        config: RunnableConfig,
    ) -> list[GateResult]:
        update = {k: v for k, v in payload.get("update") or []}
        chain: list[GateResult] = []
        for gate in self.gates:
            r = await gate.acheck(
                update,
                node=self.guarded,
                state=user_state,
                context=context,
                attempt=attempt,
                meta=meta,
                config=cast(dict[str, Any], config),
                parent=payload.get("span"),
            )
            chain.append(r)
            if r.update is None:
                break
            update = r.update
        return chain

    @staticmethod
    def _keyed(meta: dict[str, Any], payload: Mapping[str, Any]) -> dict[str, Any]:
        key = (meta.get("thread_id"), meta.get("checkpoint_ns"), meta.get("task_id"), payload["id"])
        return {**meta, "crossing_key": key}

    def run(self, state: dict[str, Any], config: RunnableConfig) -> Command[Any]:
        staged, attempt, user_state = self._inputs(state, config)
        was_halted = bool(user_state.pop(_SELF_HALTED))
        meta, context = self._meta(config)
        results = [
            self._check_all(p, user_state, context, attempt, self._keyed(meta, p), config)
            for p in staged
        ]
        return self._combine(staged, results, attempt, config, was_halted)

    async def arun(self, state: dict[str, Any], config: RunnableConfig) -> Command[Any]:
        staged, attempt, user_state = self._inputs(state, config)
        was_halted = bool(user_state.pop(_SELF_HALTED))
        meta, context = self._meta(config)
        results = [
            await self._acheck_all(p, user_state, context, attempt, self._keyed(meta, p), config)
            for p in staged
        ]
        return self._combine(staged, results, attempt, config, was_halted)


def _merge_halts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Per-gate halt slots: each gate sets its report on a halt and clears it on release."""
    return {**(left or {}), **(right or {})}


# the halt node's input: it reads the halt slots through the channel reader, so no
# private channel shows as its task's input in stream_mode="tasks"/"debug"
_HALT_INPUT: Any = TypedDict(
    "_HALT_INPUT",
    {REPORTS_KEY: Annotated[list[Report], ReportLog]},  # type: ignore[misc]
    total=False,
)


def _latest_halt(slots: Any, gates: Sequence[str] | None = None) -> Report | None:
    if not isinstance(slots, Mapping):
        return None
    found = [
        Report.coerce(v)
        for k, v in slots.items()
        if v is not None and (gates is None or k in gates)
    ]
    if not found:
        return None
    return max(found, key=lambda r: (r.step or 0, r.finished_at))


def _conf(config: RunnableConfig) -> dict[str, Any]:
    from langgraph._internal._constants import CONF

    return cast(dict[str, Any], cast(dict[str, Any], config).get(CONF) or {})


def _halt(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
    _c, read_key, _rt, _t, _rc, _bs = _internals()
    read = _conf(config).get(read_key)
    if read is None:
        raise LangGraphCompatibilityError("halt node config carries no channel reader")
    report = _latest_halt(read(_HALT_KEY, False))
    if report is None:
        raise ConfigurationError("trustgate halt node reached without a halted report")
    raise GateHalted(report)


def _wrap_join_target(inner: Any, node: str, gates: Sequence[str]) -> Any:
    """A node waiting on a gate (waiting edge) refuses to run once that gate halted.

    The gate's static join write fires even on a halt, so the join target could start
    in the same step as the halt node; this check keeps it from acting.
    """
    _c, read_key, _rt, _t, runnable_callable, _bs = _internals()

    def check(config: RunnableConfig) -> None:
        read = _conf(config).get(read_key)
        if read is None:
            raise LangGraphCompatibilityError("node config carries no channel reader")
        report = _latest_halt(read(_HALT_KEY, False), gates)
        if report is not None:
            raise GateHalted(report, f"{node!r} not run: gate {report.gate!r} halted")

    def run(input: Any, config: RunnableConfig) -> Any:
        check(config)
        return inner.invoke(input, config)

    async def arun(input: Any, config: RunnableConfig) -> Any:
        check(config)
        return await inner.ainvoke(input, config)

    return runnable_callable(run, arun, name=node, trace=False)


def _guard_join_targets(builder: StateGraph[Any, Any, Any, Any]) -> None:
    waiting: dict[str, set[str]] = {}
    for starts, end in builder.waiting_edges:
        gated = {s for s in starts if s in builder.nodes and is_gate_node(builder.nodes[s])}
        if gated and end != END:
            waiting.setdefault(end, set()).update(gated)
    for end, gates in waiting.items():
        spec = builder.nodes[end]
        builder.nodes[end] = dataclasses.replace(
            spec, runnable=_wrap_join_target(spec.runnable, end, sorted(gates))
        )


# --- wrapping the guarded node and its branches ---------------------------------------


def _staged_payload(
    out: Any, config: RunnableConfig, guarded: str, keys: Sequence[str]
) -> dict[str, Any]:
    _c, _read, _rt, task_key, _rc, _bs = _internals()
    task_id = str(_conf(config).get(task_key) or uuid.uuid4().hex)
    staged = _to_payload(out, task_id, guarded, keys)
    # the guarded node's span, so the gate's span can nest under it later
    staged["span"] = telemetry.span_link(cast(dict[str, Any], config))
    return staged


def _wrap_node(inner: Any, guarded: str, stage_key: str, keys: Sequence[str]) -> Any:
    _c, _read, _rt, _task_key, runnable_callable, _bs = _internals()

    def staged(input: Any, config: RunnableConfig) -> dict[str, Any]:
        out = inner.invoke(input, config)
        return {stage_key: [_staged_payload(out, config, guarded, keys)]}

    async def astaged(input: Any, config: RunnableConfig) -> dict[str, Any]:
        out = await inner.ainvoke(input, config)
        return {stage_key: [_staged_payload(out, config, guarded, keys)]}

    return runnable_callable(staged, astaged, name=guarded, trace=False)


def _wrap_branch(branch: Any, decision_key: str, fallback_schema: Any) -> Any:
    _c, read_key, _rt, _t, runnable_callable, branch_spec = _internals()
    path: Runnable[Any, Any] = branch.path

    def released(config: RunnableConfig) -> bool:
        read = _conf(config).get(read_key)
        if read is None:
            raise LangGraphCompatibilityError("branch config carries no channel reader")
        return bool(read(decision_key, True) == "release")

    def route(value: Any, config: RunnableConfig) -> Any:
        return path.invoke(value, config) if released(config) else []

    async def aroute(value: Any, config: RunnableConfig) -> Any:
        return await path.ainvoke(value, config) if released(config) else []

    return branch_spec(
        path=runnable_callable(route, aroute, name=getattr(path, "name", None), trace=False),
        ends=branch.ends,
        input_schema=branch.input_schema or fallback_schema,
    )


# --- guard ---------------------------------------------------------------------------------


def _router_schema(builder: StateGraph[Any, Any, Any, Any], spec: Any, gate: str) -> Any:
    """What a router without an input annotation reads once it moved to the gate.

    LangGraph gives such a router the guarded node's input channels with the node's
    raw update passed through (dict states only), so a router may read keys the node
    wrote but does not take as input. After the gate, the released update is in
    state: for a dict-shaped node input other than the state schema, the router
    reads the node's input channels plus every user channel.
    """
    from typing_extensions import is_typeddict

    node_schema = spec.input_schema or builder.state_schema
    if node_schema is builder.state_schema or not is_typeddict(node_schema):
        return node_schema
    hints = get_type_hints(node_schema, include_extras=True)
    fields: dict[str, Any] = {k: hints[k] for k in hints if k in builder.managed}
    for key in builder.channels:
        if not key.startswith(_PREFIX) and key != _HALT_KEY:
            fields.setdefault(key, Any)
    schema: Any = TypedDict(f"TrustgateRouter_{gate}", fields, total=False)  # type: ignore[misc]
    builder._add_schema(schema)
    return schema


def _normalise(node: str, gates: TrustGate | Sequence[TrustGate]) -> tuple[TrustGate, ...]:
    if isinstance(gates, TrustGate):
        return (gates,)
    out = tuple(gates) if isinstance(gates, (list, tuple)) else ()
    if not out or not all(isinstance(g, TrustGate) for g in out):
        raise ConfigurationError(
            f"guard(): the value for node {node!r} must be a TrustGate or a non-empty "
            f"list of TrustGates, not {gates!r}"
        )
    return out


def _insert(
    builder: StateGraph[Any, Any, Any, Any], guarded: str, gates: tuple[TrustGate, ...]
) -> None:
    _c, _read, _rt, _t, runnable_callable, _bs = _internals()
    if guarded not in builder.nodes:
        raise ConfigurationError(f"guard(): the graph has no node {guarded!r}")
    spec = builder.nodes[guarded]
    if is_gate_node(spec) or guarded == HALT_NODE:
        raise ConfigurationError(f"guard(): {guarded!r} is itself a gate node")
    for other in builder.nodes.values():
        meta = (other.metadata or {}).get("trustgate") if is_gate_node(other) else None
        if isinstance(meta, Mapping) and meta.get("guards") == guarded:
            raise ConfigurationError(
                f"guard(): {guarded!r} is already guarded by gate {meta.get('gate')!r}; "
                "to check it with several gates, pass them as one list in one guard() call"
            )
    name = gates[0].name
    if name in builder.nodes:
        raise ConfigurationError(f"guard(): a node named {name!r} already exists")
    if any(c in name for c in ("|", ":")) or name in (START, END, HALT_NODE):
        raise ConfigurationError(f"guard(): {name!r} is not a valid gate node name")
    stage_key, attempt_key, decision_key = _keys(name)
    user_keys = [k for k in builder.channels if not k.startswith(_PREFIX) and k != _HALT_KEY]

    issues_keys: list[str] = []
    rerender_targets: list[str] = []
    for g in gates:
        for p in g.policies:
            if isinstance(p, Rerender):
                rerender_targets.append(p.to)
                if p.to not in builder.nodes:
                    raise ConfigurationError(f"Rerender(to={p.to!r}): no such node")
                if p.issues_key is not None:
                    if p.issues_key not in builder.channels:
                        raise ConfigurationError(
                            f"Rerender writes the issues to state key {p.issues_key!r}, "
                            "which the state schema lacks; add it (e.g. "
                            "trust_issues: list[str]) so the producer can read it"
                        )
                    issues_keys.append(p.issues_key)

    private = TypedDict(  # type: ignore[misc]
        f"TrustgatePrivate_{name}",
        {
            stage_key: Annotated[list[Any], _stage_reducer],
            attempt_key: int,
            decision_key: str,
            _HALT_KEY: Annotated[dict[str, Any], _merge_halts],
            REPORTS_KEY: Annotated[list[Report], ReportLog],
            **{
                k: Any
                for k in user_keys
                if k != REPORTS_KEY and any(k in g.evidence.state_keys() for g in gates)
            },
        },
        total=False,
    )
    builder._add_schema(private)
    # what the gate node takes as input (and streams show as its task's input)
    gate_input = TypedDict(  # type: ignore[misc]
        f"TrustgateInput_{name}",
        {
            REPORTS_KEY: Annotated[list[Report], ReportLog],
            **{
                k: Any
                for k in private.__annotations__
                if not k.startswith(_PREFIX) and k != REPORTS_KEY
            },
        },
        total=False,
    )

    # move the guarded node's routing to the gate
    successors = sorted(e for (s, e) in builder.edges if s == guarded)
    builder.edges = {(s, e) for (s, e) in builder.edges if s != guarded}
    builder.edges.add((guarded, name))
    moved = builder.branches.pop(guarded, {})
    builder.waiting_edges = {
        (tuple(name if s == guarded else s for s in starts), end)
        for starts, end in builder.waiting_edges
    }
    ends = spec.ends
    old_ends: list[str] = list(ends) if isinstance(ends, (tuple, list)) else list(ends or {})
    builder.nodes[guarded] = dataclasses.replace(
        spec,
        runnable=_wrap_node(spec.runnable, guarded, stage_key, list(builder.channels)),
        ends=(),
    )

    evidence_keys = sorted(set().union(*(g.evidence.state_keys() for g in gates)))
    missing = [k for k in evidence_keys if k not in builder.channels]
    if missing:
        raise ConfigurationError(
            f"gate {name!r} reads evidence from state keys {missing}, which the state schema lacks"
        )
    node = _GateNode(gates, name, guarded, successors, evidence_keys, issues_keys)
    destinations = tuple(dict.fromkeys([*successors, *old_ends, *rerender_targets, HALT_NODE]))
    builder.add_node(
        name,
        runnable_callable(node.run, node.arun, name=name, trace=False),
        input_schema=gate_input,
        metadata={
            "trustgate": {
                "gate": name,
                "gates": [g.name for g in gates],
                "guards": guarded,
            }
        },
        retry_policy=_NO_RETRY,
        destinations=destinations,
    )
    builder.nodes[name] = dataclasses.replace(builder.nodes[name], is_error_handler=True)
    router_schema = _router_schema(builder, spec, name) if moved else None
    for bname, branch in moved.items():
        builder.branches[name][bname] = _wrap_branch(branch, decision_key, router_schema)
    node.has_branches = bool(moved)
    node.has_joins = any(name in starts for starts, _end in builder.waiting_edges)
    if HALT_NODE not in builder.nodes:
        builder.add_node(
            HALT_NODE,
            cast(Any, _halt),
            input_schema=_HALT_INPUT,
            metadata={"trustgate_halt": True},
            retry_policy=_NO_RETRY,
        )
        builder.nodes[HALT_NODE] = dataclasses.replace(
            builder.nodes[HALT_NODE], is_error_handler=True
        )


def _recompile(original: CompiledStateGraph[Any, Any, Any, Any], builder: Any) -> Any:
    compiled = builder.compile(
        checkpointer=original.checkpointer,
        store=original.store,
        cache=original.cache,
        interrupt_before=original.interrupt_before_nodes,
        interrupt_after=original.interrupt_after_nodes,
        debug=original.debug,
        name=original.name,
    )
    return compiled.copy(
        {
            "config": original.config,
            "step_timeout": original.step_timeout,
            "retry_policy": original.retry_policy,
            "cache_policy": original.cache_policy,
        }
    )


def guard(graph: G, gates: Mapping[str, TrustGate | Sequence[TrustGate]]) -> G:
    """Insert a real gate node after each named node; the original is untouched.

    Given a ``StateGraph`` builder it returns a new builder; given a compiled graph
    it returns a compiled graph with the same checkpointer, store, cache, interrupt
    settings, config and name.

    Example:
        ```python
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
    if isinstance(graph, CompiledStateGraph):
        builder = graph.builder
    elif isinstance(graph, StateGraph):
        builder = graph
    else:
        raise ConfigurationError(
            f"guard() takes a StateGraph or a compiled StateGraph, not {type(graph).__name__}"
        )
    check_builder_internals(builder)
    new = _copy_builder(builder)
    seen: set[str] = set()
    for guarded, spec in gates.items():
        chain = _normalise(guarded, spec)
        if chain[0].name in seen:
            raise ConfigurationError(f"gate name {chain[0].name!r} used twice")
        seen.add(chain[0].name)
        _insert(new, guarded, chain)
    _guard_join_targets(new)
    if isinstance(graph, CompiledStateGraph):
        return cast(G, _recompile(graph, new))
    return cast(G, new)
