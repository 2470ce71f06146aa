"""The sentence judge in a gate: ``DraftCheck(judge=...)`` with ``Redact``, sync and async.

What a real guarded graph shows: the judge's deletion is redacted like a rule's and
counted in the report and on the verifier span; a judge that fails twice halts the
crossing with ``judge_failed`` and releases nothing; the judge's own model call never
reaches the graph's token stream, sync or async.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

import pytest
from _otel import Otel, global_providers, make_otel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from trustgate import DraftCheck, EvidenceSources, FromState, LastAIText, Redact, TrustGate, guard
from trustgate.drafts import FunctionJudge, ModelJudge, Record, verify_draft
from trustgate.errors import GateHalted
from trustgate.graph import TrustReports
from trustgate.otel.semconv import JudgeAttributes as J
from trustgate.testing import ScriptedChatModel, lying_model

RECORD = Record.from_text("14:02 checkout p99 latency 9.2s\n14:20 deploy 4411 rolled back\n")
IMPLIED = "The schema migration ran at 14:00 and the partner tokens were gone by 14:05."
WORDS = "The schema migration ran at 14:00 and the partner tokens were gone"
DRAFT = (
    f"Checkout latency rose to 9.2 seconds at 14:02. [[1]] {IMPLIED} "
    "The deploy was rolled back at 14:20. [[2]]"
)
WAYS = ("invoke", "ainvoke")


class PM(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    record: Record
    trust_reports: TrustReports


def sentences(messages: list[BaseMessage]) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(messages[1].text.partition("\n")[2])
    return loaded


def honest(messages: list[BaseMessage]) -> str:
    return json.dumps(
        {
            k: {"label": "causal", "words": WORDS}
            if "migration" in s
            else {"label": "plain", "words": ""}
            for k, s in sentences(messages).items()
        }
    )


def app(judge_model: ScriptedChatModel, *, checkpointer: Any = None, judge: Any = None) -> Any:
    writer = lying_model(DRAFT, repeat_last=True)
    judge = judge or ModelJudge(judge_model, name="scripted", cache_size=0)

    def draft(state: PM) -> dict[str, Any]:
        return {"messages": [writer.invoke(state["messages"])]}

    gate = TrustGate(
        "postmortem",
        reads=LastAIText(),
        verifiers=[DraftCheck(judge=judge)],
        policy=Redact(),
        evidence=EvidenceSources(record=FromState("record")),
    )
    g = StateGraph(PM)
    g.add_node("writer", draft)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return guard(g, {"writer": gate}).compile(checkpointer=checkpointer)


def inputs() -> dict[str, Any]:
    return {"messages": [HumanMessage("Draft the postmortem.")], "record": RECORD}


def run(way: str, graph: Any, config: Any = None) -> dict[str, Any]:
    if way == "invoke":
        out: dict[str, Any] = graph.invoke(inputs(), config)
        return out
    result: dict[str, Any] = asyncio.run(graph.ainvoke(inputs(), config))
    return result


@pytest.mark.parametrize("way", WAYS)
def test_the_judges_deletion_is_redacted_and_counted(way: str) -> None:
    assert not verify_draft(DRAFT, RECORD).removed  # the premise: the rules keep it
    judge_model = ScriptedChatModel(responses=[honest])
    out = run(way, app(judge_model))
    text = out["messages"][-1].text
    assert "migration" not in text and "Open question" in text
    assert "rose to 9.2 seconds" in text and "rolled back at 14:20" in text
    (report,) = out["trust_reports"]
    assert report.decision == "modified" and report.released
    codes = [f.code for f in report.findings]
    assert codes == ["judge_causal", "judge"]
    summary = report.findings[1]
    assert summary.passed
    assert (summary.detail["judge_calls"], summary.detail["judge_deletions"]) == (1, 1)
    (delete,) = [o for o in report.overrides if o.kind == "sentence_delete"]
    assert delete.before == IMPLIED and delete.reason.startswith("judge:")
    # counts survive the content-free form a UI is streamed: the codes say it
    assert [f.code for f in report.content_free().findings] == codes
    assert len(judge_model.calls) == 1


@pytest.mark.parametrize("way", WAYS)
def test_a_broken_judge_halts_the_crossing_and_releases_nothing(way: str) -> None:
    judge_model = ScriptedChatModel(responses=["Looks fine to me.", '{"1": "plain"}'])
    graph = app(judge_model, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"broken-{way}"}}
    with pytest.raises(GateHalted) as caught:
        run(way, graph, config)
    assert "redact/judge_failed" in str(caught.value)
    report = caught.value.report
    assert report.decision == "halted" and not report.released
    (failed,) = report.failed
    assert (failed.verifier, failed.code) == ("redact", "judge_failed")
    assert "failed twice" in failed.message
    assert len(judge_model.calls) == 2
    state = graph.get_state(config).values
    assert not any("migration" in m.text for m in state.get("messages", []))


@pytest.fixture
def sdk() -> Iterator[Otel]:
    o = make_otel()
    with global_providers(o):
        yield o


@pytest.mark.parametrize("way", WAYS)
def test_the_verifier_span_says_what_the_judge_did(sdk: Otel, way: str) -> None:
    run(way, app(ScriptedChatModel(responses=[honest])))
    attrs = dict(sdk.one("trustgate.verify").attributes or {})
    assert attrs[J.NAME] == "scripted"
    assert (attrs[J.CALL_COUNT], attrs[J.DELETION_COUNT]) == (1, 1)
    assert (attrs[J.SENTENCE_COUNT], attrs[J.CACHED_COUNT]) == (3, 0)
    assert not any("migration" in str(v) for v in attrs.values())
    # a draft check without a judge has none of them
    sdk.exporter.clear()
    gate = TrustGate(
        "postmortem", reads=LastAIText(), policy=Redact(), evidence=EvidenceSources(record=RECORD)
    )
    g = StateGraph(PM)
    g.add_node("writer", lambda s: {"messages": [AIMessage(DRAFT)]})
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    guard(g, {"writer": gate}).compile().invoke(inputs())
    plain = dict(sdk.one("trustgate.verify").attributes or {})
    assert not any(k.startswith("trustgate.judge.") for k in plain)


def via_function(judge_model: ScriptedChatModel, kind: str) -> Any:
    """A user's own judge that calls a LangChain model itself (sync or async)."""

    def ask(sentences: Mapping[str, str]) -> str:
        return judge_model.invoke(ModelJudge(judge_model).messages(sentences)).text

    async def aask(sentences: Mapping[str, str]) -> str:
        reply = await judge_model.ainvoke(ModelJudge(judge_model).messages(sentences))
        return reply.text

    return FunctionJudge(ask if kind == "sync function" else aask, cache_size=0)


@pytest.mark.parametrize("kind", ("model", "sync function", "async function"))
@pytest.mark.parametrize("way", ("stream", "astream"))
def test_the_judges_call_stays_out_of_the_graphs_token_stream(way: str, kind: str) -> None:
    """Its reply quotes the sentence it deleted: on the graph's ``messages`` stream or
    its callbacks that would be the very text the gate removed."""
    judge_model = ScriptedChatModel(responses=[honest])
    graph = app(judge_model, judge=None if kind == "model" else via_function(judge_model, kind))
    seen: list[str] = []
    if way == "stream":
        for chunk, _meta in graph.stream(inputs(), stream_mode="messages"):
            seen.append(chunk.text)
    else:

        async def collect() -> None:
            async for chunk, _meta in graph.astream(inputs(), stream_mode="messages"):
                seen.append(chunk.text)

        asyncio.run(collect())
    assert len(judge_model.calls) == 1  # the judge ran
    streamed = "".join(seen)
    assert '"label"' not in streamed and "migration" not in streamed
    assert "rolled back at 14:20" in streamed
