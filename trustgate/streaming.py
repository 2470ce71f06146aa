"""Deprecated: a guarded graph holds its own streams; call ``graph.stream(...)``,
``graph.astream(...)`` or ``graph.astream_events(...)`` directly."""

from trustgate._deprecated import astream, astream_events, stream
from trustgate._lazy import deprecated_module

__all__ = ["astream", "astream_events", "stream"]

deprecated_module(
    "trustgate.streaming",
    "a guarded graph holds its own streams: call graph.stream(), graph.astream() or "
    "graph.astream_events() directly",
)
