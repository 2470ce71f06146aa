"""Gates inside LangGraph graphs: :func:`guard`, :func:`audit`, the ``create_agent``
middleware, and the state channel reports land in.

``guard(graph, {node: gate})`` puts gates on nodes of an existing graph. Each gate
runs inside its node's own task, so there is no extra step, no staging channel and
no change to the graph's edges; everything the node emits (state writes, routes,
``Send`` arguments, handoffs to a parent graph, stream output) is held until the
gates release it. :func:`audit` answers whether every model crossing of a graph is
guarded (:class:`AuditResult`). :class:`TrustGateMiddleware` puts the same gates on a
``langchain.agents.create_agent`` agent (the ``agents`` extra). A graph state that
keeps reports declares ``trust_reports: TrustReports`` (or extends
:class:`TrustReportsState`); :func:`reports_from_state` reads them back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trustgate._lazy import lazy_module
from trustgate._report import TrustReports, TrustReportsState, reports_from_state
from trustgate.graph._guard import GuardedStateGraph, guard, guarded_nodes

if TYPE_CHECKING:
    from trustgate._audit import (
        AuditedCrossing,
        AuditPath,
        AuditResult,
        SampleRun,
        aaudit,
        audit,
    )
    from trustgate.graph._middleware import TrustGateAgentState, TrustGateMiddleware

__all__ = [
    "AuditPath",
    "AuditResult",
    "AuditedCrossing",
    "GuardedStateGraph",
    "SampleRun",
    "TrustGateAgentState",
    "TrustGateMiddleware",
    "TrustReports",
    "TrustReportsState",
    "aaudit",
    "audit",
    "guard",
    "guarded_nodes",
    "reports_from_state",
]

__getattr__, __dir__ = lazy_module(
    __name__,
    globals(),
    {
        **dict.fromkeys(
            ("AuditPath", "AuditResult", "AuditedCrossing", "SampleRun", "aaudit", "audit"),
            "trustgate._audit",
        ),
        # the agents extra (langchain) is imported only when the middleware is used
        "TrustGateAgentState": "trustgate.graph._middleware",
        "TrustGateMiddleware": "trustgate.graph._middleware",
    },
)
