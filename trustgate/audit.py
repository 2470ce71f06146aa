"""``audit()``: every node whose output is model output, and whether a gate holds each
way out of it. Three answers, never a false all-clear.

Each crossing and each path out of it is ``guarded`` (a gate holds it), ``unguarded``
(model output leaves with nothing in the way) or ``unknown`` (the audit could not tell,
and says why: an opaque or remote node, a dynamic import, a subgraph it could not open,
a handoff it could not follow, a sample run that stopped before the node). ``unknown``
is never counted as guarded.

Crossings are found

* **statically**, by what a node's runnable refers to: a chat/language model object
  (also inside bindings, sequences, partials, closures, defaults, bound ``self`` and the
  module globals a node's code names, at any depth of helpers), a model *factory* its
  code calls (``init_chat_model``, ``load_chat_model``, a chat-model class constructed
  in the body: the model that a run-time context or configuration names), or an agent
  or compiled subgraph that contains one;
* **by a sample run**, when ``sample_input`` is given: the graph runs once on a copy
  (fresh in-memory checkpointer) with **every chat model and every tool replaced by a
  recording stub**, so nothing with side effects runs (real tools only with
  ``run_tools=True``). The stub models call each tool they are offered once (with
  minimal arguments) and answer structured-output requests with a minimal valid
  object, so the run goes down the tool and handoff paths too.

Never by node names: a model-calling node named ``step1`` is found, a node named
``llm`` that calls no model is not.

Paths out of a crossing: plain, waiting and conditional edges, the ``Command``
destinations a node declares, and **handoffs**: ``Command(graph=Command.PARENT,
goto=...)`` raised by a tool or node anywhere inside the node (a supervisor's or a
swarm's handoff tools, a nested agent's), followed to their targets. Which nodes carry
gates is asked of :func:`trustgate.wiring.guarded_nodes` and nothing else: a gate on a
node holds everything the node emits, so every path out of it, handoffs raised inside
it included, is guarded by that gate. ``TrustGateMiddleware`` in a ``create_agent``
agent guards the paths after its ``after_model`` hooks.

Example:
    ```python
    import trustgate

    result = trustgate.audit(app)
    for crossing in result:
        print(crossing.node, crossing.status, crossing.reason)
    ```
"""

from __future__ import annotations

import asyncio
import functools
import sys
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import RunnableConfig
from langgraph.constants import END
from pydantic import BaseModel, ConfigDict

from trustgate.errors import ConfigurationError, LangGraphCompatibilityError, TrustgateError
from trustgate.graph import _compat

__all__ = [
    "AuditPath",
    "AuditResult",
    "AuditedCrossing",
    "SampleRun",
    "SampleToolCall",
    "Status",
    "aaudit",
    "audit",
]

Status = Literal["guarded", "unguarded", "unknown"]
PathKind = Literal["plain", "conditional", "waiting", "command", "handoff"]
Detection = Literal["static", "sample_run", "static+sample_run"]

_MAX_DEPTH = 14
_MAX_ITEMS = 64
_MAX_OBJECTS = 20_000  # per node: a bound on the walk through large object graphs
_AFTER_MODEL = ("after_model", "aafter_model")
# library code whose module globals are not user wiring: walk their objects, but do
# not open the globals of their functions (that only finds the libraries' own imports)
_LIBRARY_PREFIXES = ("langgraph.", "langchain_core.", "langchain.", "pydantic", "typing", "abc")
_FACTORIES = frozenset({"init_chat_model", "load_chat_model"})
"""Names of chat-model factories: a node whose code calls one builds its model at run
time (from ``runtime.context``, the config, an environment variable)."""
_DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})
HANDOFF_METADATA_KEY = "__handoff_destination"
"""Where langgraph-supervisor and langgraph-swarm handoff tools name their target."""


