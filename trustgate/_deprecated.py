"""Old calls with no place in this release's API, kept until the next one.

A guarded graph holds its own streams (a guarded node buffers what it streams until
its gates decide; see :mod:`trustgate.graph._streams`), so the stream helpers of the
previous release are now exactly the graph's own methods. ``trustgate.stream`` and
``trustgate.streaming`` reach them with a DeprecationWarning.
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
