"""``audit()``: find every node whose output is model output, and whether a gate stands on
each path out of it.

A crossing is a node whose output is model output. ``audit`` finds them

* **statically**: a chat/language model (``BaseLanguageModel``, also inside a
  ``RunnableBinding`` or ``RunnableSequence``), or an agent or compiled subgraph that
  contains one, reachable from the node's runnable — through a node function's
  closure, defaults, ``functools.partial`` arguments, bound ``self`` and the module
  globals its code names (a function that calls a module-level ``model.invoke(...)``
  is found);
* **dynamically**, when ``sample_input`` is given: the graph runs once on a copy with a
  fresh in-memory checkpointer, and a callback handler records which node
  (``langgraph_node`` / the top-level segment of ``langgraph_checkpoint_ns``) started a
  chat model or LLM run. The run may stop early (an interrupt, a halted gate, an
  error); what was seen until then is reported in ``AuditResult.sample_run``.

Never by node names: a model-calling node named ``step1`` is found, a node named
``llm`` that calls no model is not.

For each outgoing path (plain edge, waiting edge, every declared target of a
conditional branch, every ``Command`` destination declared in the node's ``ends``)
it says whether a gate stands on it: a gate node ``guard()`` inserted for that node
(``metadata["trustgate"]["guards"] == node``), or a ``TrustGateMiddleware`` with
model gates on a ``create_agent`` graph's ``after_model`` chain. A conditional
branch that declares no targets is reported with ``target=None`` (unknown).

Example:
    ```python
    import trustgate

    for crossing in trustgate.audit(app):
        if not crossing.guarded:
            print(crossing.node, [p.target for p in crossing.paths if not p.guarded])
    ```
"""

from __future__ import annotations

import asyncio
import functools
import sys
import types
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import RunnableConfig
from langgraph.constants import END
from pydantic import BaseModel, ConfigDict

from trustgate.errors import (
    ConfigurationError,
    GateHalted,
    LangGraphCompatibilityError,
    TrustgateError,
)

__all__ = ["AuditPath", "AuditResult", "AuditedCrossing", "SampleRun", "aaudit", "audit"]

PathKind = Literal["plain", "conditional", "waiting", "command"]
Detection = Literal["static", "sample_run", "static+sample_run"]

_MAX_DEPTH = 7
_MAX_ITEMS = 64
_MAX_OBJECTS = 20_000  # per node: a bound on the walk through large object graphs
_AFTER_MODEL = ("after_model", "aafter_model")
# library code whose module globals are not user wiring: walk their objects, but do
# not open the globals of their functions (that only finds the libraries' own imports)
_LIBRARY_PREFIXES = ("langgraph.", "langchain_core.", "pydantic", "typing", "abc")


class AuditPath(BaseModel):
    """One way a crossing's output leaves its node, and the gate (if any) standing on it.

    ``target`` is a node name, ``"__end__"``, or ``None`` when a conditional branch
    declares no targets (it may route anywhere). ``kind`` is how LangGraph routes it:
    ``plain`` edge, ``waiting`` (join) edge, ``conditional`` branch, or ``command``
    (a ``Command(goto=...)`` destination the node declared). ``gate`` names the gate(s)
    standing on the path; ``via`` the node that holds them (a gate node ``guard()``
    inserted, a ``TrustGateMiddleware`` node, a tool node with tool gates, or the
    subgraph node whose inner gates checked the output).

    Example:
        ```python
        open_paths = [p.target for p in crossing.paths if not p.guarded]
        ```
    """

    model_config = ConfigDict(frozen=True)

    target: str | None
    kind: PathKind
    guarded: bool
    gate: str | None = None
    via: str | None = None


class AuditedCrossing(BaseModel):
    """A node whose output is model output, with every path out of it.

    ``reason`` says how it was found (``static``, ``sample_run`` or both); ``detail``
    what was found (which model, through which reference), so a surprising entry can
    be traced to the line that holds the model. ``guarded`` is true only when a gate
    stands on every path; a node with no declared way out is reported with one
    unguarded path to ``"__end__"`` (its output stays in the state the caller reads).

    Example:
        ```python
        for c in trustgate.audit(app):
            print(c.node, c.reason, "guarded" if c.guarded else "OPEN", c.detail)
        ```
    """

    model_config = ConfigDict(frozen=True)

    node: str
    reason: Detection
    paths: tuple[AuditPath, ...]
    guarded: bool
    detail: tuple[str, ...] = ()