class AuditPath(BaseModel):
    """One way a crossing's output leaves its node, and whether a gate holds it.

    ``target`` is a node name, ``"__end__"``, or ``None`` when it is not declared (a
    conditional branch without targets, a handoff whose target could not be resolved).
    ``kind`` is how the output travels: ``plain`` edge, ``waiting`` (join) edge,
    ``conditional`` branch, ``command`` (a ``Command(goto=...)`` destination the node
    declared) or ``handoff`` (``Command.PARENT`` raised inside the node). ``status`` is
    ``guarded``, ``unguarded`` or ``unknown``; ``reason`` says why; ``gate`` names the
    gate(s) that hold it; ``via`` the node that holds them.

    Example:
        ```python
        open_paths = [p.target for p in crossing.paths if p.status != "guarded"]
        ```
    """

    model_config = ConfigDict(frozen=True)

    target: str | None
    kind: PathKind
    status: Status
    reason: str = ""
    gate: str | None = None
    via: str | None = None

    @property
    def guarded(self) -> bool:
        """True only when a gate is proven to hold this path (``unknown`` is not)."""
        return self.status == "guarded"


class AuditedCrossing(BaseModel):
    """A node whose output is (or may be) model output, with every path out of it.

    ``found_by`` says how it was found (``static``, ``sample_run`` or both); ``detail``
    what was found (which model or factory, through which reference), so a surprising
    entry can be traced to the line that holds the model. ``status`` is ``unguarded``
    when any path is, else ``unknown`` when any path is, else ``guarded``; ``reason``
    says why in one line. A node with no declared way out is reported with one path to
    ``"__end__"`` (its output stays in the state the caller reads).

    Example:
        ```python
        for c in trustgate.audit(app):
            print(c.node, c.found_by, c.status, c.reason)
        ```
    """

    model_config = ConfigDict(frozen=True)

    node: str
    found_by: Detection
    status: Status
    reason: str
    paths: tuple[AuditPath, ...]
    gates: tuple[str, ...] = ()
    detail: tuple[str, ...] = ()

    @property
    def guarded(self) -> bool:
        """True only when every path out of the node is proven guarded."""
        return self.status == "guarded"


class SampleToolCall(BaseModel):
    """A tool call met during the sample run: which node, which tool, whether it ran."""

    model_config = ConfigDict(frozen=True)

    node: str | None
    tool: str
    ran: bool
    """True only when the real tool executed (``run_tools=True``)."""


class SampleRun(BaseModel):
    """How the sample run went: ``finished``, ``interrupted``, ``halted`` or ``error``.

    A sample run that stopped early saw only the nodes before the stop; ``unreached``
    names the interrupted nodes it could not get past (they and what follows them are
    ``unknown`` coverage). ``model_nodes`` lists every top-level node seen starting a
    (stubbed) model run, gate nodes included; ``tool_calls`` every tool call, and
    whether the real tool ran.

    Example:
        ```python
        run = trustgate.audit(app, {"messages": []}).sample_run
        if run is not None and run.outcome != "finished":
            print("sample run stopped early:", run.outcome, run.detail)
        ```
    """

    model_config = ConfigDict(frozen=True)

    outcome: Literal["finished", "interrupted", "halted", "error"]
    detail: str = ""
    model_nodes: tuple[str, ...] = ()
    unattributed: int = 0
    """Model runs whose metadata named no graph node."""
    tool_calls: tuple[SampleToolCall, ...] = ()
    resumed: int = 0
    """How many interrupts the given resume values answered."""
    unreached: tuple[str, ...] = ()
    """Nodes paused at an interrupt no resume value was left for."""
    run_tools: bool = False
    """Whether real tools ran (otherwise every tool was a recording stub)."""


