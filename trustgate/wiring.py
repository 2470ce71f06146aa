"""Kept for older imports: ``guard()`` lives in :mod:`trustgate.graph`."""

from trustgate.graph import GuardedStateGraph, guard, guarded_nodes

__all__ = ["GuardedStateGraph", "guard", "guarded_nodes"]
