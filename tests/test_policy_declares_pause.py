"""guard() asks a policy whether it may pause for a person (``pauses``) instead of
testing for the Review class: a policy of one's own that asks keeps the node's output
across the pause, so a resumed run judges the output it paused on."""

from __future__ import annotations

from typing import Any

import pytest
from _gate_support import LIE, cfg, inspector, reviewer_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from trustgate._report import reports
from trustgate.graph import guard
from trustgate.policies import CrossingView, Review
from trustgate.testing import lying_model

pytestmark = pytest.mark.unit


class AskTheTeam:
    """A policy of one's own (not a Review) that asks a person, through Review's
    decisions."""

    pauses = True

    def __init__(self) -> None:
        self._review = Review()

    def decide(self, crossing: CrossingView) -> Any:
        return self._review.decide(crossing)

    def resume(self, crossing: CrossingView, answer: Any) -> Any:
        return self._review.resume(crossing, answer)


def test_a_policy_that_declares_a_pause_keeps_the_output_across_it() -> None:
    calls: list[str] = []
    app = guard(
        reviewer_graph(lying_model(LIE), calls), {"reviewer": inspector(AskTheTeam())}
    ).compile(checkpointer=InMemorySaver())
    first = app.invoke({"log": []}, cfg("own"))
    assert first["__interrupt__"][0].value["gate"] == "inspector"
    out = app.invoke(Command(resume={"type": "approve", "by": "alice"}), cfg("own"))
    assert calls == ["reviewer"]  # the producer was not run again on resume
    assert out["review"].verdict == "APPROVE"
    (report,) = reports(app, cfg("own"))
    assert report.approval is not None and report.approval.who == "alice"


def test_review_declares_that_it_pauses() -> None:
    assert Review.pauses is True
