"""Where evidence comes from: which nodes of a graph a model can write through.

Evidence a model can write is no evidence: a deep agent's model writes the fabricated
line into its virtual filesystem with a ``write_file`` tool, then cites it, and a gate
reading ``FromState("files")`` verifies the quote against the model's own words. So
``guard()`` asks, for each state key a gate takes evidence from, which *other* nodes
carry model output or run model-chosen tools and can write that key; any such writer
refuses the gate unless the key is marked trusted (the guarded node's own writes to it
are held at the crossing as ``evidence_rewritten``).

"Can write" is read from the code, not guessed from names: the keys a node's function
puts in the dicts it builds (``{"files": ...}``, ``Command(update={...})``,
``update["files"] = ...``), in its own code and the functions it calls; a tool node's
tools likewise; a subgraph its output channels. Code that cannot be read (no source, a
key computed at run time, a dict merged in with ``**``) can write any key.
"""

from __future__ import annotations

import ast
import functools
import inspect
import logging
import textwrap
import types
from typing import Any

from trustgate import _compat

__all__ = ["Provenance"]

logger = logging.getLogger(__name__)

_MAX_DEPTH = 4
_ANY: frozenset[str] | None = None  # any key


def _source_keys(fn: types.FunctionType) -> tuple[set[str], bool, set[str]]:
    """(keys the function's code writes, whether it may write keys it does not name,
    names of the other functions it calls)."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError) as exc:
        logger.debug("no source for %r (%s): it may write any key", fn, exc)
        return set(), True, set()
    keys: set[str] = set()
    dynamic = False
    calls: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k in node.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    keys.add(k.value)
                else:  # ``{**update}``, ``{name: value}``: keys decided at run time
                    dynamic = True
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                keys.add(node.slice.value)
            else:
                dynamic = True
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in ("dict", "Command", "update", "setdefault"):
                for kw in node.keywords:
                    if kw.arg is None:
                        dynamic = True
                    elif name != "Command":
                        keys.add(kw.arg)
                if name in ("update", "setdefault") and node.args:
                    first = node.args[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        keys.add(first.value)
            if isinstance(func, ast.Name):
                calls.add(func.id)
    return keys, dynamic, calls


class _Writes:
    """The keys the code under one node can write (``None``: any)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def of(self, obj: Any, depth: int = 0) -> frozenset[str] | None:
        if obj is None or depth > _MAX_DEPTH or id(obj) in self.seen:
            return frozenset()
        self.seen.add(id(obj))
        from langgraph.prebuilt import ToolNode

        if isinstance(obj, ToolNode):
            found: set[str] = {str(getattr(obj, "messages_key", "messages"))}
            for t in (getattr(obj, "tools_by_name", None) or {}).values():
                inner = self.of_tool(t, depth + 1)
                if inner is None:
                    return _ANY
                found |= inner
            return frozenset(found)
        out = _compat.output_keys(obj)
        if out is not None:
            return out
        if isinstance(obj, functools.partial):
            return self.of(obj.func, depth + 1)
        if isinstance(obj, types.MethodType):
            return self.of(obj.__func__, depth + 1)
        if isinstance(obj, types.FunctionType):
            return self.of_function(obj, depth)
        wrapped = [f for f in (getattr(obj, a, None) for a in ("func", "afunc")) if f is not None]
        if wrapped:
            return self._union([self.of(f, depth + 1) for f in wrapped])
        method = vars(type(obj)).get("__call__")
        if isinstance(method, types.FunctionType):
            return self.of_function(method, depth)
        return _ANY

    def of_tool(self, t: Any, depth: int) -> frozenset[str] | None:
        fns = [getattr(t, a, None) for a in ("func", "coroutine")]
        fns = [f for f in fns if f is not None]
        if not fns:
            return _ANY
        return self._union([self.of(f, depth) for f in fns])

    def of_function(self, fn: types.FunctionType, depth: int) -> frozenset[str] | None:
        keys, dynamic, calls = _source_keys(fn)
        if dynamic:
            return _ANY
        found = set(keys)
        scope: dict[str, Any] = dict(fn.__globals__)
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                scope[var] = cell.cell_contents
            except ValueError:  # an empty cell
                continue
        for name in sorted(calls):
            callee = scope.get(name)
            if isinstance(callee, (types.FunctionType, functools.partial, types.MethodType)):
                inner = self.of(callee, depth + 1)
                if inner is None:
                    return _ANY
                found |= inner
        return frozenset(found)

    @staticmethod
    def _union(parts: list[frozenset[str] | None]) -> frozenset[str] | None:
        if any(p is None for p in parts):
            return _ANY
        return frozenset().union(*(p for p in parts if p is not None))


def _model_driven(builder: Any) -> dict[str, str]:
    """Nodes that carry model output (they call a model) or run model-chosen tools,
    with why."""
    from langgraph.prebuilt import ToolNode

    from trustgate._audit._crossings import _static_crossings
    from trustgate._audit._discovery import _find

    out: dict[str, str] = {}
    for name, found in _find(builder, None, 0, _static_crossings).items():
        if found.models:
            out[name] = f"calls a model ({found.models[0]})"
        elif found.unknown:
            out[name] = f"may call a model ({found.unknown[0]})"
    for name, spec in _compat.node_specs(builder).items():
        runnable = _compat.node_runnable(spec)
        if isinstance(runnable, ToolNode) or _compat.tool_nodes(runnable):
            out.setdefault(name, "runs tools the model chooses")
    return out


class Provenance:
    """Which nodes of one graph a model can write evidence through (computed once)."""

    def __init__(self, builder: Any) -> None:
        self.builder = builder
        self._driven: dict[str, str] | None = None
        self._writes: dict[str, frozenset[str] | None] = {}

    def model_writers(self, key: str, *, besides: str) -> dict[str, str]:
        """The nodes other than ``besides`` that carry model output or run model-chosen
        tools and can write ``key``: node → why."""
        if self._driven is None:
            self._driven = _model_driven(self.builder)
        specs = _compat.node_specs(self.builder)
        found: dict[str, str] = {}
        for name, why in self._driven.items():
            if name == besides or name not in specs:
                continue
            if name not in self._writes:
                self._writes[name] = _Writes().of(_compat.node_runnable(specs[name]))
            writes = self._writes[name]
            if writes is None:
                found[name] = f"{why}, and its code can write any key"
            elif key in writes:
                found[name] = f"{why}, and its code writes {key!r}"
        return found
