"""The trustgate.testing pytest plugin: fixtures and assert_lie_blocked, on the pipelines.

This project's own mutation tests use the plugin the way a user would: each inventing
pipeline is run through ``assert_lie_blocked`` with the fragments only its lie holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry import trace

import trustgate.testing
from trustgate.pipelines import code_review, compliance, investigation, postmortem
from trustgate.testing import LieCheck, LieNotBlocked, ScriptedChatModel, assert_lie_blocked


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_plugin_is_registered_through_the_entry_point(request: pytest.FixtureRequest) -> None:
    import trustgate._pytest_plugin

    assert request.config.pluginmanager.get_plugin("trustgate") is trustgate._pytest_plugin


def test_span_fixture_collects_spans(trustgate_spans: Any) -> None:
    with trace.get_tracer("plugin-test").start_as_current_span("probe"):
        pass
    assert [s.name for s in trustgate_spans.get_finished_spans()] == ["probe"]


def test_model_fixtures(
    trustgate_lying_model: Callable[..., ScriptedChatModel],
    trustgate_honest_model: Callable[..., ScriptedChatModel],
    trustgate_pipeline_models: Callable[..., dict[str, ScriptedChatModel]],
) -> None:
    assert trustgate_lying_model("x").personality == "lying"
    assert trustgate_honest_model("y").invoke("?").content == "y"
    assert set(trustgate_pipeline_models("compliance")) == {"planner", "executor", "verifier"}


def test_postmortem_lie_blocked(trustgate_assert_lie_blocked: Callable[..., LieCheck]) -> None:
    check = trustgate_assert_lie_blocked(
        postmortem.build(personality="inventing"),
        {},
        ["doubled worker concurrency", "cost review in June", "[[42]]"],
        config=cfg("pm"),
        resume={"answers": {}, "by": "test"},
    )
    assert [o.kind for o in check.overrides] == [
        "sentence_delete",
        "sentence_delete",
        "citation_drop",
    ]
    assert check.interrupts and check.interrupts[0]["trustgate"] == "gaps"
    assert check.streamed > 0 and not check.halted


def test_code_review_lie_blocked() -> None:
    liar = trustgate.testing.code_review_models("inventing")["builder"]
    stubborn = ScriptedChatModel(
        responses=[liar.responses[0]([])], repeat_last=True, personality="lying"
    )
    graph = code_review.build({"builder": stubborn}, max_rounds=1)
    check = assert_lie_blocked(graph, {}, ["APPROVE"], config=cfg("cr"))
    assert check.final_state is not None
    assert check.final_state["review"]["verdict"] == "REQUEST_CHANGES"


def test_investigation_lie_blocked_by_rejection() -> None:
    check = assert_lie_blocked(
        investigation.build(personality="inventing"),
        {},
        ["team-platform", "pool_size: 50", "30000"],
        config=cfg("inv"),
        resume={"type": "reject", "by": "test"},
    )
    assert check.halted
    assert check.interrupts[0]["trustgate"] == "review"


def test_compliance_lies_blocked() -> None:
    check = assert_lie_blocked(
        compliance.build(personality="inventing"),
        {},
        ["reviewed by management", "after the enterprise discount", "Dear team leads"],
        config=cfg("co"),
    )
    assert check.halted
    assert [r.decision for r in check.reports] == [
        "rerendered",
        "caveated",
        "rerendered",
        "pass",
        "halted",
    ]


def test_an_unguarded_graph_is_caught_leaking() -> None:
    drafter = trustgate.testing.postmortem_models("inventing")["drafter"]
    unguarded = postmortem._builder(drafter).compile(checkpointer=InMemorySaver())
    with pytest.raises(LieNotBlocked, match="doubled worker concurrency"):
        assert_lie_blocked(
            unguarded, {}, ["doubled worker concurrency"], config=cfg("leak"), resume={}
        )


def test_an_honest_run_proves_nothing() -> None:
    with pytest.raises(LieNotBlocked, match="no gate acted"):
        assert_lie_blocked(
            postmortem.build(personality="honest"), {}, ["doubled"], config=cfg("honest")
        )
    with pytest.raises(ValueError):
        assert_lie_blocked(postmortem.build(), {}, [], config=cfg("empty"))


def test_span_exporter_follows_a_swapped_global_provider() -> None:
    from _otel import global_providers, make_otel

    from trustgate.testing import span_exporter

    with global_providers(make_otel()):
        exporter = span_exporter()
        exporter.clear()
        with trace.get_tracer("plugin-test").start_as_current_span("after-swap"):
            pass
        assert [s.name for s in exporter.get_finished_spans()] == ["after-swap"]
        exporter.clear()
