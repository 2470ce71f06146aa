"""Guarded graphs as the agent server loads them (``langgraph.json`` names this file).

``tests/integration/test_served_graphs.py`` serves them with ``langgraph dev`` and reads the record
back through ``langgraph_sdk``. The models are scripted (no network) and answer from the
question they are asked, not from a call counter, so one server process serves any
number of runs and threads:

* ``"pass ..."``: the truth; the gate passes it;
* ``"override ..."``: a lie in ``answer``; the gate overrides the field;
* ``"halt ..."``: the truth in ``answer`` and the lie in ``notes``, a part no gate reads
  or declares: the crossing halts.

``graph`` is a ``StateGraph`` whose schema does not declare ``trust_reports`` (every
report, passes too, also on the ``custom`` stream: ``stream_passes=True``), ``plain`` the
same graph unguarded (the control); ``agent`` is LangChain's ``create_agent`` (schema
without ``trust_reports`` either), its model node guarded, and ``plain_agent`` the same
agent unguarded. The guarded ones record into the report log the environment names
(``report_log=True``: ``TRUSTGATE_DATABASE_URL``), which ``trustgate.server`` serves.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.policies import Halt, Override
from trustgate.readers import FromKey, LastAIText
from trustgate.testing import ScriptedChatModel
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"
"""Text only the lie contains: an invented record the model cites."""
LIE_TEXT = f"The refund was approved, see {LIE}."
TRUE_TEXT = "The refund is not approved yet."


def _asked(messages: list[BaseMessage]) -> str:
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    return str(humans[-1].content) if humans else ""


def _reply(messages: list[BaseMessage]) -> str:
    asked = _asked(messages)
    return LIE_TEXT if asked.startswith(("override", "lie")) else TRUE_TEXT


def lie_check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("ledger", "unsupported", "names a record no source has")]
    return [Finding.ok("ledger")]


CHECK = FunctionVerifier(lie_check, name="ledger")


# --- a StateGraph -----------------------------------------------------------------------


class S(TypedDict, total=False):
    question: str
    answer: str
    notes: str
    done: bool


model = ScriptedChatModel(responses=[_reply], repeat_last=True)


def agent_node(state: S) -> dict[str, Any]:
    question = state.get("question", "")
    text = str(model.invoke([HumanMessage(question)]).content)
    if question.startswith("halt"):
        return {"answer": TRUE_TEXT, "notes": LIE_TEXT}
    return {"answer": text}


def after_node(state: S) -> dict[str, Any]:
    return {"done": True}


builder = StateGraph(S)
builder.add_node("agent", agent_node)
builder.add_node("after", after_node)
builder.add_edge(START, "agent")
builder.add_edge("agent", "after")
builder.add_edge("after", END)

answer_gate = TrustGate(
    "facts",
    reads=FromKey("answer"),
    verifiers=[CHECK],
    policy=Override("answer", "withheld"),
)
graph = trustgate.guard(
    builder, {"agent": answer_gate}, report_log=True, stream_passes=True
).compile()
plain = builder.compile()
"""The same graph unguarded: the control, where the lie must show."""


# --- LangChain's create_agent -----------------------------------------------------------


agent_model = ScriptedChatModel(responses=[lambda m: AIMessage(_reply(m))], repeat_last=True)
plain_agent = create_agent(agent_model, [])
agent = trustgate.guard(
    plain_agent,
    {"model": TrustGate("text", reads=LastAIText(), verifiers=[CHECK], policy=Halt())},
    report_log=True,
)
