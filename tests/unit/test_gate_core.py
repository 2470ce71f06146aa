"""One crossing, no graph: reading claims, verifier failures, and each policy."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel

from trustgate import Cut, Finding, Report, TrustGate
from trustgate.errors import ConfigurationError
from trustgate.policies import (
    CAVEAT_HEADER,
    OVERRIDE_NOTE,
    BlockToolCalls,
    Caveat,
    Halt,
    Override,
    Rerender,
)
from trustgate.readers import FromKey, LastAIText, ToolCallArgs
from trustgate.verifiers.base import Evidence, EvidenceSources, FromState, FunctionVerifier


class Review(BaseModel):
    verdict: str
    summary: str = ""
    cites: list[str] = []


def _cites_ok(claims: Any, evidence: Evidence) -> list[Finding]:
    cites = claims.cites if isinstance(claims, Review) else claims
    return [
        Finding.failed("replay", "content_mismatch", f"{c} not in file", subject=c)
        if c.startswith("invented")
        else Finding.ok("replay", subject=c)
        for c in cites
    ]


replay = FunctionVerifier(_cites_ok, name="replay")


def _inspector(**kw: Any) -> TrustGate:
    return TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[replay],
        policy=Override("review.verdict", "REQUEST_CHANGES", note_field="review.summary"),
        **kw,
    )


@pytest.mark.parametrize("said", ["APPROVE", "Approve", "LGTM", "approved, ship it"])
def test_override_flips_any_verdict_the_lying_model_wrote(said: str) -> None:
    review = Review(verdict=said, summary="All items resolved.", cites=["invented line"])
    result = _inspector().check({"review": review}, node="reviewer")
    released = result.update["review"] if result.update else None
    assert isinstance(released, Review)
    assert released.verdict == "REQUEST_CHANGES"
    assert released.summary == "All items resolved." + OVERRIDE_NOTE
    assert review.verdict == said  # the node's own object is not mutated
    r = result.report
    assert r.decision == "modified" and r.released
    assert [o.kind for o in r.overrides] == ["field_override"]
    assert r.overrides[0].before == said and r.overrides[0].after == "REQUEST_CHANGES"
    assert [f.code for f in r.failed] == ["content_mismatch"]


def test_override_leaves_verified_output_alone() -> None:
    review = Review(verdict="APPROVE", cites=["real line"])
    result = _inspector().check({"review": review.model_dump_json()}, node="reviewer")
    assert result.report.decision == "pass" and result.report.released
    assert result.update is not None and result.update["review"] == review.model_dump_json()


def test_no_claims_fails_instead_of_passing() -> None:
    result = _inspector().check({"other": 1}, node="reviewer")
    assert not result.released and result.update is None
    # the missing claim fails, and what the node wrote instead is held unread
    assert [f.code for f in result.report.failed] == ["no_claims", "unverified_output"]
    # Override then sets the verdict it cannot find: field missing → unresolved → halt
    assert result.report.decision == "halted"


def test_no_claims_allowed_when_not_required() -> None:
    gate = TrustGate("g", reads="x", verifiers=[replay], require_claims=False)
    assert gate.check({}, node="n").report.decision == "pass"


def test_malformed_claims_are_a_failed_finding() -> None:
    result = TrustGate("g", reads=FromKey("review", model=Review), verifiers=[replay]).check(
        {"review": "{not json"}, node="n"
    )
    assert [f.code for f in result.report.failed] == ["malformed_claim"]
    assert result.report.decision == "halted" and result.update is None


def _boom(claims: Any, evidence: Evidence) -> list[Finding]:
    raise RuntimeError("disk on fire")


_RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def _release_hung_verifiers() -> Iterator[None]:
    """A hung verifier's thread waits for the test to end, then returns (no sleeping)."""
    _RELEASE.clear()
    yield
    _RELEASE.set()


def _hang(claims: Any, evidence: Evidence) -> list[Finding]:
    _RELEASE.wait(30)
    return [Finding.ok("hang")]


async def _ahang(claims: Any, evidence: Evidence) -> list[Finding]:
    await asyncio.Event().wait()  # until the gate's time limit cancels it
    return [Finding.ok("ahang")]


@pytest.mark.parametrize(
    ("verifier", "code"),
    [
        (FunctionVerifier(_boom, name="boom"), "verifier_error"),
        (FunctionVerifier(_hang, name="hang", timeout=0.2), "verifier_timeout"),
    ],
)
def test_verifier_that_raises_or_hangs_halts(verifier: FunctionVerifier, code: str) -> None:
    calls: list[int] = []

    def counting(claims: Any, evidence: Evidence) -> list[Finding]:
        calls.append(1)
        return verifier.verify(claims, evidence)

    wrapped = FunctionVerifier(counting, name=verifier.name, timeout=verifier.timeout)
    gate = TrustGate("g", reads="x", verifiers=[wrapped], policy=Override("x", "safe"))
    started = time.monotonic()
    result = gate.check({"x": "claim"}, node="n")
    assert time.monotonic() - started < 2
    assert result.update is None and not result.report.released
    assert result.report.decision == "halted"
    assert result.report.error and verifier.name in result.report.error
    assert [f.code for f in result.report.failed] == [code]
    assert len(calls) == 1  # deterministic verifiers are never retried


