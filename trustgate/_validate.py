"""Checks of what a user passes when building gates, readers, policies and verifiers.

A gate built from nonsense must fail where it is built, with a message that says what
was expected, never later at run time (a ``timeout=float("nan")`` that makes every
crossing a time-out) or never at all (``policy=Halt``, the class, silently accepted).
Each helper raises :class:`~trustgate.errors.ConfigurationError` naming the owner, the
argument and what it takes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trustgate.errors import ConfigurationError

__all__ = ["count", "not_a_class", "optional_text", "seconds", "strings", "text"]


def _show(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:59] + "…"


def text(owner: str, name: str, value: Any) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{owner}: {name} must be a non-empty string, not {_show(value)}")
    return value


def optional_text(owner: str, name: str, value: Any) -> str | None:
    return None if value is None else text(owner, name, value)


def seconds(owner: str, name: str, value: Any, *, optional: bool = False) -> float | None:
    """A finite, positive number of seconds (``None`` allowed when ``optional``)."""
    if value is None and optional:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigurationError(
            f"{owner}: {name} must be a positive, finite number of seconds, not {_show(value)}"
        )
    return float(value)


def count(owner: str, name: str, value: Any, *, minimum: int = 0) -> int:
    """A whole number at least ``minimum`` (``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(
            f"{owner}: {name} must be a whole number >= {minimum}, not {_show(value)}"
        )
    return value


def strings(owner: str, name: str, value: Any, *, allow_one: bool = True) -> tuple[str, ...]:
    """A sequence of non-empty strings (one string counts as one, if ``allow_one``)."""
    if isinstance(value, str):
        if not allow_one:
            raise ConfigurationError(
                f"{owner}: {name} must be a list of strings, not the string {_show(value)}"
            )
        value = [value]
    if not isinstance(value, Sequence) and not isinstance(value, (set, frozenset)):
        raise ConfigurationError(f"{owner}: {name} must be a list of strings, not {_show(value)}")
    items = list(value)
    bad = [v for v in items if not isinstance(v, str) or not v.strip()]
    if bad:
        raise ConfigurationError(
            f"{owner}: {name} must hold non-empty strings, not {_show(bad[0])}"
        )
    return tuple(items)


def not_a_class(owner: str, name: str, value: Any, what: str) -> None:
    """Refuse a class where an instance is wanted (``policy=Halt`` for ``Halt()``)."""
    if isinstance(value, type):
        raise ConfigurationError(
            f"{owner}: {name} takes {what} instance, not the class {value.__name__}: "
            f"write {value.__name__}(...)"
        )
