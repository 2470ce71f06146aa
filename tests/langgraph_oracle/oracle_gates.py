"""The always-pass gates the oracle puts on every node, built in one place.

Only :func:`always_pass_gate` and :func:`already_guarded` know the gate API; the rest
of the oracle goes through them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from trustgate import Finding, FunctionVerifier, TrustGate
from trustgate.readers import Read

logger = logging.getLogger(__name__)


class _EveryPart:
    """A reader that reads every part of the node's output (the ledger's ids as its
    claims): nothing is declared, so the node keeps every holding mechanism on
    (store writes, tasks run in line, callback handlers and streams held)."""

    target = "everything"

    def read_output(self, output: Any) -> Read:
        parts = [p.id for p in output.ledger()]
        if not parts:
            return Read(None, frozenset({"*"}), "everything", "nothing", "the node emitted nothing")
        return Read(parts, frozenset({"*"}), "everything")

    def read(self, update: Any) -> Any:
        return None


def _passes(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("always_pass")]


def always_pass_gate(node: Any) -> TrustGate:
    """A strict gate on ``node`` that reads and verifies every part the node emits and
    passes it. It declares only what no reader can read: the steps of a subgraph inside
    the node (``subgraph``) and an exception's message (``error``). A gate with
    ``passthrough="*"`` would put the node in the non-strict mode and leave the holding
    machinery untested."""
    return TrustGate(
        f"pass_{node}",
        reads=_EveryPart(),
        verifiers=[FunctionVerifier(_passes, name="always_pass")],
        passthrough=["subgraph", "error"],
    )


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