class AuditResult(list[AuditedCrossing]):
    """The crossings (a list, node order), plus how the sample run went.

    ``status`` is the verdict on the whole graph: ``unguarded`` when any crossing is,
    else ``unknown`` when any crossing is or the sample run could not cover the graph
    (it stopped at an interrupt, halted or failed), else ``guarded``.

    Example:
        ```python
        result = trustgate.audit(builder)
        assert result.status == "guarded", [(c.node, c.reason) for c in result]
        ```
    """

    sample_run: SampleRun | None = None

    @property
    def unguarded(self) -> list[AuditedCrossing]:
        """The crossings with at least one path no gate stands on."""
        return [c for c in self if c.status == "unguarded"]

    @property
    def unknown(self) -> list[AuditedCrossing]:
        """The crossings the audit could not decide (none of their paths unguarded)."""
        return [c for c in self if c.status == "unknown"]

    @property
    def status(self) -> Status:
        if self.unguarded:
            return "unguarded"
        if self.unknown or self.coverage_gap:
            return "unknown"
        return "guarded"

    @property
    def coverage_gap(self) -> str:
        """Why the sample run did not cover the graph ('' when it did or did not run)."""
        run = self.sample_run
        if run is None or run.outcome == "finished":
            return ""
        return f"sample run {run.outcome}" + (f": {run.detail}" if run.detail else "")


# --- finding models and handoffs inside a node's runnable -------------------------------


@dataclass
class _Handoff:
    """A ``Command.PARENT`` raised somewhere inside a node, and what it may target."""

    candidates: frozenset[str]
    where: str
    held_by: tuple[str, ...] = ()
    """Gates of the inner node that raises it (a gate there holds the handoff)."""


@dataclass
class _Found:
    models: list[str] = field(default_factory=list)
    inner_gates: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    handoffs: list[_Handoff] = field(default_factory=list)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _code_strings(code: types.CodeType) -> set[str]:
    found = {c for c in code.co_consts if isinstance(c, str)}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _code_strings(const)
    return found


def _is_library(module: str) -> bool:
    """Library and standard-library code: its globals are its own imports, not wiring."""
    return module.startswith(_LIBRARY_PREFIXES) or module.split(".", 1)[0] in (
        sys.stdlib_module_names
    )


def _is_boundary(obj: Any) -> bool:
    """trustgate's own gates call models (a blind verifier) but are not crossings."""
    from trustgate.gate import TrustGate

    if isinstance(obj, TrustGate):
        return True
    try:
        from trustgate.middleware import TrustGateMiddleware
    except ImportError:  # pragma: no cover - langchain not installed
        return False
    return isinstance(obj, TrustGateMiddleware)


def _opaque(obj: Any) -> str | None:
    """Why a node's runnable cannot be opened (None when it can)."""
    from langgraph.pregel import Pregel
    from langgraph.pregel.remote import RemoteGraph

    if isinstance(obj, RemoteGraph):
        return "a remote graph: what runs there cannot be inspected"
    if isinstance(obj, Pregel) and not _is_state_graph(obj):
        return "a Pregel graph that is not a StateGraph (functional API?): it was not opened"
    return None


