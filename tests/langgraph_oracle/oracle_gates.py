"""The always-pass gates the oracle puts on every node, built in one place.

The gate API is being reworked (a gate that runs inside the guarded node's task,
with a ``passthrough=`` declaration for output it does not verify). Only
:func:`always_pass_gate` and :func:`already_guarded` know that API; the rest of
the oracle goes through them, so the rework changes two small functions here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from trustgate import TrustGate

logger = logging.getLogger(__name__)


def always_pass_gate(node: Any) -> TrustGate:
    """A gate on ``node`` that reads nothing, verifies nothing and lets everything the
    node emits through (declared, so it passes)."""
    return TrustGate(f"pass_{node}", reads=None, passthrough="*")


def gates_for(node_names: Any) -> dict[Any, TrustGate]:
    """One always-pass gate per user node.

    START/END are not in a builder's nodes; names LangGraph reserves (``__x__``, e.g.
    the ``__default_error_handler__`` node ``compile()`` adds to the builder for
    ``node_defaults(error_handler=...)``) are LangGraph's, not the user's.
    """
    return {
        name: always_pass_gate(name)
        for name in node_names
        if not (str(name).startswith("__") and str(name).endswith("__"))
    }


def already_guarded(graph: Any) -> bool:
    """True when ``guard()`` already wired gates into ``graph`` (a builder or a
    compiled graph): such a graph is compiled again by guard() itself, or by a test
    that recompiles ``graph.builder``, and must not get gates on its gates."""
    from trustgate.graph import guarded_nodes

    nodes = guarded_nodes(graph)
    return isinstance(nodes, Mapping) and bool(nodes)
