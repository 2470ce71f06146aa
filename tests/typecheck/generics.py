"""Type-checked by ``make typecheck`` (mypy --strict), never run: the generics of the
public API catch a verifier that cannot take what its gate's reader reads.

Each ``# type: ignore[...]`` below marks a mistake mypy must report; strict mode's
``warn_unused_ignores`` fails the check if it stops reporting one.
"""

from __future__ import annotations

from typing import Any, assert_type

from pydantic import BaseModel

from trustgate import (
    CitationReplay,
    Evidence,
    Finding,
    FromKey,
    FunctionVerifier,
    LastAIText,
    ToolCallArgs,
    TrustGate,
    Verifier,
    verifier,
)
from trustgate.readers import ToolCall


class Review(BaseModel):
    verdict: str


@verifier
def short_text(claims: str, evidence: Evidence) -> Finding:
    if len(claims) < 100:
        return Finding.ok("short_text")
    return Finding.failed("short_text", "long", "over 100 characters")


@verifier(timeout=1.0)
def approves(claims: Review, evidence: Evidence) -> Finding:
    return Finding.ok("approves") if claims.verdict else Finding.failed("approves", "empty", "")


def calls_known(claims: list[ToolCall], evidence: Evidence) -> list[Finding]:
    return [Finding.ok("calls_known", subject=c["name"]) for c in claims]


assert_type(short_text, FunctionVerifier[str])
assert_type(FromKey("review", model=Review), FromKey[Review])
assert_type(LastAIText().read({}), str | None)
assert_type(ToolCallArgs().read({}), list[ToolCall] | None)

text_gate = TrustGate("draft", reads=LastAIText(), verifiers=[short_text, CitationReplay()])
assert_type(text_gate, TrustGate[str])
review_gate = TrustGate("review", reads=FromKey("review", model=Review), verifiers=[approves])
assert_type(review_gate, TrustGate[Review])
calls_gate = TrustGate(
    "calls", reads=ToolCallArgs(), verifiers=[FunctionVerifier(calls_known, timeout=1.0)]
)
assert_type(calls_gate, TrustGate[list[ToolCall]])
any_gate = TrustGate("raw", reads="review", verifiers=[short_text, approves])
assert_type(any_gate, TrustGate[Any])
generic: Verifier[str] = short_text

# a verifier of reviews cannot check a text
TrustGate("draft", reads=LastAIText(), verifiers=[approves])  # type: ignore[arg-type]
wrong: Verifier[Review] = short_text  # type: ignore[assignment]