class _Finder:
    """Walks the object graph under a node's runnable looking for models and handoffs."""

    def __init__(self, seen: set[int] | None = None) -> None:
        self.seen: set[int] = set(seen or ())
        self.found = _Found()

    def walk(self, obj: Any, where: str, depth: int = 0) -> None:
        try:
            self._walk(obj, where, depth)
        except TrustgateError:
            raise
        except Exception:  # an object that refuses inspection (a proxy, a lazy attribute)
            return

    def _walk(self, obj: Any, where: str, depth: int) -> None:
        if obj is None or isinstance(obj, (str, bytes, int, float, bool, type)):
            return
        if isinstance(obj, types.ModuleType) or depth > _MAX_DEPTH:
            return
        if id(obj) in self.seen or len(self.seen) > _MAX_OBJECTS:
            return
        self.seen.add(id(obj))
        if isinstance(obj, BaseLanguageModel):
            self.found.models.append(f"{type(obj).__name__} ({where})")
            return
        if _is_boundary(obj):
            return
        if _is_state_graph(obj):
            self._subgraph(_builder_of(obj), where, depth)
            return
        why = _opaque(obj)
        if why is not None:
            self.found.unknown.append(f"{where}: {why}")
            return
        self._handoff_tool(obj, where)
        if isinstance(obj, functools.partial):
            self.walk(obj.func, where, depth + 1)
            for a in obj.args:
                self.walk(a, f"{where} partial argument", depth + 1)
            for k, v in obj.keywords.items():
                self.walk(v, f"{where} partial argument {k!r}", depth + 1)
            return
        if isinstance(obj, types.MethodType):
            self.walk(obj.__self__, f"{where} bound to", depth + 1)
            self.walk(obj.__func__, where, depth + 1)
            return
        if isinstance(obj, types.FunctionType):
            self._function(obj, where, depth)
            return
        if isinstance(obj, (types.BuiltinFunctionType, types.CodeType)):
            return
        if isinstance(obj, Mapping):
            for i, (k, v) in enumerate(obj.items()):
                if i >= _MAX_ITEMS:
                    break
                self.walk(v, f"{where}[{k!r}]", depth + 1)
            return
        if isinstance(obj, (list, tuple, set, frozenset)):
            for i, v in enumerate(obj):
                if i >= _MAX_ITEMS:
                    break
                self.walk(v, where, depth + 1)
            return
        self._attributes(obj, where, depth)

    def _handoff_tool(self, obj: Any, where: str) -> None:
        """A tool that names its handoff target in its metadata (supervisor, swarm)."""
        meta = getattr(obj, "metadata", None)
        if isinstance(meta, Mapping) and isinstance(meta.get(HANDOFF_METADATA_KEY), str):
            name = getattr(obj, "name", "?")
            self.found.handoffs.append(
                _Handoff(frozenset({meta[HANDOFF_METADATA_KEY]}), f"tool {name!r} ({where})")
            )

    def _function(self, fn: types.FunctionType, where: str, depth: int) -> None:
        name = getattr(fn, "__qualname__", fn.__name__)
        module = str(getattr(fn, "__module__", "") or "")
        names = _code_names(fn.__code__)
        closure: dict[str, Any] = {}
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                closure[var] = cell.cell_contents
            except ValueError:  # an empty cell
                continue
        if not _is_library(module) and not module.startswith("trustgate."):
            self._code(fn, name, names, closure)
        for var, value in closure.items():
            self.walk(value, f"closure {var!r} of {name}", depth + 1)
        for value in fn.__defaults__ or ():
            self.walk(value, f"default argument of {name}", depth + 1)
        for var, value in (fn.__kwdefaults__ or {}).items():
            self.walk(value, f"default argument {var!r} of {name}", depth + 1)
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            self.walk(wrapped, where, depth + 1)
        if _is_library(module) or module.startswith("trustgate."):
            # trustgate's own module state (pools, registries) belongs to no graph
            return
        glb = fn.__globals__
        for var in sorted(names):
            if var not in glb:
                continue
            value = glb[var]
            if isinstance(value, type) and issubclass(value, BaseLanguageModel):
                self.found.models.append(
                    f"{value.__name__} constructed at run time by {name} ({where})"
                )
                continue
            if isinstance(value, types.ModuleType):
                if _is_library(value.__name__):
                    continue
                # ``llms.model.invoke(...)``: attributes of the module the code names
                for attr in sorted(names):
                    inner = getattr(value, attr, None)
                    if inner is not None and not isinstance(inner, types.ModuleType):
                        self.walk(inner, f"global {var}.{attr} used by {name}", depth + 1)
                continue
            self.walk(value, f"global {var!r} used by {name}", depth + 1)

    def _code(
        self, fn: types.FunctionType, name: str, names: set[str], closure: Mapping[str, Any]
    ) -> None:
        """What a user function's own code does: build a model, import, hand off."""
        for factory in sorted(names & _FACTORIES):
            self.found.models.append(f"model built at run time: {name} calls {factory}()")
        for dyn in sorted(names & _DYNAMIC_IMPORTS):
            self.found.unknown.append(f"dynamic import in {name} ({dyn}): not followed")
        if "PARENT" in names:
            strings = _code_strings(fn.__code__) | {
                v for v in closure.values() if isinstance(v, str)
            }
            strings |= {v for v in fn.__defaults__ or () if isinstance(v, str)}
            self.found.handoffs.append(_Handoff(frozenset(strings), f"{name} (Command.PARENT)"))

    def _attributes(self, obj: Any, where: str, depth: int) -> None:
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            for i, (k, v) in enumerate(attrs.items()):
                if i >= _MAX_ITEMS:
                    break
                self.walk(v, f"{where}.{k}" if depth else f"attribute {k!r}", depth + 1)
        cls = type(obj)
        if not str(cls.__module__).startswith(
            ("langchain", "langgraph", "pydantic", "builtins", "trustgate.")
        ):
            # a user-defined callable object: its methods may use module globals
            for k, v in vars(cls).items():
                if isinstance(v, types.FunctionType):
                    self._function(v, f"method {cls.__name__}.{k}", depth + 1)

    def _subgraph(self, builder: Any, where: str, depth: int) -> None:
        inner, handoffs = _static_crossings(builder, self.seen, depth + 1)
        self.found.handoffs.extend(handoffs)
        for c in inner:
            if c.status == "unguarded":
                self.found.models.append(f"subgraph node {c.node!r}: {', '.join(c.detail)}")
            elif c.status == "unknown":
                self.found.unknown.append(f"subgraph node {c.node!r}: {c.reason}")
        if inner and all(c.status == "guarded" for c in inner):
            gates = sorted({g for c in inner for g in c.gates})
            self.found.inner_gates.append(", ".join(gates))


