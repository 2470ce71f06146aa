"""trustgate: trust-boundary nodes for LangGraph agent graphs.

A model's account of its own work is a *claim*. trustgate makes the claim carry an
artifact that can be checked (a file/line citation, a locator, a record-line id, a
hash, a citation from a closed list), checks it deterministically against the real
source, and overrides the model when the check fails.

This module is the public API; everything not re-exported here is private.
"""

from __future__ import annotations

# --- foundation: models, errors, file evidence (issue 2) ---
from trustgate.errors import (
    ArtifactIntegrityError,
    ClaimParseError,
    ConfigurationError,
    EvidenceRefused,
    GitError,
    InputError,
    LangGraphCompatibilityError,
    LedgerConflict,
    TrustgateError,
    VerdictError,
)
from trustgate.findings import Finding

__version__ = "0.1.0"

__all__ = [
    "ArtifactIntegrityError",
    "ClaimParseError",
    "ConfigurationError",
    "EvidenceRefused",
    "Finding",
    "GitError",
    "InputError",
    "LangGraphCompatibilityError",
    "LedgerConflict",
    "TrustgateError",
    "VerdictError",
    "__version__",
]

# --- drafts: record citations, segmentation, gaps (issue 3, drafts) ---
# (imports here, then `__all__ += [...]`)

# --- contracts: brief, closed-list citations, verdicts, integrity (issue 3, contracts) ---
# (imports here, then `__all__ += [...]`)