class SampleRun(BaseModel):
    """How the sample run went: ``finished``, ``interrupted``, ``halted`` or ``error``.

    A sample run that stopped early saw only the nodes before the stop, so the caller
    should know. ``model_nodes`` lists every top-level node seen starting a model run,
    gate nodes included (a blind verifier's model runs inside its gate; gates are
    never crossings).

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
    """Model runs whose metadata named no graph node (called outside the graph's
    tasks, or a LangGraph version that no longer tags runs with ``langgraph_node``)."""


class AuditResult(list[AuditedCrossing]):
    """The crossings (a list, node order), plus how the sample run went.

    A plain list of :class:`AuditedCrossing` so callers can iterate and compare it;
    ``sample_run`` is ``None`` when no sample input was given.

    Example:
        ```python
        result = trustgate.audit(builder)
        assert not result.unguarded, [c.node for c in result.unguarded]
        ```
    """

    sample_run: SampleRun | None = None

    @property
    def unguarded(self) -> list[AuditedCrossing]:
        """The crossings with at least one path no gate stands on."""
        return [c for c in self if not c.guarded]


# --- finding models inside a node's runnable ------------------------------------------


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


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


class _Finder:
    """Walks the object graph under a node's runnable looking for language models."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.models: list[str] = []
        self.inner_gates: list[str] = []

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
            self.models.append(f"{type(obj).__name__} ({where})")
            return
        if _is_boundary(obj):
            return
        if _is_state_graph(obj):
            self._subgraph(_builder_of(obj), where, depth)
            return
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

    def _function(self, fn: types.FunctionType, where: str, depth: int) -> None:
        name = getattr(fn, "__qualname__", fn.__name__)
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            self.walk(value, f"closure {var!r} of {name}", depth + 1)
        for value in fn.__defaults__ or ():
            self.walk(value, f"default argument of {name}", depth + 1)
        for var, value in (fn.__kwdefaults__ or {}).items():
            self.walk(value, f"default argument {var!r} of {name}", depth + 1)
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            self.walk(wrapped, where, depth + 1)
        if _is_library(str(getattr(fn, "__module__", "") or "")):
            return
        glb = fn.__globals__
        names = _code_names(fn.__code__)
        for var in sorted(names):
            if var not in glb:
                continue
            value = glb[var]
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

    def _attributes(self, obj: Any, where: str, depth: int) -> None:
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            for i, (k, v) in enumerate(attrs.items()):
                if i >= _MAX_ITEMS:
                    break
                self.walk(v, f"{where}.{k}" if depth else f"attribute {k!r}", depth + 1)
        cls = type(obj)
        if not str(cls.__module__).startswith(("langchain", "langgraph", "pydantic", "builtins")):
            # a user-defined callable object: its methods may use module globals
            for k, v in vars(cls).items():
                if isinstance(v, types.FunctionType):
                    self._function(v, f"method {cls.__name__}.{k}", depth + 1)

    def _subgraph(self, builder: Any, where: str, depth: int) -> None:
        inner = _static_crossings(builder, self.seen, depth + 1)
        if not inner:
            return
        open_ = [c for c in inner if not c.guarded]
        if open_:
            for c in open_:
                self.models.append(f"subgraph node {c.node!r}: {', '.join(c.detail)}")
        else:
            gates = sorted({p.gate for c in inner for p in c.paths if p.gate})
            self.inner_gates.append(", ".join(gates))


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
    meta = getattr(spec, "metadata", None) or {}
    return meta if isinstance(meta, Mapping) else {}


def _gate_info(spec: Any) -> Mapping[str, Any] | None:
    info = _meta(spec).get("trustgate")
    return info if isinstance(info, Mapping) else None


def _skipped(spec: Any) -> bool:
    """Gate nodes and the halt node are trustgate's, never crossings themselves."""
    return _gate_info(spec) is not None or bool(_meta(spec).get("trustgate_halt"))


def _middleware_hook(spec: Any) -> tuple[Any, str] | None:
    """(middleware, hook) when the node runs an ``after_model`` hook of agent middleware."""
    runnable = getattr(spec, "runnable", None)
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
    runnable = getattr(spec, "runnable", None)
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
    for start, end in sorted(builder.edges):
        if start == node:
            yield end, "plain"
    for starts, end in sorted(builder.waiting_edges, key=repr):
        if node in starts:
            yield end, "waiting"
    for _name, branch in sorted(builder.branches.get(node, {}).items()):
        ends = _targets(branch.ends)
        if not ends:
            yield None, "conditional"
        for end in dict.fromkeys(ends):
            yield end, "conditional"
    spec = builder.nodes.get(node)
    for end in dict.fromkeys(_targets(getattr(spec, "ends", None))):
        yield end, "command"