# --- LangGraph internals ---------------------------------------------------------------


def _is_state_graph(obj: Any) -> bool:
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

    return isinstance(obj, (StateGraph, CompiledStateGraph))


def _builder_of(graph: Any) -> Any:
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

    if isinstance(graph, CompiledStateGraph):
        builder = getattr(graph, "builder", None)
        if not isinstance(builder, StateGraph):
            raise LangGraphCompatibilityError(
                "CompiledStateGraph.builder is not a StateGraph in this LangGraph version"
            )
        return builder
    if isinstance(graph, StateGraph):
        return graph
    raise ConfigurationError(
        f"audit() takes a StateGraph or a compiled StateGraph, not {type(graph).__name__}"
    )


def _meta(spec: Any) -> Mapping[str, Any]:
    return _compat.node_metadata(spec)


def _skipped(name: str, spec: Any) -> bool:
    """Nodes that only exist to run other nodes' gates are never crossings (a gate
    runs inside its node, so today there are none; kept for graphs that declare
    their own ``metadata={"trustgate_halt": True}`` helper nodes)."""
    return bool(_meta(spec).get("trustgate_halt"))


def _middleware_hook(spec: Any) -> tuple[Any, str] | None:
    """(middleware, hook) when the node runs an ``after_model`` hook of agent middleware."""
    runnable = _compat.node_runnable(spec)
    for attr in ("func", "afunc"):
        fn = getattr(runnable, attr, None)
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__name__", "")
        if owner is None or name not in _AFTER_MODEL:
            continue
        try:
            from langchain.agents.middleware.types import AgentMiddleware
        except ImportError:  # pragma: no cover - langchain not installed
            return None
        if isinstance(owner, AgentMiddleware):
            return owner, name
    return None


def _model_gates(middleware: Any) -> list[str]:
    try:
        from trustgate.middleware import TrustGateMiddleware
    except ImportError:  # pragma: no cover
        return []
    if isinstance(middleware, TrustGateMiddleware):
        return [g.name for g in middleware.model_gates]
    return []


