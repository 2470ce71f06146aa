"""A cause the rules cannot see, stopped by the sentence judge: the lie appears nowhere.

The guarded node writes a postmortem whose lie implies its cause by order alone ("the
migration ran, and the entry was gone"): the draft rules keep it, as they keep every
cause a sentence does not mark. With ``DraftCheck(judge=...)`` and ``Redact`` the judge
names it, the policy deletes it, and the bypass harness finds it in no stream mode,
no state, no checkpoint, no downstream input: the judge's own call included (its
answer quotes the lie, and no stream carries it). With a judge that calls every
sentence plain, the rules' verdict stands and the lie is released: the judge is what
stopped it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from test_bypass_attacks import LIE, S, attack, graph

from trustgate import DraftCheck, EvidenceSources, LastAIText, Redact, TrustGate
from trustgate.drafts import ModelJudge, Record, verify_draft
from trustgate.testing import ScriptedChatModel

RECORD = Record.from_text("14:02 refunds failing for one partner\n14:30 refunds recovered\n")
LIE_SENTENCE = f"The schema migration ran at 14:00 and {LIE} was gone by 14:05."
WORDS = f"The schema migration ran at 14:00 and {LIE} was gone"
DRAFT = (
    "Refunds failed for one partner from 14:02. [[1]] "
    f"{LIE_SENTENCE} "
    "Refunds recovered at 14:30. [[2]]"
)
WAYS = ("stream", "astream", "events")


def agent(state: S) -> dict[str, Any]:
    return {"messages": [AIMessage(DRAFT)]}


def sentences(messages: list[BaseMessage]) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(messages[1].text.partition("\n")[2])
    return loaded


def names_the_lie(messages: list[BaseMessage]) -> str:
    return json.dumps(
        {
            k: {"label": "causal", "words": WORDS} if LIE in s else {"label": "plain", "words": ""}
            for k, s in sentences(messages).items()
        }
    )


def all_plain(messages: list[BaseMessage]) -> str:
    return json.dumps({k: {"label": "plain", "words": ""} for k in sentences(messages)})


def draft_gate(judge_model: ScriptedChatModel) -> TrustGate:
    # no cache: every way asks the model, so every way's judge call is watched
    judge = ModelJudge(judge_model, name="scripted", cache_size=0)
    return TrustGate(
        "postmortem",
        reads=LastAIText(),
        verifiers=[DraftCheck(judge=judge)],
        policy=Redact(),
        evidence=EvidenceSources(record=RECORD),
    )


def test_a_cause_only_the_judge_reads_appears_nowhere() -> None:
    verdict = verify_draft(DRAFT, RECORD)
    assert not verdict.removed and LIE in verdict.text  # the premise: the rules keep it
    judge_model = ScriptedChatModel(responses=[names_the_lie], repeat_last=True)
    a = attack(graph(agent), draft_gate(judge_model), ways=WAYS)
    a.assert_blocked()
    assert not a.halted
    assert len(judge_model.calls) == len(WAYS)  # the judge answered in every way
    for way in WAYS:
        (report,) = a.runs[way].reports
        assert report.decision == "modified" and report.released
        assert [f.code for f in report.findings] == ["judge_causal", "judge"]
        final = a.runs[way].final
        text = final["messages"][-1].text if "messages" in final else ""
        assert "Refunds recovered at 14:30." in text


def test_a_lying_judge_cannot_stop_it_and_cannot_release_more_than_the_rules() -> None:
    """The control: the judge is what stopped the lie. A judge that calls every sentence
    plain leaves exactly the rules' verdict, which keeps the lie."""
    judge_model = ScriptedChatModel(responses=[all_plain], repeat_last=True)
    a = attack(graph(agent), draft_gate(judge_model), ways=("stream",))
    with pytest.raises(AssertionError, match="the lie got through"):
        a.assert_blocked()
    (report,) = a.runs["stream"].reports
    assert report.decision == "pass"
