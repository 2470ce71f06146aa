"""Nonsense is refused where a gate is built, with a message that says what is expected.

Each case used to be accepted and to fail at run time (a ``nan`` time limit made every
crossing a time-out) or never (a gate with no verifier released a lie with a pass
report; ``policy=Halt``, the class, was taken as a policy; ``policy="halt"`` was read
letter by letter).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trustgate
from trustgate import (
    BlockToolCalls,
    Caveat,
    EvidenceSources,
    FromContext,
    FromKey,
    FromState,
    FunctionVerifier,
    Halt,
    LastAIText,
    Override,
    Redact,
    Rerender,
    Review,
    ToolCallArgs,
    TrustGate,
    verifier,
)
from trustgate.errors import ConfigurationError


def _ok(claims: Any, evidence: Any) -> list[Any]:
    return []


OK = FunctionVerifier(_ok, name="ok")


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: TrustGate("g", verifiers=[], policy=Halt()), "verifies nothing"),
        (lambda: TrustGate("g", reads=LastAIText()), "no verifier"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], policy=Halt), "not the class"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], policy="halt"), "string"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], policy=[Halt, Halt()]), "class"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], evidence="x"), "EvidenceSources"),
        (lambda: TrustGate("g", reads="verdict", verifiers=OK), "list of verifiers"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], timeout=float("nan")), "finite"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], timeout=0), "positive"),
        (lambda: TrustGate("g", reads="verdict", verifiers=[OK], timeout=True), "seconds"),
        (lambda: TrustGate("", reads="verdict", verifiers=[OK]), "name"),
        (lambda: TrustGate("g", reads=LastAIText, verifiers=[OK]), "not the class"),
        (lambda: TrustGate("g", reads=42, verifiers=[OK]), "cannot read claims"),
        (lambda: TrustGate("g", reads="v", verifiers=[OK], require_claims="no"), "True or False"),
        (lambda: TrustGate("g", reads="v", verifiers=[OK], passthrough=[""]), "non-empty"),
        (lambda: TrustGate("g", reads="v", verifiers=[OK], passthrough="messages.txt"), "part"),
        (lambda: TrustGate("g", reads="v", verifiers=[OK], passthrough="review.verdict"), "key"),
        (
            lambda: TrustGate("g", reads="v", verifiers=[OK], passthrough="messages.bot.text"),
            "kind",
        ),
        (lambda: TrustGate("g", reads="v", verifiers=[OK, OK]), "unique"),
        (lambda: TrustGate("g", reads="v", verifiers=[FunctionVerifier]), "not the class"),
        (lambda: FunctionVerifier(_ok, timeout=float("nan")), "finite"),
        (lambda: FunctionVerifier(_ok, timeout=-1), "positive"),
        (lambda: FunctionVerifier("not a function"), "function"),
        (lambda: verifier(timeout=float("inf"))(_ok), "finite"),
        (lambda: Override(5, "x"), "field"),
        (lambda: Override("", "x"), "field"),
        (lambda: Override("v", "x", note_field=3), "note_field"),
        (lambda: Override("v", "x", note=None), "note"),
        (lambda: Caveat(field=7), "field"),
        (lambda: Redact(also=[3]), "also"),
        (lambda: Redact(rules="causal"), "rules"),
        (lambda: Rerender(max_attempts="1"), "max_attempts"),
        (lambda: Rerender(max_attempts=-1), "max_attempts"),
        (lambda: Rerender(then=Halt), "class"),
        (lambda: Rerender(then="halt"), "policy"),
        (lambda: Rerender(as_message="yes"), "as_message"),
        (lambda: BlockToolCalls(max_attempts=1.5), "max_attempts"),
        (lambda: BlockToolCalls(then=Halt), "class"),
        (lambda: Review(allowed=["approve", "shrug"]), "decisions"),
        (lambda: Review(allowed="approve"), "list"),
        (lambda: ToolCallArgs(tools="close_ticket"), "list of strings"),
        (lambda: ToolCallArgs(tools=["a", 3]), "non-empty strings"),
        (lambda: FromKey(""), "key"),
        (lambda: FromKey("k", model=dict), "pydantic"),
        (lambda: LastAIText(key=None), "key"),
        (lambda: FromState(""), "state key"),
        (lambda: FromContext(3), "attribute"),
        (lambda: EvidenceSources(record=FromState), "class"),
        (lambda: EvidenceSources(extra="x"), "extra"),
    ],
)
def test_nonsense_is_refused_where_it_is_built(build: Any, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        build()


def test_a_gate_that_only_declares_is_allowed_and_is_no_guard() -> None:
    gate = TrustGate("declared", passthrough=["info"])
    assert not gate.verifies
    assert TrustGate("real", reads="v", verifiers=[OK]).verifies


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.booleans()))
def test_a_time_limit_is_a_positive_finite_number_or_it_is_refused(value: Any) -> None:
    good = not isinstance(value, bool) and value == value and 0 < value < float("inf")
    try:
        gate = TrustGate("g", reads="v", verifiers=[OK], timeout=value)
    except ConfigurationError:
        assert not good
    else:
        assert good and gate.timeout == float(value)


def test_the_readme_quickstart_gate_still_builds() -> None:
    gate = trustgate.TrustGate(
        "close_ticket",
        reads=trustgate.ToolCallArgs(tools=["close_ticket"]),
        verifiers=[OK],
        evidence=trustgate.EvidenceSources(extra={"code": {}}),
        policy=trustgate.BlockToolCalls(),
        passthrough=["messages.text"],
    )
    assert gate.name == "close_ticket"
