"""Type-checked by ``make typecheck`` (mypy --strict), never run: each evidence source
a gate hands a verifier has the type the shipped checks read it as.

Each ``# type: ignore[...]`` below marks a mistake mypy must report; strict mode's
``warn_unused_ignores`` fails the check if it stops reporting one.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from typing import Any, assert_type

from trustgate import Evidence
from trustgate.contracts import Brief, EvidenceSet
from trustgate.drafts import Record
from trustgate.files import ArtifactLedger, Workspace


def sources(evidence: Evidence) -> None:
    assert_type(evidence.require("workspace"), Workspace | str | PathLike[str])
    assert_type(evidence.require("record"), Record | Mapping[str, str])
    assert_type(evidence.require("brief"), Brief | Mapping[str, Any])
    assert_type(evidence.require("evidence_set"), EvidenceSet | Mapping[str, Any])
    assert_type(evidence.require("ledger"), ArtifactLedger)
    assert_type(evidence.require("anything else"), Any)  # an extra source: yours to type
    assert_type(evidence.ledger, ArtifactLedger | None)


def misuse(evidence: Evidence) -> None:
    print(evidence.record.lines)  # type: ignore[union-attr]  # may be absent: use require()
    Evidence(ledger="not a ledger")  # type: ignore[arg-type]
