"""The gate calls telemetry: one GUARDRAIL span per crossing, also through guard()."""

from __future__ import annotations

from typing import Any

import pytest
from _gate_support import LIE, cfg, inspector, reviewer_graph
from _otel import global_providers, make_otel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from trustgate.errors import GateHalted
from trustgate.graph import guard
from trustgate.policies import Halt, Review
from trustgate.testing import lying_model


def test_one_span_per_crossing_with_override_event() -> None:
    otel = make_otel()
    with global_providers(otel):
        app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile()
        app.invoke({"log": []})
    span = otel.one("trustgate.gate inspector")
    attrs: Any = span.attributes
    assert attrs["trustgate.crossing.decision"] == "modified"
    assert attrs["openinference.span.kind"] == "GUARDRAIL"
    assert [e.name for e in span.events] == [
        "gen_ai.evaluation.result",
        "trustgate.override field_override",
    ]
    assert [s.name for s in otel.named("trustgate.verify")] == ["trustgate.verify replay"]


def test_halt_has_its_span() -> None:
    otel = make_otel()
    with global_providers(otel):
        app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Halt())}).compile()
        with pytest.raises(GateHalted):
            app.invoke({"log": []})
    attrs: Any = otel.one("trustgate.gate inspector").attributes
    assert attrs["trustgate.crossing.decision"] == "halted"


def test_review_resume_has_exactly_one_span() -> None:
    otel = make_otel()
    with global_providers(otel):
        app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Review())}).compile(
            checkpointer=InMemorySaver()
        )
        app.invoke({"log": []}, cfg("r"))
        assert otel.named("trustgate.gate") == []
        app.invoke(Command(resume={"type": "approve", "by": "alice"}), cfg("r"))
    attrs: Any = otel.one("trustgate.gate inspector").attributes
    assert attrs["trustgate.crossing.decision"] == "reviewed"


async def test_async_crossing_span() -> None:
    otel = make_otel()
    with global_providers(otel):
        app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile()
        await app.ainvoke({"log": []})
    assert otel.one("trustgate.gate inspector").attributes is not None
