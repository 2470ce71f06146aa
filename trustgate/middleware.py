"""Deprecated: the ``create_agent`` middleware is :class:`trustgate.graph.TrustGateMiddleware`."""

from trustgate._lazy import deprecated_module
from trustgate.graph._middleware import TrustGateAgentState, TrustGateMiddleware

__all__ = ["TrustGateAgentState", "TrustGateMiddleware"]

deprecated_module("trustgate.middleware", "import TrustGateMiddleware from trustgate.graph")