def _gate_paths(
    builder: Any, gate_node: str, guarded: str
) -> Iterator[tuple[str | None, PathKind]]:
    """The paths out of a gate ``guard()`` inserted, as the guarded node's paths.

    The gate re-issues the node's former plain edges as ``Command`` destinations; they
    are told apart from re-render targets and the halt node (which release nothing)
    through the gate node's own record of them when it is readable.
    """
    from trustgate.policy import Rerender
    from trustgate.wiring import HALT_NODE

    spec = builder.nodes[gate_node]
    owner = getattr(getattr(spec.runnable, "func", None), "__self__", None)
    successors = [str(s) for s in getattr(owner, "successors", ()) or ()]
    rerender = {
        p.to
        for g in getattr(owner, "gates", ()) or ()
        for p in getattr(g, "policies", ())
        if isinstance(p, Rerender)
    }
    for s in successors:
        yield s, "plain"
    for target, kind in _raw_paths(builder, gate_node):
        if target == HALT_NODE or (kind == "command" and target in successors):
            continue
        if kind == "command" and target in rerender and target == guarded:
            continue  # back to the producer with the issues: nothing released
        yield target, kind


def _paths(builder: Any, node: str) -> list[AuditPath]:
    out: list[AuditPath] = []
    seen: set[tuple[Any, ...]] = set()

    def add(path: AuditPath) -> None:
        key = (path.target, path.kind, path.via)
        if key not in seen:
            seen.add(key)
            out.append(path)

    def follow(source: str, gates: list[str], via: str | None, visited: set[str]) -> None:
        for target, kind in _raw_paths(builder, source):
            spec = builder.nodes.get(target) if target is not None else None
            info = _gate_info(spec) if spec is not None else None
            if target is not None and info is not None and info.get("guards") == node:
                names = [str(g) for g in info.get("gates") or [info.get("gate")]]
                for t2, k2 in _gate_paths(builder, target, node):
                    add(
                        AuditPath(
                            target=t2,
                            kind=k2,
                            guarded=True,
                            gate=", ".join(dict.fromkeys([*gates, *names])),
                            via=target,
                        )
                    )
                continue
            hook = _middleware_hook(spec) if spec is not None else None
            if target is not None and hook is not None and target not in visited:
                # create_agent: model → after_model hooks (last middleware first) → routing
                more = _model_gates(hook[0])
                follow(
                    target,
                    [*gates, *more],
                    target if more else via,
                    visited | {target},
                )
                continue
            tool_gates = _tool_gates(spec) if spec is not None and not gates else []
            if tool_gates:
                add(
                    AuditPath(
                        target=target,
                        kind=kind,
                        guarded=True,
                        gate=", ".join(tool_gates),
                        via=target,
                    )
                )
                continue
            add(
                AuditPath(
                    target=target,
                    kind=kind,
                    guarded=bool(gates),
                    gate=", ".join(dict.fromkeys(gates)) if gates else None,
                    via=via,
                )
            )

    follow(node, [], None, {node})
    return out


def _check(builder: Any) -> None:
    from trustgate.wiring import check_builder_internals

    check_builder_internals(builder)


def _static_crossings(
    builder: Any, seen: set[int] | None = None, depth: int = 0
) -> list[AuditedCrossing]:
    _check(builder)
    found: list[AuditedCrossing] = []
    for name, spec in builder.nodes.items():
        if _skipped(spec) or _middleware_hook(spec) is not None:
            continue
        finder = _Finder()
        if seen is not None:
            finder.seen = set(seen)  # what encloses this subgraph is not walked again
        finder.walk(spec.runnable, f"node {name!r}", depth)
        if finder.models or finder.inner_gates:
            found.append(_crossing(builder, name, "static", finder.models, finder.inner_gates))
    return found


