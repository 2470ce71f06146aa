"""Kept for older code: a guarded graph holds its own streams.

A guarded node runs with every streaming sink replaced by a buffer until its gates
decide (see :mod:`trustgate.graph._streams`), so ``graph.stream``, ``graph.astream``
and ``graph.astream_events`` of any graph that contains a guarded node never show what
a gate has not released. These functions call exactly those.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

__all__ = ["astream", "astream_events", "stream"]


def stream(graph: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``graph.stream(...)``."""
    return iter(graph.stream(*args, **kwargs))


def astream(graph: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
    """``graph.astream(...)``."""
    return graph.astream(*args, **kwargs)  # type: ignore[no-any-return]


def astream_events(graph: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
    """``graph.astream_events(...)``."""
    return graph.astream_events(*args, **kwargs)  # type: ignore[no-any-return]
