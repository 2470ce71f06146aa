"""Review(): pause with the report, resume with a person's decision (seed 001)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _gate_support import LIE, TRUTH, cfg, inspector, reviewer_graph
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from trustgate import reports
from trustgate.errors import GateHalted
from trustgate.graph import guard
from trustgate.policies import Review
from trustgate.testing import lying_model


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    if request.param == "memory":
        yield InMemorySaver()
    else:
        with SqliteSaver.from_conn_string(str(tmp_path / "review.db")) as s:
            yield s


def _app(saver: BaseCheckpointSaver[Any], calls: list[str], *responses: Any) -> Any:
    return guard(
        reviewer_graph(lying_model(*responses), calls), {"reviewer": inspector(Review())}
    ).compile(checkpointer=saver)


def test_review_pauses_and_approval_is_attributed(saver: BaseCheckpointSaver[Any]) -> None:
    calls: list[str] = []
    app = _app(saver, calls, LIE)
    first = app.invoke({"log": []}, cfg())
    (intr,) = first["__interrupt__"]
    payload = intr.value
    assert payload["trustgate"] == "review" and payload["gate"] == "inspector"
    assert payload["report"]["findings"][0]["code"] == "content_mismatch"
    assert payload["report"]["released"] is False
    assert "review" not in app.get_state(cfg()).values  # nothing released while paused
    assert reports(app, cfg()) == []

    out = app.invoke(Command(resume={"type": "approve", "by": "alice"}), cfg())
    assert calls == ["reviewer"]  # the producer was not re-run on resume
    assert out["review"].verdict == "APPROVE"
    assert out["log"] == ["reviewer", "publish:APPROVE"]
    (report,) = reports(app, cfg())  # exactly one report for the crossing
    assert report.decision == "reviewed" and report.released
    assert report.approval is not None
    assert report.approval.who == "alice" and report.approval.decision == "approve"
    assert "content_mismatch" in report.approval.what
    # approval is testimony, never evidence: the failure stays failed
    assert [f.code for f in report.failed] == ["content_mismatch"]


def test_edit_is_verified_again(saver: BaseCheckpointSaver[Any]) -> None:
    from _gate_support import Review as ReviewModel

    from trustgate.policies import Review as ReviewPolicy

    calls: list[str] = []
    app = guard(
        reviewer_graph(lying_model(LIE), calls), {"reviewer": inspector(ReviewPolicy())}
    ).compile(checkpointer=saver)
    app.invoke({"log": []}, cfg("edit-ok"))
    fixed = ReviewModel(**TRUTH)  # type: ignore[arg-type]
    out = app.invoke(
        Command(resume={"type": "edit", "by": "bob", "update": {"review": fixed}}),
        cfg("edit-ok"),
    )
    assert out["review"] == fixed
    (report,) = reports(app, cfg("edit-ok"))
    assert report.decision == "reviewed" and report.approval and report.approval.who == "bob"
    assert not report.failed  # the edited content passed verification on its own

    app2 = guard(
        reviewer_graph(lying_model(LIE), []), {"reviewer": inspector(ReviewPolicy())}
    ).compile(checkpointer=saver)
    app2.invoke({"log": []}, cfg("edit-bad"))
    still_lying = ReviewModel(**{**LIE, "summary": "edited"})  # type: ignore[arg-type]
    with pytest.raises(GateHalted) as info:
        app2.invoke(
            Command(resume={"type": "edit", "by": "bob", "update": {"review": still_lying}}),
            cfg("edit-bad"),
        )
    assert info.value.report.decision == "halted"
    assert "review" not in app2.get_state(cfg("edit-bad")).values


def test_reject_halts_and_respond_is_attributed(saver: BaseCheckpointSaver[Any]) -> None:
    app = _app(saver, [], LIE)
    app.invoke({"log": []}, cfg("rej"))
    with pytest.raises(GateHalted) as info:
        app.invoke(
            Command(resume={"decisions": [{"type": "reject", "message": "no"}], "by": "carol"}),
            cfg("rej"),
        )
    assert info.value.report.approval is not None
    assert info.value.report.approval.who == "carol"
    assert [r.decision for r in reports(app, cfg("rej"))] == ["halted"]

    app2 = guard(
        reviewer_graph(lying_model(LIE)),
        {"reviewer": inspector(Review(field="review.summary"))},
    ).compile(checkpointer=saver)
    app2.invoke({"log": []}, cfg("resp"))
    out = app2.invoke(
        Command(resume={"type": "respond", "by": "dana", "message": "Needs a fix in a.py."}),
        cfg("resp"),
    )
    assert out["review"].summary == "Per dana (not verified): Needs a fix in a.py."


def test_resume_reuses_the_reviewed_findings(saver: BaseCheckpointSaver[Any]) -> None:
    """The model verifier is not asked again on resume: the person approved its verdict."""
    from _gate_support import Review as ReviewModel

    from trustgate import TrustGate
    from trustgate.evidence.brief import Brief
    from trustgate.readers import FromKey
    from trustgate.verifiers.base import EvidenceSources
    from trustgate.verifiers.contracts.blind import ModelVerifier

    judge = lying_model('{"pass": false, "issues": ["summary contradicts judgment 1"]}')
    gate = TrustGate(
        "blind",
        reads=FromKey("review", model=ReviewModel),
        verifiers=[ModelVerifier(judge)],
        policy=Review(),
        evidence=EvidenceSources(brief=Brief(judgments=["items stay open"])),
        passthrough=["log"],
    )
    calls: list[str] = []
    app = guard(reviewer_graph(lying_model(TRUTH), calls), {"reviewer": gate}).compile(
        checkpointer=saver
    )
    first = app.invoke({"log": []}, cfg("cache"))
    assert first["__interrupt__"][0].value["report"]["findings"][0]["code"] == "verdict_issue"
    app.invoke(Command(resume={"type": "approve", "by": "erin"}), cfg("cache"))
    assert len(judge.calls) == 1 and calls == ["reviewer"]
    (report,) = reports(app, cfg("cache"))
    assert report.approval is not None and report.approval.who == "erin"
    assert [f.code for f in report.failed] == ["verdict_issue"]