def _crossing(
    builder: Any,
    node: str,
    reason: Detection,
    models: Iterable[str],
    inner_gates: Iterable[str] = (),
) -> AuditedCrossing:
    models, inner = list(models), [g for g in inner_gates if g]
    paths = _paths(builder, node)
    if not paths:
        # nowhere to go: the output stays in the final state the caller reads
        paths = [AuditPath(target=END, kind="plain", guarded=False)]
    detail = list(models)
    if inner and not models:
        # every model inside the subgraph is gated there: what leaves it was checked
        detail += [f"subgraph gated inside by {g}" for g in inner]
        gate = "; ".join(inner)
        paths = [
            p if p.guarded else p.model_copy(update={"guarded": True, "gate": gate, "via": node})
            for p in paths
        ]
    return AuditedCrossing(
        node=node,
        reason=reason,
        paths=tuple(paths),
        guarded=all(p.guarded for p in paths),
        detail=tuple(detail),
    )


# --- the sample run ----------------------------------------------------------------------


class _ModelCalls(BaseCallbackHandler):
    """Records the top-level node that started each chat model / LLM run."""

    raise_error = False
    run_inline = True

    def __init__(self) -> None:
        self.nodes: dict[str, int] = {}
        self.unattributed = 0

    def _record(self, metadata: Mapping[str, Any] | None) -> None:
        md = metadata or {}
        ns = md.get("langgraph_checkpoint_ns") or md.get("checkpoint_ns")
        node = md.get("langgraph_node")
        if isinstance(ns, str) and ns:
            node = ns.split("|", 1)[0].split(":", 1)[0] or node
        if isinstance(node, str) and node:
            self.nodes[node] = self.nodes.get(node, 0) + 1
        else:
            self.unattributed += 1

    def on_chat_model_start(self, serialized: dict[str, Any], messages: Any, **kwargs: Any) -> None:
        self._record(kwargs.get("metadata"))

    def on_llm_start(self, serialized: dict[str, Any], prompts: Any, **kwargs: Any) -> None:
        self._record(kwargs.get("metadata"))


_Outcome = Literal["finished", "interrupted", "halted", "error"]


class _Run:
    """One sample run on a copy: fresh in-memory checkpointer, a new thread, a handler."""

    def __init__(self, graph: Any, config: RunnableConfig | None) -> None:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph.state import CompiledStateGraph

        if isinstance(graph, CompiledStateGraph):
            update: dict[str, Any] = {"checkpointer": InMemorySaver()}
            if graph.store is not None:
                from langgraph.store.memory import InMemoryStore

                update["store"] = InMemoryStore()  # the user's store gets no sample writes
            self.app: Any = graph.copy(update)
        else:
            self.app = _copy_for_compile(graph).compile(checkpointer=InMemorySaver())
        self.handler = _ModelCalls()
        cfg: dict[str, Any] = dict(config or {})
        cfg["callbacks"] = [*(_callbacks(cfg.get("callbacks"))), self.handler]
        self.configurable = dict(cfg.get("configurable") or {})
        self.configurable["thread_id"] = f"trustgate-audit-{uuid.uuid4().hex}"
        cfg["configurable"] = self.configurable
        self.config = cast(RunnableConfig, cfg)

    def ended(self, out: Any) -> tuple[_Outcome, str]:
        if isinstance(out, Mapping) and out.get("__interrupt__"):
            return "interrupted", "the run paused at an interrupt"
        snapshot = self.app.get_state(RunnableConfig(configurable=self.configurable))
        if snapshot.next:
            return "interrupted", f"the run paused before {', '.join(snapshot.next)}"
        return "finished", ""

    @staticmethod
    def failed(exc: BaseException) -> tuple[_Outcome, str]:
        from langgraph.errors import GraphInterrupt

        if isinstance(exc, GateHalted):
            return "halted", str(exc)
        if isinstance(exc, GraphInterrupt):
            return "interrupted", "the run paused at an interrupt"
        return "error", f"{type(exc).__name__}: {exc}"

    def result(self, outcome: _Outcome, detail: str) -> tuple[dict[str, int], SampleRun]:
        return dict(self.handler.nodes), SampleRun(
            outcome=outcome,
            detail=detail.splitlines()[0] if detail else "",
            model_nodes=tuple(self.handler.nodes),
            unattributed=self.handler.unattributed,
        )


