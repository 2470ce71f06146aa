"""Acquisition as a check: locators in, frozen artifacts and findings out.

The agent's only input is where to look. Each refusal (scope, range, encoding, …)
becomes a failed finding; each success is an artifact in the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from trustgate._claims import Locator
from trustgate._findings import Finding, Strike
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

__all__ = ["acquire_locators"]

VERIFIER = "acquisition"


def acquire_locators(
    locators: Iterable[Any], workspace: Workspace, ledger: ArtifactLedger | None = None
) -> tuple[list[Artifact], list[Finding]]:
    """Acquire every locator; a malformed or refused one is a failed finding, not a crash.

    Each failed finding proposes ``Strike((i,))``: the locator to drop.
    """
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
                    proposals=[Strike(path=(i,))],
                )
            )
            continue
        try:
            artifact = workspace.acquire(locator, ledger)
        except EvidenceRefused as exc:
            refused = exc.to_finding(VERIFIER, subject=str(locator))
            findings.append(refused.model_copy(update={"proposals": (Strike(path=(i,)),)}))
            continue
        except GitError as exc:
            findings.append(_failed("git_error", str(exc), locator, i))
            continue
        except LedgerTampered as exc:
            findings.append(_failed("ledger_tampered", exc.reason, locator, i))
            continue
        except (ArtifactIntegrityError, LedgerConflict) as exc:
            findings.append(_failed("ledger_conflict", str(exc), locator, i))
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


def _failed(code: str, message: str, locator: Locator, index: int) -> Finding:
    return Finding.failed(
        VERIFIER, code, message, subject=str(locator), proposals=[Strike(path=(index,))]
    )
