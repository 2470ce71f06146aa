"""What a policy declares, read by guard() and the gate instead of testing its class or
letting it build a verifier.

``pauses``: a policy of one's own that asks a person keeps the node's output across
the pause, so a resumed run judges the output it paused on. ``needs_check``: Redact
names the check whose fixes it applies; the gate runs it when its verifiers lack one."""

from __future__ import annotations

from typing import Any

from _gate_support import LIE, cfg, inspector, reviewer_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from trustgate import TrustGate, reports
from trustgate.drafts import DraftCheck
from trustgate.graph import guard
from trustgate.policies import CrossingView, Redact, Review
from trustgate.readers import LastAIText
from trustgate.testing import lying_model


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


def test_redact_declares_the_check_it_applies_and_builds_none() -> None:
    rules = [object()]
    assert Redact().needs_check == (DraftCheck, {})
    assert Redact(rules=rules).needs_check == (DraftCheck, {"rules": rules})
    built = TrustGate("g", reads=LastAIText(), policy=Redact(rules=rules)).verifiers
    (check,) = [v for v in built if isinstance(v, DraftCheck)]
    assert check.rules is rules  # the gate built it, with the policy's rules
    given = DraftCheck()
    mine = TrustGate("g", reads=LastAIText(), verifiers=[given], policy=Redact())
    assert [v for v in mine.verifiers if isinstance(v, DraftCheck)] == [given]
