"""trustgate: trust-boundary gates for LangGraph agent graphs.

A model's account of its own work is a *claim*. trustgate makes the claim carry an
artifact that can be checked (a file/line citation, a locator, a record-line id, a
hash, a citation from a closed list), checks it deterministically against the real
source, and overrides the model when the check fails.

The root holds what a gate on your own graph needs:

* gates and graphs: :class:`TrustGate`, :func:`guard`, :func:`guarded_nodes`,
  :func:`audit`, :func:`aaudit`;
* readers, where the claims are: :class:`FromKey`, :class:`LastAIText`,
  :class:`ToolCallArgs`, :class:`Routes`, :class:`StreamWrites`;
* policies, what a failure does: :class:`Halt`, :class:`Override`, :class:`Redact`,
  :class:`BlockToolCalls`, :class:`Rerender`, :class:`Caveat`, :class:`Review`;
* verifiers, the checks: :class:`Verifier`, :func:`verifier`, :class:`FunctionVerifier`,
  :class:`CitationReplay`, :class:`ChangeCheck`, :class:`HashCheck`,
  :class:`GroundingCheck`, :class:`DraftCheck`, :class:`ModelVerifier`;
* evidence, where truth is read: :class:`EvidenceSources`, :class:`Evidence`,
  :class:`FromState`, :class:`FromContext`;
* results: :class:`Report`, :class:`Finding` (and the fixes a verifier proposes:
  :class:`TextEdit`, :class:`Cut`, :class:`Strike`), :func:`reports`, :func:`areports`;
* errors: :class:`TrustgateError`, :class:`ConfigurationError`, :class:`GateHalted`.

Families live in public submodules: :mod:`trustgate.files` (file evidence, locators,
ledgers), :mod:`trustgate.drafts` (drafts citing a record; no LangGraph),
:mod:`trustgate.contracts` (closed citation lists, strict verdicts),
:mod:`trustgate.gate` (the gate and what it is built from), :mod:`trustgate.graph`,
:mod:`trustgate.policies`, :mod:`trustgate.readers`,
:mod:`trustgate.errors`, :mod:`trustgate.otel`, :mod:`trustgate.persistence`,
:mod:`trustgate.testing`, :mod:`trustgate.pipelines` and :mod:`trustgate.render`.
Anything with a leading underscore is private.

Names are loaded on first use: ``import trustgate`` itself imports nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trustgate._lazy import lazy_module
from trustgate._meta import VERSION as __version__

if TYPE_CHECKING:
    from trustgate._audit import aaudit, audit
    from trustgate._findings import Cut, Finding, Strike, TextEdit
    from trustgate._gate import TrustGate
    from trustgate._report import Report, areports, reports
    from trustgate.errors import ConfigurationError, GateHalted, TrustgateError
    from trustgate.graph import guard, guarded_nodes
    from trustgate.policies import (
        BlockToolCalls,
        Caveat,
        Halt,
        Override,
        Redact,
        Rerender,
        Review,
    )
    from trustgate.readers import FromKey, LastAIText, Routes, StreamWrites, ToolCallArgs
    from trustgate.verifiers.base import (
        Evidence,
        EvidenceSources,
        FromContext,
        FromState,
        FunctionVerifier,
        Verifier,
        verifier,
    )
    from trustgate.verifiers.contracts.blind import ModelVerifier
    from trustgate.verifiers.drafts.check import DraftCheck
    from trustgate.verifiers.files.checks import (
        ChangeCheck,
        CitationReplay,
        GroundingCheck,
        HashCheck,
    )

__all__ = [
    "BlockToolCalls",
    "Caveat",
    "ChangeCheck",
    "CitationReplay",
    "ConfigurationError",
    "Cut",
    "DraftCheck",
    "Evidence",
    "EvidenceSources",
    "Finding",
    "FromContext",
    "FromKey",
    "FromState",
    "FunctionVerifier",
    "GateHalted",
    "GroundingCheck",
    "Halt",
    "HashCheck",
    "LastAIText",
    "ModelVerifier",
    "Override",
    "Redact",
    "Report",
    "Rerender",
    "Review",
    "Routes",
    "StreamWrites",
    "Strike",
    "TextEdit",
    "ToolCallArgs",
    "TrustGate",
    "TrustgateError",
    "Verifier",
    "__version__",
    "aaudit",
    "areports",
    "audit",
    "guard",
    "guarded_nodes",
    "reports",
    "verifier",
]

_EXPORTS = {
    "TrustGate": "trustgate._gate",
    "guard": "trustgate.graph",
    "guarded_nodes": "trustgate.graph",
    "audit": "trustgate._audit",
    "aaudit": "trustgate._audit",
    **dict.fromkeys(
        ("FromKey", "LastAIText", "ToolCallArgs", "Routes", "StreamWrites"), "trustgate.readers"
    ),
    **dict.fromkeys(
        ("Halt", "Override", "Redact", "BlockToolCalls", "Rerender", "Caveat", "Review"),
        "trustgate.policies",
    ),
    **dict.fromkeys(
        (
            "Verifier",
            "verifier",
            "FunctionVerifier",
            "EvidenceSources",
            "Evidence",
            "FromState",
            "FromContext",
        ),
        "trustgate.verifiers.base",
    ),
    **dict.fromkeys(
        ("CitationReplay", "ChangeCheck", "HashCheck", "GroundingCheck"),
        "trustgate.verifiers.files.checks",
    ),
    "DraftCheck": "trustgate.verifiers.drafts.check",
    "ModelVerifier": "trustgate.verifiers.contracts.blind",
    "Report": "trustgate._report",
    "reports": "trustgate._report",
    "areports": "trustgate._report",
    **dict.fromkeys(("Finding", "TextEdit", "Cut", "Strike"), "trustgate._findings"),
    **dict.fromkeys(("TrustgateError", "ConfigurationError", "GateHalted"), "trustgate.errors"),
}


_SUBMODULES = frozenset(
    {
        "contracts",
        "drafts",
        "errors",
        "files",
        "graph",
        "otel",
        "persistence",
        "pipelines",
        "policies",
        "readers",
        "render",
        "testing",
    }
)

__getattr__, __dir__ = lazy_module(__name__, globals(), _EXPORTS, _SUBMODULES)
