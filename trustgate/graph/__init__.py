"""Gates inside LangGraph graphs: :func:`guard` and what it put where.

``guard(graph, {node: gate})`` puts gates on nodes of an existing graph. Each gate
runs inside its node's own task, so there is no extra step, no staging channel and
no change to the graph's edges; everything the node emits (state writes, routes,
``Send`` arguments, handoffs to a parent graph, stream output) is held until the
gates release it.
"""

from trustgate.graph._guard import GuardedStateGraph, guard, guarded_nodes

__all__ = ["GuardedStateGraph", "guard", "guarded_nodes"]
