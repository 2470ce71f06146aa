"""Lazy exports and deprecated names, for the package root and the public families.

``import trustgate`` must cost next to nothing (a CLI, a pytest plugin or a web
handler that needs one pure function must not pay for LangGraph), so public names
are resolved on first use through a module ``__getattr__`` (PEP 562). Names that
moved keep working for one release with a :class:`DeprecationWarning` that names
their new place.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["deprecated_module", "lazy_module"]


def _warn(message: str, stacklevel: int) -> None:
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)


def deprecated_module(old: str, advice: str) -> None:
    """Warn, from a shim module's body, that importing ``old`` is deprecated.

    The warning is attributed to the code that imported the shim (past the shim's body;
    ``warnings`` skips the import machinery's frames), so Python's default filter shows
    it to a script that imports it.
    """
    _warn(f"{old} is deprecated and will be removed: {advice}", stacklevel=3)


def lazy_module(
    module: str,
    namespace: dict[str, Any],
    exports: Mapping[str, str],
    deprecated: Mapping[str, tuple[str, str, str]] | None = None,
    submodules: frozenset[str] = frozenset(),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``module``.

    ``exports`` maps a public name to the module that defines it; ``deprecated`` maps
    an old name to ``(defining module, attribute, advice)``, the advice saying where
    it lives now (an empty attribute names a deprecated submodule, which warns
    itself); ``submodules`` are the public submodules ``module.name`` also reaches
    (imported on first access). A public name is cached in the namespace once
    resolved; a deprecated one is not, so every use of it warns.
    """

    moved = dict(deprecated or {})

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is not None:
            value = getattr(importlib.import_module(target), name)
            namespace[name] = value
            return value
        old = moved.get(name)
        if old is not None:
            where, attr, advice = old
            if not attr:  # a deprecated submodule: its import warns
                return importlib.import_module(where)
            _warn(f"{module}.{name} is deprecated and will be removed: {advice}", stacklevel=2)
            return getattr(importlib.import_module(where), attr)
        if name in submodules:
            return importlib.import_module(f"{module}.{name}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        public = namespace.get("__all__", list(exports))
        return sorted({*public, *submodules})

    return __getattr__, __dir__
