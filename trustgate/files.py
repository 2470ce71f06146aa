"""File evidence: what agents claim about files, and how trustgate checks it.

The agent points (a file/line citation, a changes manifest, a locator, a hash);
trustgate reads the real bytes from a :class:`Workspace` (or git at a revision),
freezes what it read as an :class:`Artifact` in a ledger, and checks the claim
against it. Everything here is deterministic and needs no LangGraph: use the pure
checks (``replay_manifest``, ``acquire_locators``, ``meets_trust_bar``) anywhere, or
the verifiers (also in :mod:`trustgate`) inside a :class:`~trustgate.TrustGate`.

Example:
    ```python
    from trustgate.files import FileCitation, SelfReport, Workspace, replay_manifest

    item = SelfReport(item="validate input", status="already_correct",
                      evidence=[FileCitation(file="app.py", line=3, content="if not x:")])
    findings = replay_manifest([item], Workspace("."))
    ```
"""

from __future__ import annotations

from trustgate._claims import (
    ChangeClaim,
    ChangesManifest,
    FileCitation,
    HashClaim,
    Locator,
    SelfReport,
    parse_manifest,
)
from trustgate.evidence.artifacts import Artifact, Connector, acquire_external, artifact_id
from trustgate.evidence.ledger import ArtifactLedger, InMemoryLedger, SqliteLedger
from trustgate.evidence.ledger_postgres import PostgresLedger
from trustgate.evidence.workspace import Workspace
from trustgate.verifiers.files.acquisition import acquire_locators
from trustgate.verifiers.files.changes import check_change_claim, check_changed_files
from trustgate.verifiers.files.checks import ChangeCheck, CitationReplay, GroundingCheck, HashCheck
from trustgate.verifiers.files.citations import replay_citation, replay_manifest
from trustgate.verifiers.files.hashes import check_hash_claim
from trustgate.verifiers.files.trust import (
    GroundedValue,
    TrustBar,
    check_artifact_refs,
    meets_trust_bar,
)

__all__ = [
    "Artifact",
    "ArtifactLedger",
    "ChangeCheck",
    "ChangeClaim",
    "ChangesManifest",
    "CitationReplay",
    "Connector",
    "FileCitation",
    "GroundedValue",
    "GroundingCheck",
    "HashCheck",
    "HashClaim",
    "InMemoryLedger",
    "Locator",
    "PostgresLedger",
    "SelfReport",
    "SqliteLedger",
    "TrustBar",
    "Workspace",
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
