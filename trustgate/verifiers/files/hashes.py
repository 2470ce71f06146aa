"""Hash claims: "this file hashes to X" is recomputed from the bytes, never trusted."""

from __future__ import annotations

import re

from trustgate._claims import HashClaim
from trustgate._findings import Finding
from trustgate.errors import EvidenceRefused, GitError
from trustgate.evidence.workspace import Workspace

__all__ = ["check_hash_claim"]

VERIFIER = "hash_check"
_HEX64 = re.compile(r"[0-9a-f]{64}")


def check_hash_claim(claim: HashClaim, workspace: Workspace) -> Finding:
    """Recompute sha256 of the file (at ``claim.revision`` when pinned) and compare."""
    subject = f"{claim.revision}:{claim.path}" if claim.revision else claim.path
    claimed = claim.sha256.strip().lower()
    if claimed.startswith("sha256:"):
        claimed = claimed[len("sha256:") :]
    if not _HEX64.fullmatch(claimed):
        return Finding.failed(
            VERIFIER,
            "malformed_claim",
            f"{claim.sha256!r} is not a hex sha256 digest",
            subject=subject,
        )
    try:
        actual = workspace.sha256(claim.path, claim.revision)
    except EvidenceRefused as exc:
        return exc.to_finding(VERIFIER, subject=subject)
    except GitError as exc:
        return Finding.failed(VERIFIER, "git_error", str(exc), subject=subject)
    if actual != claimed:
        return Finding.failed(
            VERIFIER,
            "hash_mismatch",
            f"{subject} hashes to {actual[:16]}…, not the claimed {claimed[:16]}…",
            subject=subject,
            detail={"expected": claimed, "actual": actual},
        )
    return Finding.ok(VERIFIER, f"{subject} hashes to the claimed sha256", subject=subject)
