"""Deprecated: import :class:`~trustgate.Finding` from :mod:`trustgate`."""

from trustgate._findings import Finding, FindingStatus, Severity
from trustgate._lazy import deprecated_module

__all__ = ["Finding", "FindingStatus", "Severity"]

deprecated_module("trustgate.findings", "import Finding from trustgate")