def _tool_gates(spec: Any) -> list[str]:
    """Tool gates of ``TrustGateMiddleware`` wrapped around a ``create_agent`` tool node.

    They check each tool call of the model's message before the tool runs, so the path
    model → tools carries a gate even without model gates.
    """
    try:
        from trustgate.middleware import TrustGateMiddleware
    except ImportError:  # pragma: no cover
        return []
    runnable = _compat.node_runnable(spec)
    found: list[str] = []
    seen: set[int] = set()

    def walk(obj: Any, depth: int) -> None:
        if obj is None or depth > 6 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, TrustGateMiddleware):
            found.extend(g.name for g in obj.tool_gates)
        elif isinstance(obj, types.MethodType):
            walk(obj.__self__, depth + 1)
            walk(obj.__func__, depth + 1)
        elif isinstance(obj, functools.partial):
            walk(obj.func, depth + 1)
            for a in (*obj.args, *obj.keywords.values()):
                walk(a, depth + 1)
        elif isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                try:
                    walk(cell.cell_contents, depth + 1)
                except ValueError:
                    continue

    for attr in ("_wrap_tool_call", "_awrap_tool_call"):
        walk(getattr(runnable, attr, None), 0)
    return list(dict.fromkeys(found))


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


def _find(builder: Any, seen: set[int] | None, depth: int) -> dict[str, _Found]:
    """What each of the builder's own nodes holds (models, unknowns, handoffs)."""
    found: dict[str, _Found] = {}
    for name, spec in _compat.node_specs(builder).items():
        if _skipped(name, spec) or _middleware_hook(spec) is not None:
            continue
        finder = _Finder(seen)  # what encloses this subgraph is not walked again
        finder.walk(_compat.node_runnable(spec), f"node {name!r}", depth)
        found[name] = finder.found
    return found


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
        gates = guarded.get(name, ())
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


# --- audit --------------------------------------------------------------------------------


def audit(
    graph: Any,
    sample_input: Any = None,
    *,
    config: RunnableConfig | None = None,
    context: Any = None,
    resume: Sequence[Any] = (),
    run_tools: bool = False,
) -> AuditResult:
    """Every node whose output is model output, and whether a gate holds each path out.

    ``graph`` is a ``StateGraph`` builder or a compiled graph (it is not modified). With
    ``sample_input`` the graph also runs once on a copy (fresh in-memory checkpointer,
    ``config`` merged in, ``context`` passed as the run-time context) with every chat
    model and tool replaced by a recording stub (real tools run only with
    ``run_tools=True``); each interrupt on the way is answered with the next of
    ``resume``, and an interrupt with none left ends the run (``unknown`` coverage).
    Nodes seen starting a model run are added. The run goes through ``ainvoke`` in
    ``asyncio.run`` (inside a running event loop it goes through ``invoke``: use
    :func:`aaudit` there for graphs with async-only nodes).

    Example:
        ```python
        result = trustgate.audit(app, {"messages": [{"role": "user", "content": "hi"}]})
        assert result.status == "guarded", [(c.node, c.reason) for c in result]
        ```
    """
    from trustgate import _sample_run

    builder = _builder_of(graph)
    _check(builder)
    run: _sample_run.Outcome | None = None
    if sample_input is not None:
        plan = _sample_run.Plan(graph, sample_input, config, context, list(resume), run_tools)
        # through ainvoke whenever it can: it runs sync and async nodes alike, also
        # when a wrapper hides that a node is async-only
        run = _sample_run.run(plan) if _loop_running() else asyncio.run(_sample_run.arun(plan))
    return _combine(graph, builder, run)


async def aaudit(
    graph: Any,
    sample_input: Any = None,
    *,
    config: RunnableConfig | None = None,
    context: Any = None,
    resume: Sequence[Any] = (),
    run_tools: bool = False,
) -> AuditResult:
    """:func:`audit` with the sample run through ``ainvoke`` (for async graphs).

    Example:
        ```python
        result = await trustgate.aaudit(app, {"messages": []})
        ```
    """
    from trustgate import _sample_run

    builder = _builder_of(graph)
    _check(builder)
    run: _sample_run.Outcome | None = None
    if sample_input is not None:
        plan = _sample_run.Plan(graph, sample_input, config, context, list(resume), run_tools)
        run = await _sample_run.arun(plan)
    return _combine(graph, builder, run)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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
        result.append(_crossing(builder, name, found_by, f, guarded.get(name, ()), notes))
    result.sample_run = run.sample if run is not None else None
    return result
