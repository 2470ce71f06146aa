"""LangGraph's and LangChain's internals are reached through ``trustgate/_compat.py``
only: a new LangGraph minor then breaks in one module, and ``_compat.check()`` (run by
``guard()``) names what broke before a run starts. Any other module of the package that
imports a private LangGraph/LangChain module, the config context variable LangChain
keeps for the running runnable, or one of the private attributes ``_compat`` reads on
LangGraph objects fails here.

The scan reads the code (imports, names, attributes, and the strings given to
``getattr``/``hasattr``/``setattr``), not docstrings or comments, which may name an
internal to explain behaviour."""

from __future__ import annotations

import ast
import contextvars
from pathlib import Path

import pytest

import trustgate
from trustgate import _compat
from trustgate.errors import LangGraphCompatibilityError

PACKAGE = Path(trustgate.__file__).parent
COMPAT = PACKAGE / "_compat.py"

# names private to LangGraph / LangChain that trustgate relies on (see _compat)
PRIVATE_NAMES = frozenset(
    {
        "var_child_runnable_config",
        "_update_as_tuples",
        "_state_mapper",
        "_put_checkpoint_fut",
        "_output_mapper",
        "_node_defaults",
        "_add_schema",
        "_init_chat_model_helper",
        "_chain_model_call_handlers",
        "_runnable_has_native_async",
        "_StreamingCallbackHandler",
        "recast_checkpoint_ns",
        "get_update_as_tuples",
    }
)
THIRD_PARTY = ("langgraph", "langchain", "langchain_core")


def _private_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in THIRD_PARTY and any(p.startswith("_") for p in parts[1:])


def _uses(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if _private_module(node.module):
                found.append((node.lineno, f"imports {node.module}"))
            elif node.module.split(".")[0] in THIRD_PARTY:
                found.extend(
                    (node.lineno, f"imports {a.name} from {node.module}")
                    for a in node.names
                    if a.name in PRIVATE_NAMES
                )
        elif isinstance(node, ast.Import):
            found.extend(
                (node.lineno, f"imports {a.name}") for a in node.names if _private_module(a.name)
            )
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_NAMES:
            found.append((node.lineno, f"reads .{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in PRIVATE_NAMES:
            found.append((node.lineno, f"names {node.id}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr", "setattr"}
        ):
            for arg in node.args[1:2]:
                if isinstance(arg, ast.Constant) and arg.value in PRIVATE_NAMES:
                    found.append((node.lineno, f"{node.func.id}(..., {arg.value!r})"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and " " not in node.value
            and _private_module(node.value)
        ):  # a module path spelt as a string (sys.modules.get(...), importlib)
            found.append((node.lineno, f"names the module {node.value!r}"))
    return found


def test_no_module_but_compat_reaches_a_langgraph_or_langchain_internal() -> None:
    _the_scan_sees_each_kind_of_use()
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == COMPAT:
            continue
        for line, what in _uses(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {what}")
    assert offenders == []


def _the_scan_sees_each_kind_of_use() -> None:
    """The scan is not blind: each way of reaching an internal is reported."""
    code = (
        "from langchain_core.runnables.config import var_child_runnable_config\n"
        "from langgraph._internal._constants import CONF\n"
        "import langgraph.pregel._utils\n"
        "x = builder._add_schema\n"
        "y = getattr(cmd, '_update_as_tuples', None)\n"
        "z = sys.modules.get('langchain_core.tracers._streaming')\n"
        '"""A docstring may name langgraph.pregel._messages and var_child_runnable_config."""\n'
    )
    kinds = [what.split()[0] for _, what in sorted(_uses(ast.parse(code)))]
    assert kinds == ["imports", "imports", "imports", "reads", "getattr(...,", "names"]


def test_compat_check_covers_the_running_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """``check()`` (run by ``guard()``) refuses a LangChain whose running-config holder
    is not the context variable ``_compat`` sets and resets."""
    import langchain_core.runnables.config as lc_config

    _compat.check()
    monkeypatch.setattr(lc_config, "var_child_runnable_config", object())
    with pytest.raises(LangGraphCompatibilityError, match="var_child_runnable_config"):
        _compat.check()


def test_config_as_sets_and_restores_the_running_config() -> None:
    ctx = contextvars.copy_context()

    def body() -> None:
        outer = {"configurable": {"x": 1}}
        token = _compat.set_config(outer)
        with _compat.config_as({"configurable": {"x": 2}}):
            assert _compat.current_config() == {"configurable": {"x": 2}}
            with _compat.config_as(None):
                assert _compat.current_config() is None
        assert _compat.current_config() == outer
        _compat.reset_config(token)

    ctx.run(body)
