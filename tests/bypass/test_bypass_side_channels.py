"""Side channels of a guarded node's unverified output: the gate's own report on the
custom stream, and what a Review gate holds while a person decides.

The custom stream goes to end users' screens, so a gate's report there is searched like
any stream item (the bypass harness no longer exempts it): on a halt and on a modified
release it must not carry the claim it stopped. A Review gate keeps the node call and
its verifier runs as durable tasks; the task streams, ``astream_events`` and the
checkpoints (also after a reject) must not show what is waiting, even decoded.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from shapes import Recorder
from test_bypass_attacks import (
    LIE,
    LIE_TEXT,
    TRUE_TEXT,
    S,
    attack,
    calls_gate,
    graph,
    text_gate,
)

from trustgate import Report, TrustGate
from trustgate.errors import GateHalted
from trustgate.policies import BlockToolCalls, Redact, Review
from trustgate.readers import LastAIText

ASK = {"messages": [HumanMessage("Was the refund approved?")]}


def _lying(state: S) -> dict[str, Any]:
    return {"messages": [AIMessage(LIE_TEXT)]}


def _streamed_reports(app: Any) -> list[Report]:
    """The reports a consumer of ``stream_mode="custom"`` receives."""
    out: list[Report] = []
    try:
        for item in app.stream(
            ASK, {"configurable": {"thread_id": "custom-only"}}, stream_mode="custom"
        ):
            if isinstance(item, dict) and isinstance(item.get("trustgate"), Report):
                out.append(item["trustgate"])
    except GateHalted:
        pass
    return out


# --- the report on the custom stream -----------------------------------------------------


def test_the_report_streamed_on_a_halt_does_not_carry_the_lie(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT", raising=False)
    a = attack(graph(_lying), text_gate())
    a.assert_blocked()
    assert a.halted
    (streamed,) = _streamed_reports(a.apps["stream"])
    assert streamed.decision == "halted"
    # the durable record keeps the claim the gate stopped
    assert any(LIE in str(r.claims) for r in a.runs["stream"].reports)


def _redacting_gate() -> TrustGate:
    from trustgate.evidence.record import Record
    from trustgate.verifiers.base import EvidenceSources
    from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule

    class LieRule(SentenceRule):
        name = "unsupported"
        code = "unsupported_claim"

        def check(self, sentence: DraftSentence) -> str | None:
            return "no source names this record" if LIE in sentence.text else None

    return TrustGate(
        "text",
        reads=LastAIText(),
        policy=Redact(rules=[LieRule()]),
        evidence=EvidenceSources(record=Record(lines={"1": "refund pending"})),
    )


def test_the_report_of_a_redacted_release_does_not_carry_the_deleted_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT", raising=False)

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{TRUE_TEXT} {LIE_TEXT}")]}

    a = attack(graph(agent), _redacting_gate())
    a.assert_blocked()
    assert a.decisions() == ["modified"]
    (streamed,) = _streamed_reports(a.apps["stream"])
    assert [o.kind for o in streamed.overrides] == ["sentence_delete"]
    (kept,) = a.runs["stream"].reports
    assert LIE in str(kept.overrides[0].before)  # the record says what was deleted


def test_the_report_of_a_blocked_tool_call_does_not_carry_its_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from test_bypass_attacks import _tool_graph

    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT", raising=False)
    recorder = Recorder()

    def message() -> AIMessage:
        return AIMessage(
            TRUE_TEXT, tool_calls=[{"name": "refund", "args": {"reference": LIE}, "id": "c1"}]
        )

    a = attack(
        _tool_graph(message, recorder),
        calls_gate(BlockToolCalls()),
        downstream=("after", "tools"),
        recorder=recorder,
    )
    a.assert_blocked()
    # the call blocked, the node told to answer again, which it did
    assert a.decisions() == ["blocked", "pass"]
    (streamed,) = _streamed_reports(a.apps["stream"])  # a pass is not streamed
    (o,) = streamed.overrides
    assert (o.kind, o.target, o.before) == ("tool_call_block", "messages[0].tool_calls[0]", None)


# --- what Review holds while it waits ------------------------------------------------------


def test_what_review_holds_while_it_waits_is_unreadable() -> None:
    """Paused for a person: the task streams, ``astream_events`` and the checkpoints
    report the durable node call and check, decoded or not; only the review's own
    payload (what the person decides on) may show the lie."""
    a = attack(graph(_lying), text_gate(Review()), answer=lambda v: None, ways=("stream", "events"))
    a.assert_blocked()
    for obs in a.runs.values():  # paused, and nobody answered
        assert obs.halted is None and [i["trustgate"] for i in obs.interrupts] == ["review"]
    app = a.apps["stream"]
    (pending,) = app.get_state({"configurable": {"thread_id": "attack-stream"}}).interrupts
    assert LIE in str(pending.value["report"])  # the person sees what they decide on


def test_what_review_held_is_unreadable_after_a_reject() -> None:
    a = attack(
        graph(_lying),
        text_gate(Review()),
        answer=lambda v: {"type": "reject", "by": "alice", "message": "invented record"},
    )
    a.assert_blocked()
    assert a.halted
    assert [r.decision for r in a.runs["stream"].reports] == ["halted"]
