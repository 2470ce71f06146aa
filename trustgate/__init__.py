"""trustgate: trust-boundary nodes for LangGraph agent graphs.

A model's account of its own work is a *claim*. trustgate makes the claim carry an
artifact that can be checked (a file/line citation, a locator, a record-line id, a
hash, a citation from a closed list), checks it deterministically against the real
source, and overrides the model when the check fails.

This module is the public API; everything not re-exported here is private.
"""

from __future__ import annotations

# --- foundation: models, errors, file evidence (issue 2) ---
from trustgate.claims import (
    ChangeClaim,
    ChangesManifest,
    FileCitation,
    HashClaim,
    Locator,
    SelfReport,
    parse_manifest,
)
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
from trustgate.evidence.artifacts import Artifact, Connector, acquire_external, artifact_id
from trustgate.evidence.ledger import ArtifactLedger, InMemoryLedger, SqliteLedger
from trustgate.evidence.workspace import Workspace
from trustgate.findings import Finding
from trustgate.verifiers.acquisition import acquire_locators
from trustgate.verifiers.changes import check_change_claim, check_changed_files
from trustgate.verifiers.citations import replay_citation, replay_manifest
from trustgate.verifiers.files import ChangeCheck, CitationReplay, GroundingCheck, HashCheck
from trustgate.verifiers.hashes import check_hash_claim
from trustgate.verifiers.trust import GroundedValue, TrustBar, check_artifact_refs, meets_trust_bar

__version__ = "0.1.0"

__all__ = [
    "Artifact",
    "ArtifactIntegrityError",
    "ArtifactLedger",
    "ChangeCheck",
    "ChangeClaim",
    "ChangesManifest",
    "CitationReplay",
    "ClaimParseError",
    "ConfigurationError",
    "Connector",
    "EvidenceRefused",
    "FileCitation",
    "Finding",
    "GitError",
    "GroundedValue",
    "GroundingCheck",
    "HashCheck",
    "HashClaim",
    "InMemoryLedger",
    "InputError",
    "LangGraphCompatibilityError",
    "LedgerConflict",
    "Locator",
    "SelfReport",
    "SqliteLedger",
    "TrustBar",
    "TrustgateError",
    "VerdictError",
    "Workspace",
    "__version__",
    "acquire_external",
    "acquire_locators",
    "artifact_id",
    "check_artifact_refs",
    "check_change_claim",
    "check_changed_files",
    "check_hash_claim",
    "meets_trust_bar",
    "parse_manifest",
    "replay_citation",
    "replay_manifest",
]

# --- drafts: record citations, segmentation, gaps (issue 3, drafts) ---
from trustgate.evidence.record import Record
from trustgate.verifiers.draft import (
    DraftVerdict,
    Gap,
    InvalidCitation,
    KeptSentence,
    Removal,
    Testimony,
    UnsupportedText,
    answer_gap,
    verify_draft,
)
from trustgate.verifiers.figures import FiguresRule
from trustgate.verifiers.relevance import CitationRelevanceRule
from trustgate.verifiers.rules import (
    DEFAULT_RULES,
    CausalRule,
    DraftSentence,
    HedgeRule,
    Lexicon,
    PatternRule,
    SentenceRule,
)
from trustgate.verifiers.segment import Segment, segment

__all__ += [
    "DEFAULT_RULES",
    "CausalRule",
    "CitationRelevanceRule",
    "DraftSentence",
    "DraftVerdict",
    "FiguresRule",
    "Gap",
    "HedgeRule",
    "InvalidCitation",
    "KeptSentence",
    "Lexicon",
    "PatternRule",
    "Record",
    "Removal",
    "Segment",
    "SentenceRule",
    "Testimony",
    "UnsupportedText",
    "answer_gap",
    "segment",
    "verify_draft",
]