@pytest.mark.parametrize(
    "verifier",
    [
        FunctionVerifier(_hang, name="hang", timeout=0.2),
        FunctionVerifier(_ahang, name="ahang", timeout=0.2),
        FunctionVerifier(_boom, name="boom"),
    ],
)
async def test_async_verifier_failures_halt(verifier: FunctionVerifier) -> None:
    gate = TrustGate("g", reads="x", verifiers=[verifier])
    started = time.monotonic()
    result = await gate.acheck({"x": "claim"}, node="n")
    assert time.monotonic() - started < 2
    assert result.update is None and result.report.decision == "halted"
    assert result.report.error


def test_evidence_missing_from_state_halts() -> None:
    gate = TrustGate(
        "g",
        reads="x",
        verifiers=[replay],
        evidence=EvidenceSources(record=FromState("record")),
    )
    result = gate.check({"x": ["ok"]}, node="n", state={})
    assert result.report.decision == "halted"
    assert [f.code for f in result.report.failed] == ["evidence_unavailable"]


def test_tool_call_block_keeps_the_other_calls() -> None:
    def no_invented(claims: Any, evidence: Evidence) -> list[Finding]:
        return [
            Finding.failed("args", "invented", "fabricated path", subject=c["id"])
            if "invented" in str(c["args"])
            else Finding.ok("args", subject=c["id"])
            for c in claims
        ]

    msg = AIMessage(
        content="",
        tool_calls=[
            {"name": "close_item", "args": {"path": "invented.py"}, "id": "a"},
            {"name": "read", "args": {"path": "real.py"}, "id": "b"},
        ],
    )
    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(),
        verifiers=[FunctionVerifier(no_invented, name="args")],
        policy=BlockToolCalls(),
    )
    result = gate.check({"messages": [msg]}, node="model")
    assert result.update is not None
    out = result.update["messages"][-1]
    assert [c["id"] for c in out.tool_calls] == ["b"]
    assert [c["id"] for c in msg.tool_calls] == ["a", "b"]
    assert result.report.overrides[0].kind == "tool_call_block"
    assert result.report.decision == "blocked"


def _invented_citation(claims: Any, evidence: Evidence) -> list[Finding]:
    if "ISO 27001 9.2" in claims:
        return [
            Finding.failed(
                "contract",
                "invented_citation",
                "9.2 not approved",
                subject="ISO 27001 9.2",
                proposals=[Cut(text=t) for t in ["ISO 27001 9.2"]],
            )
        ]
    return [Finding.ok("contract")]


def test_rerender_then_caveat_removes_the_invented_citation() -> None:
    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_invented_citation, name="contract")],
        policy=Rerender(to="writer", then=Caveat()),
    )
    msg = AIMessage(content="Audit per ISO 27001 9.2 yearly.")
    first = gate.check({"messages": [msg]}, node="writer", attempt=1)
    assert first.route == "rerender" and first.rerender_to == "writer"
    assert first.update is None
    assert first.writes["trust_issues"] == [
        "contract/invented_citation: 9.2 not approved [ISO 27001 9.2]"
    ]
    second = gate.check({"messages": [msg]}, node="writer", attempt=2)
    assert second.route == "release" and second.report.decision == "caveated"
    text = second.update["messages"][-1].content if second.update else ""
    assert text.startswith(CAVEAT_HEADER)
    assert "invented_citation" in text
    body = text.split("\n\n", 1)[1]
    assert "ISO 27001 9.2" not in body
    assert [o.kind for o in second.report.overrides] == ["citation_drop", "caveat"]


def test_rerender_then_halt() -> None:
    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_invented_citation, name="contract")],
        policy=Rerender(to="writer", then=Halt()),
    )
    msg = AIMessage(content="Audit per ISO 27001 9.2 yearly.")
    assert gate.check({"messages": [msg]}, node="writer", attempt=2).report.decision == "halted"


def test_configuration_errors() -> None:
    with pytest.raises(ConfigurationError):
        TrustGate("", reads="x")
    with pytest.raises(ConfigurationError):
        TrustGate("g", reads="x", verifiers=[object()])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError):
        TrustGate("g", reads="x", verifiers=[replay, replay])
    with pytest.raises(ConfigurationError):
        TrustGate("g", reads="x", policy=[object()])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError):
        Rerender(to="w", issues_key=None)


def test_report_verdict_is_deterministic() -> None:
    review = Review(verdict="LGTM", cites=["invented"])
    a = _inspector().check({"review": review}, node="r").report
    b = _inspector().check({"review": review}, node="r").report
    assert a.verdict() == b.verdict() and a.id != b.id


def test_report_of_odd_values_is_still_plain_json() -> None:
    class Odd:
        pass

    gate = TrustGate(
        "g",
        reads="x",
        verifiers=[
            FunctionVerifier(
                lambda c, e: Finding.failed("v", "odd", "m", detail={"obj": Odd()}), name="v"
            )
        ],
    )
    data = gate.check({"x": Odd()}, node="n").report.to_json_dict()
    assert isinstance(data["findings"][0]["detail"]["obj"], str)
    assert isinstance(data["claims"][0], str)
    assert Report.coerce(data).decision == "halted"
