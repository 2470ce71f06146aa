"""The gate and what it is built from: the names a gate of your own is written with.

The root re-exports all of these; this family is where they live for code inside the
package that models a user's own (the reference graphs in :mod:`trustgate.pipelines`),
which must not import the root it sits under.

Example:
    ```python
    from trustgate.gate import Evidence, EvidenceSources, Finding, TrustGate, verifier

    @verifier
    def non_empty(claims, evidence: Evidence):
        if claims:
            return [Finding.ok("non_empty")]
        return [Finding.failed("non_empty", "empty", "no claim")]

    gate = TrustGate("answer", reads="answer", verifiers=[non_empty],
                     evidence=EvidenceSources())
    assert gate.check({"answer": "42"}, node="n").report.decision == "pass"
    ```
"""

from __future__ import annotations

from trustgate._findings import Cut, Finding, Strike, TextEdit
from trustgate._gate import TrustGate
from trustgate._report import Report
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

__all__ = [
    "Cut",
    "Evidence",
    "EvidenceSources",
    "Finding",
    "FromContext",
    "FromState",
    "FunctionVerifier",
    "ModelVerifier",
    "Report",
    "Strike",
    "TextEdit",
    "TrustGate",
    "Verifier",
    "verifier",
]
