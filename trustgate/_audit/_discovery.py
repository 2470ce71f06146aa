"""Static discovery: what a node's runnable refers to (models, model factories,
agents and subgraphs that hold one, handoffs raised inside it, remote graphs), and
what the routing functions of its conditional edges refer to.

Never by node names: a model-calling node named ``step1`` is found, a node named
``llm`` that calls no model is not. The walk is bounded (depth, items per container,
objects per node) so a huge object graph costs a bounded time.
"""

from __future__ import annotations

import dis
import functools
import logging
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain_core.language_models import BaseLanguageModel

from trustgate import _compat
from trustgate._audit._results import AuditedCrossing
from trustgate.errors import ConfigurationError, LangGraphCompatibilityError, TrustgateError

__all__ = ["HANDOFF_METADATA_KEY"]

logger = logging.getLogger(__name__)

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
    """Where each model is (for ``detail``)."""
    inner_gates: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    handoffs: list[_Handoff] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    """What each model is, in a few words (``ChatOpenAI``, ``init_chat_model()``)."""
    remote_nodes: list[str] = field(default_factory=list)
    """Remote graphs that are the node itself, or nodes of the graph it is (any depth)."""
    remotes: list[str] = field(default_factory=list)
    """Remote graphs the node's code reaches (closures, globals, bindings)."""

    def model(self, where: str, label: str) -> None:
        self.models.append(where)
        self.labels.append(label)


@dataclass
class _Graph:
    """What one (sub)graph holds, for the node that contains it."""

    crossings: list[AuditedCrossing]
    handoffs: list[_Handoff]
    remote_nodes: list[str]
    remotes: list[str]


Subgraphs: TypeAlias = Callable[[Any, set[int], int], _Graph]
"""How a walk reads a subgraph it meets: ``(builder, objects seen, depth) -> _Graph``.

The audit's own crossings (:func:`trustgate._audit._crossings._static_crossings`), so
that a subgraph's guarded nodes count as guarded; passed in, because those crossings
are found with this walk."""


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _called_globals(code: types.CodeType) -> set[str]:
    """Globals the code loads to call (``RemoteGraph(...)``), not to pass on
    (``isinstance(x, RemoteGraph)``): since Python 3.11 a global loaded as a callee
    carries the low bit of ``LOAD_GLOBAL``'s argument (it pushes a NULL with it)."""
    found: set[str] = set()
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL" and isinstance(ins.arg, int) and ins.arg & 1:
            found.add(str(ins.argval))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _called_globals(const)
    return found


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
    from trustgate._gate import TrustGate

    if isinstance(obj, TrustGate):
        return True
    try:
        from trustgate.graph._middleware import TrustGateMiddleware
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


def _is_remote(obj: Any) -> bool:
    from langgraph.pregel.remote import RemoteGraph

    return isinstance(obj, RemoteGraph) or (isinstance(obj, type) and issubclass(obj, RemoteGraph))


