"""What changes between two crossings applies to the second: the environment's content
settings (their parsing is remembered, never their answer) and the providers installed
(the last one is remembered by identity, never in place of a new one). A crossing
span's attributes are each written once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _otel import Otel, global_providers, make_otel

from trustgate import Finding, FunctionVerifier, Override, TrustGate, otel
from trustgate.otel import _content
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import OpenInferenceAttributes as OI
from trustgate.otel.semconv import OverrideAttributes as O

SECRET = "APPROVE-the-secret-verdict"
KEY = "k" * 32


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    for var in (
        otel.CAPTURE_CONTENT_ENV,
        otel.CONTENT_KEY_ENV,
        otel.CONTENT_MAX_LENGTH_ENV,
        otel.OVERRIDE_SPANS_ENV,
    ):
        monkeypatch.delenv(var, raising=False)
    o = make_otel()
    with global_providers(o):
        yield o


def _gate() -> TrustGate:
    def lie(claims: Any, evidence: Any) -> list[Finding]:
        return [Finding.failed("lie", "invented", "the verdict cites nothing")]

    return TrustGate(
        "g",
        reads="verdict",
        verifiers=[FunctionVerifier(lie, name="lie")],
        policy=Override("verdict", "REQUEST_CHANGES"),
    )


def _cross(sdk: Otel, gate: TrustGate) -> dict[str, Any]:
    sdk.exporter.clear()
    gate.check({"verdict": SECRET}, node="writer", config={"configurable": {"thread_id": "t1"}})
    span = sdk.one("trustgate.gate")
    attrs: dict[str, Any] = dict(span.attributes or {})
    attrs["_events"] = [dict(e.attributes or {}) for e in span.events]
    attrs["_spans"] = [s.name for s in sdk.spans()]
    return attrs


def _shows(attrs: dict[str, Any], text: str) -> bool:
    return text in repr(attrs)


def test_environment_changes_apply_to_the_next_crossing(
    sdk: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = _gate()
    assert not _shows(_cross(sdk, gate), SECRET)  # off by default
    monkeypatch.setenv(otel.CAPTURE_CONTENT_ENV, "true")
    on = _cross(sdk, gate)
    assert _shows(on, SECRET) and on[OI.INPUT_VALUE].startswith("[")
    monkeypatch.setenv(otel.CONTENT_MAX_LENGTH_ENV, "5")
    cut = _cross(sdk, gate)
    assert not _shows(cut, SECRET) and "truncated" in cut[OI.INPUT_VALUE]
    monkeypatch.setenv(otel.CAPTURE_CONTENT_ENV, "no")
    off = _cross(sdk, gate)
    assert not _shows(off, SECRET) and C.CLAIMS_DIGEST not in off
    monkeypatch.setenv(otel.CONTENT_KEY_ENV, KEY)
    keyed = _cross(sdk, gate)
    assert keyed[C.CLAIMS_DIGEST].startswith("hmac-sha256:")
    override = [e for e in keyed["_events"] if O.KIND in e]
    assert override and override[0][O.BEFORE_DIGEST].startswith("hmac-sha256:")
    monkeypatch.delenv(otel.CONTENT_KEY_ENV)
    assert C.CLAIMS_DIGEST not in _cross(sdk, gate)
    monkeypatch.setenv(otel.OVERRIDE_SPANS_ENV, "1")
    assert any(n.startswith("trustgate.override") for n in _cross(sdk, gate)["_spans"])
    monkeypatch.delenv(otel.OVERRIDE_SPANS_ENV)
    assert not any(n.startswith("trustgate.override") for n in _cross(sdk, gate)["_spans"])


def test_a_short_key_in_the_environment_still_means_no_digest(
    sdk: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = _gate()
    monkeypatch.setenv(otel.CONTENT_KEY_ENV, "short")
    for _ in range(2):  # the second crossing is answered from the parsed policy
        assert C.CLAIMS_DIGEST not in _cross(sdk, gate)


def test_the_parsed_policies_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_content, "_policies", {})
    for n in range(3 * _content._MAX_POLICIES):
        monkeypatch.setenv(otel.CONTENT_KEY_ENV, f"{n:032d}")
        assert _content.content_policy(None, None, None).key == f"{n:032d}".encode()
    assert len(_content._policies) <= _content._MAX_POLICIES


def test_attempt_and_session_are_on_the_span_once_with_their_values(sdk: Otel) -> None:
    gate = _gate()
    attrs = _cross(sdk, gate)
    assert attrs[C.ATTEMPT] == 1 and attrs[OI.SESSION_ID] == "t1"
    gate.check({"verdict": SECRET}, node="writer", attempt=2)
    second = sdk.named("trustgate.gate")[-1].attributes or {}
    assert second[C.ATTEMPT] == 2 and OI.SESSION_ID not in second


def test_providers_installed_between_crossings_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace as otel_trace

    from trustgate.otel import _util, metrics

    monkeypatch.delenv(otel.CAPTURE_CONTENT_ENV, raising=False)
    gate = _gate()
    first, second = make_otel(), make_otel()
    with global_providers(None):
        gate.check({"verdict": SECRET}, node="n")  # no SDK: the proxy, nothing recorded
        assert _util.tracer_for(None) is _util.NOOP_TRACER
        assert metrics.instruments(None).noop
        with global_providers(first):
            gate.check({"verdict": SECRET}, node="n")
            gate.check({"verdict": SECRET}, node="n")
        with global_providers(second):
            gate.check({"verdict": SECRET}, node="n")
        gate.check({"verdict": SECRET}, node="n")  # back to no SDK
        # an explicit proxy provider is a provider like any other, not "no SDK"
        proxy = otel_trace.ProxyTracerProvider()
        assert _util.tracer_for(proxy) is not _util.NOOP_TRACER
        assert _util.tracer_for(None) is _util.NOOP_TRACER
    assert len(first.named("trustgate.gate")) == 2
    assert len(second.named("trustgate.gate")) == 1
    assert first.counter("trustgate.crossings") == 2
    assert second.counter("trustgate.crossings") == 1
