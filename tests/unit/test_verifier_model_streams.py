"""A native async verifier's own model call stays out of the graph's streams.

A verifier that asks a model (a judge) runs outside the guarded node's LangChain run:
its tokens are the gate's business, not the user's. A sync verifier always ran so; a
native async one (``averify``) ran its body in the crossing's context, so its model's
tokens reached ``stream_mode="messages"`` and ``astream_events`` beside the answer.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

import trustgate
from trustgate import Finding
from trustgate.verifiers.base import Evidence

PRIVATE = "JUDGE-PRIVATE"


class Judge:
    """Asks its own model, then passes."""

    name = "judge"
    timeout = 30.0

    def __init__(self) -> None:
        self.model = GenericFakeChatModel(messages=iter([AIMessage(f"{PRIVATE} looks fine")] * 4))
        self.calls = 0

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        raise AssertionError("the async run uses averify")

    async def averify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        self.calls += 1
        await self.model.ainvoke("judge this answer")
        return [Finding.ok(self.name)]


def _app(judge: Judge) -> Any:
    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("the answer")]}

    g = StateGraph(MessagesState)
    g.add_node("answer", answer)
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    gate = trustgate.TrustGate("g", reads=trustgate.LastAIText(), verifiers=[judge])
    return trustgate.guard(g, {"answer": gate}).compile()


async def test_the_judges_tokens_are_not_in_the_messages_stream() -> None:
    judge = Judge()
    chunks = [
        chunk.content
        async for chunk, _ in _app(judge).astream(
            {"messages": [HumanMessage("q")]}, stream_mode="messages"
        )
    ]
    assert judge.calls == 1
    assert chunks == ["the answer"]


async def test_the_judges_model_run_is_not_in_astream_events() -> None:
    judge = Judge()
    events = [e async for e in _app(judge).astream_events({"messages": [HumanMessage("q")]})]
    assert judge.calls == 1
    assert not [e["event"] for e in events if PRIVATE in repr(e)]
    assert any("the answer" in repr(e) for e in events)