# --- contracts: brief, closed-list citations, verdicts, integrity (issue 3, contracts) ---
from trustgate.evidence.brief import (
    ApprovedCitation,
    ApprovedPrice,
    Brief,
    EvidenceSet,
)
from trustgate.verifiers.citation_patterns import (
    DEFAULT_CITATION_PATTERNS,
    CitationId,
    CitationMatch,
    CitationPattern,
    RegexCitationPattern,
    extract_citations,
)
from trustgate.verifiers.contract import check_citations
from trustgate.verifiers.integrity import (
    check_integrity,
    normalize_price,
    normalize_url,
)
from trustgate.verifiers.verdict import Verdict, VerdictIssue, parse_verdict

__all__ += [
    "DEFAULT_CITATION_PATTERNS",
    "ApprovedCitation",
    "ApprovedPrice",
    "Brief",
    "CitationId",
    "CitationMatch",
    "CitationPattern",
    "EvidenceSet",
    "RegexCitationPattern",
    "Verdict",
    "VerdictIssue",
    "check_citations",
    "check_integrity",
    "extract_citations",
    "normalize_price",
    "normalize_url",
    "parse_verdict",
]

# --- gate: trust-boundary nodes, reports, policies, guard() (issue 4) ---
from trustgate.errors import GateHalted
from trustgate.gate import GateResult, TrustGate
from trustgate.graph import guard, guarded_nodes
from trustgate.policies import (
    OVERRIDE_NOTE,
    BlockToolCalls,
    Caveat,
    Halt,
    Override,
    Policy,
    Redact,
    Rerender,
    Review,
)
from trustgate.readers import (
    ClaimsReader,
    FromKey,
    LastAIText,
    Routes,
    StreamWrites,
    ToolCallArgs,
)
from trustgate.report import (
    Approval,
    Decision,
    OverrideKind,
    OverrideRecord,
    Report,
    TrustReports,
    TrustReportsState,
    areports,
    reports,
    reports_from_state,
)
from trustgate.streaming import astream, astream_events, stream
from trustgate.verifiers.base import (
    AsyncVerifier,
    Evidence,
    EvidenceSources,
    FromContext,
    FromState,
    FunctionVerifier,
    Verifier,
    verifier,
)
from trustgate.verifiers.blind import ModelVerifier
from trustgate.verifiers.draft_check import DraftCheck

__all__ += [
    "OVERRIDE_NOTE",
    "Approval",
    "AsyncVerifier",
    "BlockToolCalls",
    "Caveat",
    "ClaimsReader",
    "Decision",
    "DraftCheck",
    "Evidence",
    "EvidenceSources",
    "FromContext",
    "FromKey",
    "FromState",
    "FunctionVerifier",
    "GateHalted",
    "GateResult",
    "Halt",
    "LastAIText",
    "ModelVerifier",
    "Override",
    "OverrideKind",
    "OverrideRecord",
    "Policy",
    "Redact",
    "Report",
    "Rerender",
    "Review",
    "Routes",
    "StreamWrites",
    "ToolCallArgs",
    "TrustGate",
    "TrustReports",
    "TrustReportsState",
    "Verifier",
    "areports",
    "astream",
    "astream_events",
    "guard",
    "guarded_nodes",
    "reports",
    "reports_from_state",
    "stream",
    "verifier",
]

# --- persistence (issue 7) ---
from trustgate.evidence.ledger_postgres import PostgresLedger
from trustgate.persistence import (
    AsyncPersistence,
    Persistence,
    ReportHistory,
    aconnect,
    connect,
    history,
)

__all__ += [
    "AsyncPersistence",
    "Persistence",
    "PostgresLedger",
    "ReportHistory",
    "aconnect",
    "connect",
    "history",
]

# --- telemetry (issues 5, 14): trustgate.otel; trustgate.telemetry is the old name ---
from trustgate import otel, telemetry
from trustgate.otel.sdk import Telemetry
from trustgate.otel.sdk import configure as configure_telemetry

__all__ += [
    "Telemetry",
    "configure_telemetry",
    "otel",
    "telemetry",
]

# --- audit (issue 4) ---
from trustgate.audit import AuditedCrossing, AuditPath, AuditResult, SampleRun, aaudit, audit

__all__ += [
    "AuditPath",
    "AuditResult",
    "AuditedCrossing",
    "SampleRun",
    "aaudit",
    "audit",
]
