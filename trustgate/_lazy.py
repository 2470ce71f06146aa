"""Lazy exports for the package root and the public families.

``import trustgate`` must cost next to nothing (a CLI, a pytest plugin or a web
handler that needs one pure function must not pay for LangGraph), so public names
are resolved on first use through a module ``__getattr__`` (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_module"]


def lazy_module(
    module: str,
    namespace: dict[str, Any],
    exports: Mapping[str, str],
    submodules: frozenset[str] = frozenset(),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``module``.

    ``exports`` maps a public name to the module that defines it; ``submodules`` are
    the public submodules ``module.name`` also reaches (imported on first access). A
    name is cached in the namespace once resolved, so it is looked up once.
    """

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is not None:
            value = getattr(importlib.import_module(target), name)
            namespace[name] = value
            return value
        if name in submodules:
            return importlib.import_module(f"{module}.{name}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        public = namespace.get("__all__", list(exports))
        return sorted({*public, *submodules})

    return __getattr__, __dir__
