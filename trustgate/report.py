"""Deprecated: reports are in :mod:`trustgate` (``Report``, ``reports``, ``areports``),
their parts in :mod:`trustgate.policies` (``OverrideRecord``, ``Approval``) and the state
channel in :mod:`trustgate.graph` (``TrustReports``, ``reports_from_state``)."""

from trustgate._lazy import deprecated_module
from trustgate._report import (
    REPORTS_KEY,
    Approval,
    Decision,
    OverrideKind,
    OverrideRecord,
    Report,
    ReportLog,
    TrustReports,
    TrustReportsState,
    add_reports,
    areports,
    reports,
    reports_from_state,
)

__all__ = [
    "REPORTS_KEY",
    "Approval",
    "Decision",
    "OverrideKind",
    "OverrideRecord",
    "Report",
    "ReportLog",
    "TrustReports",
    "TrustReportsState",
    "add_reports",
    "areports",
    "reports",
    "reports_from_state",
]

deprecated_module(
    "trustgate.report",
    "import Report, reports and areports from trustgate, OverrideRecord and Approval from "
    "trustgate.policies, TrustReports and reports_from_state from trustgate.graph",
)
