"""Properties of one crossing: nothing uninspected or unresolved is ever released."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate import Finding, TrustGate
from trustgate.errors import ConfigurationError
from trustgate.policies import Caveat, Halt, Override
from trustgate.verifiers.base import Evidence, FunctionVerifier

OUTCOMES = st.sampled_from(["pass", "fail", "warn", "raise", "none", "bad_type"])
POLICIES = st.sampled_from(
    ["halt", "override", "override_other", "caveat", "override_missing", "none"]
)


def _verifier(i: int, outcome: str) -> FunctionVerifier:
    def run(claims: Any, evidence: Evidence) -> Any:
        if outcome == "pass":
            return [Finding.ok(f"v{i}")]
        if outcome == "fail":
            return [Finding.failed(f"v{i}", "bad", "failed", subject="x")]
        if outcome == "warn":
            return [Finding.failed(f"v{i}", "meh", "warned", severity="warn")]
        if outcome == "raise":
            raise RuntimeError("crash")
        if outcome == "none":
            return None
        return "not findings"

    return FunctionVerifier(run, name=f"v{i}")


def _policy(name: str) -> Any:
    return {
        "halt": Halt(),
        # what the failed findings judged (the claims) is rewritten: released
        "override": [Override("verdict", "REQUEST_CHANGES"), Override("claims", ["withheld"])],
        # only another part is rewritten: the failed claims would ride along, so it halts
        "override_other": Override("verdict", "REQUEST_CHANGES"),
        "caveat": Caveat(field="text"),
        "override_missing": Override("review.verdict", "REQUEST_CHANGES"),
        "none": [],
    }[name]


@settings(max_examples=300, deadline=None)
@given(
    outcomes=st.lists(OUTCOMES, min_size=1, max_size=4),
    policy=POLICIES,
    has_claims=st.booleans(),
    verdict=st.sampled_from(["APPROVE", "Approve", "LGTM", "REQUEST_CHANGES", ""]),
    declared=st.booleans(),
)
def test_released_only_when_every_blocking_failure_was_handled(
    outcomes: list[str], policy: str, has_claims: bool, verdict: str, declared: bool
) -> None:
    gate = TrustGate(
        "g",
        reads="claims",
        verifiers=[_verifier(i, o) for i, o in enumerate(outcomes)],
        policy=_policy(policy),
        passthrough=["verdict", "text"] if declared else (),
    )
    update: dict[str, Any] = {"verdict": verdict, "text": "Body."}
    if has_claims:
        update["claims"] = ["c"]
    result = gate.check(update, node="n")
    report = result.report
    crashed = has_claims and any(o in ("raise", "none", "bad_type") for o in outcomes)
    failed = (not has_claims) or any(o == "fail" for o in outcomes)
    assert report.released == (result.update is not None)
    if not declared:
        # "verdict" and "text" are neither read nor declared: held, never released
        assert not report.released and report.decision == "halted"
        assert {f.subject for f in report.failed if f.code == "unverified_output"} >= {
            "verdict",
            "text",
        }
        return
    if crashed:
        # a verifier that errors is a failed inspection: halt, error recorded, no retry
        assert report.error is not None
        assert not report.released and report.decision == "halted"
    if report.error is not None:
        assert not report.released and report.decision == "halted"
    if failed and not crashed:
        if policy == "override" and has_claims:
            assert report.released and result.update is not None
            assert result.update["verdict"] == "REQUEST_CHANGES"
            assert result.update["claims"] == ["withheld"]
        elif policy in ("override", "override_other") and not has_claims:
            # no claim at all (no_claims judges no part): overriding the verdict settles it
            assert report.released and result.update is not None
            assert result.update["verdict"] == "REQUEST_CHANGES"
        elif policy == "caveat" and not has_claims:
            assert report.released and result.update is not None
            assert result.update["text"].startswith("> **Caveat:**")
        else:
            # halt, a missing field, or a policy that rewrote some other part than the
            # failed claims (a caveat on the text, an override of the verdict alone)
            assert not report.released and report.decision == "halted"
            if report.released is False and policy in ("override_other", "caveat"):
                assert "claims" not in (result.update or {})
    if not failed and not crashed:
        assert report.released and report.decision == "pass"
        assert result.update == update


def test_a_gate_that_reads_with_no_verifier_is_refused_where_it_is_built() -> None:
    """A gate reading claims it never checks would release them with a pass report."""
    with pytest.raises(ConfigurationError, match="no verifier to check them"):
        TrustGate("g", reads="claims")
    with pytest.raises(ConfigurationError, match="verifies nothing and declares nothing"):
        TrustGate("g", verifiers=[], policy=Halt())


def test_function_verifier_none_result_is_a_configuration_error() -> None:
    # (documented in the property above as "none": the gate halts, never passes)
    v = _verifier(0, "none")
    try:
        v.verify(["c"], Evidence())
    except ConfigurationError:
        pass
    else:  # pragma: no cover
        raise AssertionError("None must not pass")