def _sample_run(
    graph: Any, sample_input: Any, config: RunnableConfig | None
) -> tuple[dict[str, int], SampleRun]:
    try:
        run = _Run(graph, config)
    except TrustgateError:
        raise
    except Exception as exc:  # e.g. a builder that does not compile
        return {}, SampleRun(outcome="error", detail=f"{type(exc).__name__}: {exc}"[:500])
    try:
        outcome, detail = run.ended(run.app.invoke(sample_input, run.config))
    except Exception as exc:  # the sample run is best effort: report what was seen
        outcome, detail = run.failed(exc)
    return run.result(outcome, detail)


async def _asample_run(
    graph: Any, sample_input: Any, config: RunnableConfig | None
) -> tuple[dict[str, int], SampleRun]:
    try:
        run = _Run(graph, config)
    except TrustgateError:
        raise
    except Exception as exc:  # e.g. a builder that does not compile
        return {}, SampleRun(outcome="error", detail=f"{type(exc).__name__}: {exc}"[:500])
    try:
        outcome, detail = run.ended(await run.app.ainvoke(sample_input, run.config))
    except Exception as exc:  # the sample run is best effort: report what was seen
        outcome, detail = run.failed(exc)
    return run.result(outcome, detail)


def _async_only(builder: Any) -> bool:
    """True when some node has only an async implementation (sync ``invoke`` fails)."""
    for spec in builder.nodes.values():
        runnable = spec.runnable
        if hasattr(runnable, "afunc") and getattr(runnable, "func", True) is None:
            return True
    return False


def _callbacks(existing: Any) -> list[Any]:
    if existing is None:
        return []
    if isinstance(existing, list):
        return list(existing)
    raise ConfigurationError("audit(): pass config callbacks as a list of handlers")


def _copy_for_compile(builder: Any) -> Any:
    """A copy of the builder to compile for the sample run (compiling mutates it)."""
    from trustgate.wiring import _copy_builder

    return _copy_builder(builder)


# --- audit --------------------------------------------------------------------------------


def audit(
    graph: Any, sample_input: Any = None, *, config: RunnableConfig | None = None
) -> AuditResult:
    """Every node whose output is model output, and whether a gate stands on each path.

    ``graph`` is a ``StateGraph`` builder or a compiled graph (it is not modified). With
    ``sample_input`` the graph also runs once on a copy (fresh in-memory checkpointer,
    ``config`` merged in) and nodes seen starting a model run are added; the run may
    stop early, ``result.sample_run`` says how it ended. A graph with async-only nodes
    is run with ``asyncio.run`` (inside a running event loop, use :func:`aaudit`).

    Example:
        ```python
        result = trustgate.audit(app, {"messages": [{"role": "user", "content": "hi"}]})
        assert not result.unguarded, [c.node for c in result.unguarded]
        ```
    """
    builder = _builder_of(graph)
    _check(builder)
    dynamic: dict[str, int] = {}
    run: SampleRun | None = None
    if sample_input is not None:
        if _async_only(builder) and not _loop_running():
            dynamic, run = asyncio.run(_asample_run(graph, sample_input, config))
        else:
            dynamic, run = _sample_run(graph, sample_input, config)
    return _combine(graph, builder, dynamic, run)


async def aaudit(
    graph: Any, sample_input: Any = None, *, config: RunnableConfig | None = None
) -> AuditResult:
    """:func:`audit` with the sample run through ``ainvoke`` (for async graphs).

    Example:
        ```python
        result = await trustgate.aaudit(app, {"messages": []})
        ```
    """
    builder = _builder_of(graph)
    _check(builder)
    dynamic: dict[str, int] = {}
    run: SampleRun | None = None
    if sample_input is not None:
        dynamic, run = await _asample_run(graph, sample_input, config)
    return _combine(graph, builder, dynamic, run)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _combine(
    graph: Any, builder: Any, dynamic: Mapping[str, int], run: SampleRun | None
) -> AuditResult:
    # a node that refers to the audited graph itself (``app.get_state``) is not a
    # subgraph of it
    roots = {id(graph), id(builder)}
    static = {c.node: c for c in _static_crossings(builder, roots)}
    result = AuditResult()
    for name, spec in builder.nodes.items():
        seen_run = name in dynamic and not _skipped(spec) and _middleware_hook(spec) is None
        if name in static:
            crossing = static[name]
            if seen_run:
                crossing = crossing.model_copy(update={"reason": "static+sample_run"})
            result.append(crossing)
        elif seen_run:
            calls = dynamic[name]
            result.append(
                _crossing(builder, name, "sample_run", [f"{calls} model run(s) in the sample run"])
            )
    result.sample_run = run
    return result
