"""Deprecated: ``guard()`` lives in :mod:`trustgate.graph` (and the root)."""

from trustgate._lazy import deprecated_module
from trustgate.graph import GuardedStateGraph, guard, guarded_nodes

__all__ = ["GuardedStateGraph", "guard", "guarded_nodes"]

deprecated_module("trustgate.wiring", "import guard and guarded_nodes from trustgate")
