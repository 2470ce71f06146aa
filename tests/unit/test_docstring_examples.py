"""Every ``Example:`` in the public API's docstrings compiles, uses only APIs that
exist, and runs where it is self-contained.

Which docstrings: the public modules (the root and the families of the API reference),
each name in their ``__all__``, and the public methods of those classes: what the API
reference renders. Examples are written as if the root's names and the module's own
public names were imported (``Override("review.verdict", ...)`` in
``trustgate.policies``), so those are what an example may use without importing.

For each fenced example:

* it compiles (top-level ``await`` allowed: an async example shows what a coroutine
  does);
* every ``trustgate`` import and attribute it names exists, and every call to a
  trustgate callable binds its keyword arguments (``TrustGate(reader=...)`` fails);
* when it is self-contained (every name it reads is bound in it, a builtin, or one of
  the names above, and it holds no ``...`` placeholder) it runs, offline, in a temporary
  working directory holding the default database (as after a first run).

An example that fragments a bigger program (``graph.invoke(inputs, config)``) is only
compiled and checked; the tests count both kinds so neither can silently drop to none.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import importlib
import inspect
import re
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import trustgate
from trustgate.persistence import connect

PUBLIC_MODULES = (
    "trustgate",
    "trustgate.files",
    "trustgate.drafts",
    "trustgate.contracts",
    "trustgate.graph",
    "trustgate.policies",
    "trustgate.readers",
    "trustgate.errors",
    "trustgate.otel",
    "trustgate.persistence",
    "trustgate.server",
    "trustgate.testing",
    "trustgate.pipelines",
    "trustgate.pipelines.code_review",
    "trustgate.pipelines.investigation",
    "trustgate.pipelines.postmortem",
    "trustgate.pipelines.compliance",
)

SECTION = re.compile(r"^Examples?:[ \t]*\n(?P<body>(?:[ \t]+.*\n|[ \t]*\n)+)", re.M)
FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.S)


@dataclass(frozen=True)
class Example:
    module: str
    owner: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.module}:{self.owner}"


def _public_objects(module: types.ModuleType) -> Iterator[tuple[str, Any]]:
    yield module.__name__, module
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        yield name, obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                target = member.fget if isinstance(member, property) else member
                target = getattr(target, "__func__", target)
                if callable(target) or isinstance(member, property):
                    yield f"{name}.{attr}", target


def _examples() -> list[Example]:
    found: list[Example] = []
    seen: set[str] = set()
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for owner, obj in _public_objects(module):
            doc = getattr(obj, "__doc__", None)  # its own: an inherited one is not rendered
            if not isinstance(doc, str) or not doc:
                continue
            doc = inspect.cleandoc(doc)
            for section in SECTION.finditer(doc + "\n"):
                body = textwrap.dedent(section.group("body"))
                for fence in FENCE.finditer(body):
                    code = textwrap.dedent(fence.group("code"))
                    if code in seen:  # one object, exported from two modules
                        continue
                    seen.add(code)
                    found.append(Example(modname, owner, code))
    return found


EXAMPLES = _examples()


def _namespace(example: Example) -> dict[str, Any]:
    """The names an example may use without importing them."""
    ns: dict[str, Any] = {"trustgate": trustgate}
    for name in trustgate.__all__:
        ns[name] = getattr(trustgate, name)
    module = importlib.import_module(example.module)
    for name in getattr(module, "__all__", ()):
        ns[name] = getattr(module, name)
    return ns


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _free_names(tree: ast.AST) -> set[str]:
    loaded = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return loaded - _bound_names(tree) - set(dir(builtins))


def _self_contained(tree: ast.AST, ns: dict[str, Any]) -> bool:
    placeholder = any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(tree))
    return not placeholder and _free_names(tree) <= set(ns)


def _compile(code: str, where: str) -> types.CodeType:
    return compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _resolve(node: ast.expr, ns: dict[str, Any]) -> Any:
    """The trustgate object a ``Name`` or dotted ``Attribute`` names, or None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in ns:
        return None
    obj = ns[node.id]
    for part in reversed(parts):
        if not hasattr(obj, part):
            if getattr(obj, "__name__", "").startswith("trustgate"):
                raise AssertionError(f"{obj.__name__} has no attribute {part!r}")
            return None
        obj = getattr(obj, part)
    return obj


def _check_api(tree: ast.AST, ns: dict[str, Any], where: str) -> None:
    """Imports, attributes and call keywords of trustgate's API exist.

    A name an example reads without defining it is either one it may use (see the
    module docstring) or a placeholder for the reader's own object, spelled in
    lower case (``graph``, ``config``, ``verifier_model``): a capitalised unknown name
    (``ContractCheck()``) is an API that does not exist.
    """
    unknown = sorted(n for n in _free_names(tree) - set(ns) if n != n.lower())
    assert not unknown, f"{where}: {unknown} are neither trustgate names nor defined in it"
    local = dict(ns)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trustgate"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                assert hasattr(module, alias.name), f"{where}: {node.module} has no {alias.name}"
                local[alias.asname or alias.name] = getattr(module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("trustgate"):
                    importlib.import_module(alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            try:
                _resolve(node, local)
            except AssertionError as exc:
                raise AssertionError(f"{where}: {exc}") from None
        if not isinstance(node, ast.Call):
            continue
        fn = _resolve(node.func, local)
        module = getattr(fn, "__module__", "") or ""
        if fn is None or not module.startswith("trustgate") or not callable(fn):
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            continue
        try:
            sig.bind_partial(
                *[None] * len(node.args), **{k.arg: None for k in node.keywords if k.arg}
            )
        except TypeError as exc:
            raise AssertionError(
                f"{where}: {ast.unparse(node)[:120]} does not match "
                f"{getattr(fn, '__qualname__', fn)}{sig}: {exc}"
            ) from None


def test_examples_were_found() -> None:
    runnable = [e for e in EXAMPLES if _self_contained(ast.parse(e.code), _namespace(e))]
    assert len(EXAMPLES) >= 40, len(EXAMPLES)
    assert len(runnable) >= 15, [e.id for e in runnable]


@pytest.mark.filterwarnings("error::DeprecationWarning")  # examples teach today's API
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = f"the Example of {example.id}"
    code = _compile(example.code, where)
    tree = ast.parse(example.code)
    ns = _namespace(example)
    _check_api(tree, ns, where)
    if not _self_contained(tree, ns):
        return
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)
    monkeypatch.delenv("TRUSTGATE_DATABASE_URL", raising=False)
    connect().close()  # the default database, as after a first run
    run_ns = {**ns, "__name__": "docstring_example"}
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, run_ns))
    else:
        exec(code, run_ns)


def test_api_docs_name_scenarios_by_what_they_do() -> None:
    """The API reference renders these docstrings: no internal system names in them."""
    from test_docs import INTERNAL

    hits = []
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for owner, obj in _public_objects(module):
            doc = getattr(obj, "__doc__", None)
            if isinstance(doc, str):
                hits += [f"{modname}:{owner}: {m.group(0)}" for m in INTERNAL.finditer(doc)]
    assert not hits, hits