class _Finder:
    """Walks the object graph under a node's runnable looking for models and handoffs.

    ``root`` is the node's runnable itself: a remote graph that is the root, or a node
    of the graph the root is, is one of the node's own parts (``remote_nodes``); one
    reached any other way is called by the node's code (``remotes``).
    """

    def __init__(
        self, seen: set[int] | None = None, root: Any = None, *, subgraphs: Subgraphs
    ) -> None:
        self.seen: set[int] = set(seen or ())
        self.found = _Found()
        self.root = root
        self.subgraphs = subgraphs

    def walk(self, obj: Any, where: str, depth: int = 0) -> None:
        try:
            self._walk(obj, where, depth)
        except TrustgateError:
            raise
        except Exception as exc:  # an object that refuses inspection (a proxy, a lazy attribute)
            logger.warning(
                "audit: %s (a %s) could not be inspected, what it holds is not seen: %s: %s",
                where,
                type(obj).__name__,
                type(exc).__name__,
                exc,
            )

    def _walk(self, obj: Any, where: str, depth: int) -> None:
        if obj is None or isinstance(obj, (str, bytes, int, float, bool, type)):
            return
        if isinstance(obj, types.ModuleType) or depth > _MAX_DEPTH:
            return
        if id(obj) in self.seen or len(self.seen) > _MAX_OBJECTS:
            return
        self.seen.add(id(obj))
        if isinstance(obj, BaseLanguageModel):
            self.found.model(f"{type(obj).__name__} ({where})", type(obj).__name__)
            return
        if _is_boundary(obj):
            return
        if _is_state_graph(obj):
            self._subgraph(_builder_of(obj), where, depth, structural=obj is self.root)
            return
        why = _opaque(obj)
        if why is not None:
            self.found.unknown.append(f"{where}: {why}")
            if _is_remote(obj):
                (self.found.remote_nodes if obj is self.root else self.found.remotes).append(where)
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
                self.found.model(
                    f"{value.__name__} constructed at run time by {name} ({where})",
                    value.__name__,
                )
                continue
            if (
                isinstance(value, type)
                and _is_remote(value)
                and var in _called_globals(fn.__code__)
            ):
                # ``RemoteGraph(...)`` built in the body: a remote graph all the same
                self.found.unknown.append(
                    f"{name} builds a {value.__name__} at run time: what runs there "
                    "cannot be inspected"
                )
                self.found.remotes.append(f"{value.__name__} constructed by {name} ({where})")
                continue
            if isinstance(value, types.ModuleType):
                if _is_library(value.__name__) or value.__name__.startswith("trustgate"):
                    continue  # (trustgate's own modules load names lazily: never walked)
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
            self.found.model(f"model built at run time: {name} calls {factory}()", f"{factory}()")
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

    def _subgraph(self, builder: Any, where: str, depth: int, *, structural: bool) -> None:
        graph = self.subgraphs(builder, self.seen, depth + 1)
        inner = graph.crossings
        self.found.handoffs.extend(graph.handoffs)
        # a remote node of a subgraph that is this node is one of this node's parts; one
        # of a subgraph this node's code calls is called by the code
        (self.found.remote_nodes if structural else self.found.remotes).extend(
            f"{where}, inside it {r}" for r in graph.remote_nodes
        )
        self.found.remotes.extend(f"{where}, inside it {r}" for r in graph.remotes)
        for c in inner:
            part = f"routing function {c.routing!r} of {c.node!r}" if c.routing else repr(c.node)
            if c.status == "unguarded":
                self.found.model(
                    f"subgraph {'' if c.routing else 'node '}{part}: {', '.join(c.detail)}",
                    f"a subgraph ({c.found})" if c.found else "a subgraph with a model",
                )
            elif c.status == "unknown":
                self.found.unknown.append(f"subgraph node {c.node!r}: {c.reason}")
        if inner and all(c.status == "guarded" for c in inner):
            gates = sorted({g for c in inner for g in c.gates})
            self.found.inner_gates.append(", ".join(gates))


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


def _find(
    builder: Any, seen: set[int] | None, depth: int, subgraphs: Subgraphs
) -> dict[str, _Found]:
    """What each of the builder's own nodes holds (models, unknowns, handoffs)."""
    found: dict[str, _Found] = {}
    for name, spec in _compat.node_specs(builder).items():
        if _middleware_hook(spec) is not None:
            continue
        runnable = _compat.node_runnable(spec)
        # what encloses this subgraph is not walked again
        finder = _Finder(seen, root=runnable, subgraphs=subgraphs)
        finder.walk(runnable, f"node {name!r}", depth)
        found[name] = finder.found
    return found


def _find_routing(
    builder: Any, seen: set[int] | None, depth: int, subgraphs: Subgraphs
) -> dict[tuple[str, str], _Found]:
    """What each routing function (a conditional edge's path) refers to, by (the node
    the edge leaves, the routing function's name). A model found there decides a route
    after the node's gates have released its output."""
    found: dict[tuple[str, str], _Found] = {}
    for node, name, path, _ends in _compat.branch_paths(builder):
        finder = _Finder(seen, root=path, subgraphs=subgraphs)
        finder.walk(path, f"routing function {name!r} of {node!r}", depth)
        found[(node, name)] = finder.found
    return found
