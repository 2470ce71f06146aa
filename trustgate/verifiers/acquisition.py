"""Acquisition as a check: locators in, frozen artifacts and findings out.

The agent's only input is where to look. Each refusal (scope, range, encoding, …)
becomes a failed finding; each success is an artifact in the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from trustgate.claims import Locator
from trustgate.errors import (
    ArtifactIntegrityError,
    EvidenceRefused,
    GitError,
    LedgerConflict,
    LedgerTampered,
)
from trustgate.evidence.artifacts import Artifact
from trustgate.evidence.ledger import ArtifactLedger
from trustgate.evidence.workspace import Workspace
from trustgate.findings import Finding

__all__ = ["acquire_locators"]

VERIFIER = "acquisition"


def acquire_locators(
    locators: Iterable[Any], workspace: Workspace, ledger: ArtifactLedger | None = None
) -> tuple[list[Artifact], list[Finding]]:
    """Acquire every locator; a malformed or refused one is a failed finding, not a crash."""
    artifacts: list[Artifact] = []
    findings: list[Finding] = []
    for i, raw in enumerate(locators):
        try:
            locator = raw if isinstance(raw, Locator) else Locator.model_validate(raw)
        except ValidationError as exc:
            findings.append(
                Finding.failed(
                    VERIFIER,
                    "malformed_claim",
                    f"locator {i} is malformed: {exc.errors()[0]['msg']}",
                    subject=f"locator[{i}]",
                )
            )
            continue
        try:
            artifact = workspace.acquire(locator, ledger)
        except EvidenceRefused as exc:
            findings.append(exc.to_finding(VERIFIER, subject=str(locator)))
            continue
        except GitError as exc:
            findings.append(Finding.failed(VERIFIER, "git_error", str(exc), subject=str(locator)))
            continue
        except LedgerTampered as exc:
            findings.append(
                Finding.failed(VERIFIER, "ledger_tampered", exc.reason, subject=str(locator))
            )
            continue
        except (ArtifactIntegrityError, LedgerConflict) as exc:
            findings.append(
                Finding.failed(VERIFIER, "ledger_conflict", str(exc), subject=str(locator))
            )
            continue
        artifacts.append(artifact)
        findings.append(
            Finding.ok(
                VERIFIER,
                f"acquired {artifact.uri}",
                subject=str(locator),
                detail={"artifact_id": artifact.id},
            )
        )
    return artifacts, findings
