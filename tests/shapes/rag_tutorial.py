"""The agentic-RAG tutorial graph of LangGraph's documentation ("Build a custom RAG
agent"), node for node, with an in-memory retriever.

``generate_query_or_respond`` (the response model with the retriever tool bound) →
``retrieve`` (a ``ToolNode``) → ``grade_documents`` (a routing function: a grader model
with structured output, ``GradeDocuments``) → ``generate_answer`` or
``rewrite_question`` (which asks again, as a new human message). The tutorial's prompts
are kept; the retriever is a keyword match over three handbook passages instead of a
vector store (no embeddings, no network).

Scenario: "how long does the X200 battery last?". The first query looks in the wrong
place (firmware notes); the grader finds them irrelevant, the question is rewritten,
the second query finds the battery passage, and the answer quotes it. The lying
response model quotes a battery life and a cycle count no passage has.

The gate stands on ``generate_answer``: every span its answer quotes must be in a
handbook passage (``LastAIText``); a failed answer halts the run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field

import trustgate
from trustgate import Finding, verifier

from ._common import Personality, ai, call, responder, text_of
from ._real import RealShape, ToolRecorder, found_in, quoted

NAME = "agentic_rag"
LIE_NODE = "generate_answer"
LIES = ("lasts 30 hours", "2,000 charge cycles")

DOCS = (
    "Handbook 2.1: The X200 battery lasts 14 hours on a full charge.",
    "Handbook 2.2: The X200 charges to 80% in 45 minutes with the 65 W adapter.",
    "Release notes 3.1: firmware 3.1 fixed the Bluetooth pairing bug.",
)
TRUE_ANSWER = 'The handbook says the X200 battery "lasts 14 hours on a full charge".'
FALSE_ANSWER = (
    'The handbook says the X200 battery "lasts 30 hours on a full charge" '
    'and is rated for "2,000 charge cycles".'
)

# the tutorial's prompts
GRADE_PROMPT = (
    "You are a grader assessing relevance of a retrieved document to a user question. \n "
    "Here is the retrieved document: \n\n {context} \n\n"
    "Here is the user question: {question} \n"
    "If the document contains keyword(s) or semantic meaning related to the user question, "
    "grade it as relevant. \n"
    "Give a binary score 'yes' or 'no' score to indicate whether the document is relevant "
    "to the question."
)
REWRITE_PROMPT = (
    "Look at the input and try to reason about the underlying semantic intent / meaning.\n"
    "Here is the initial question:"
    "\n ------- \n"
    "{question}"
    "\n ------- \n"
    "Formulate an improved question:"
)
GENERATE_PROMPT = (
    "You are an assistant for question-answering tasks. "
    "Use the following pieces of retrieved context to answer the question. "
    "If you don't know the answer, just say that you don't know. "
    "Use three sentences maximum and keep the answer concise.\n"
    "Question: {question} \n"
    "Context: {context}"
)
_WORD = re.compile(r"[a-z0-9]+")


class GradeDocuments(BaseModel):
    """Grade documents using a binary score for relevance check."""

    binary_score: str = Field(
        description="Relevance score: 'yes' if relevant, or 'no' if not relevant"
    )


def response_model(personality: Personality) -> Any:
    """The tutorial's one response model, serving three nodes, told apart by prompt."""

    def reply(messages: list[BaseMessage]) -> AIMessage | str:
        text = text_of(messages)
        if text.startswith("You are an assistant for question-answering tasks."):
            return TRUE_ANSWER if personality == "honest" else FALSE_ANSWER
        if text.startswith("Look at the input"):
            return "How many hours does the X200 battery last on a full charge?"
        if any(isinstance(m, HumanMessage) and "hours" in m.text for m in messages):
            return ai("", call("retrieve_handbook", query="X200 battery hours"))
        return ai("", call("retrieve_handbook", query="firmware notes"))

    return responder(personality, reply)


def grader_model() -> Any:
    """Relevant when the retrieved passages speak of what the question asks about."""

    def reply(messages: list[BaseMessage]) -> str:
        prompt = text_of(messages)
        context = prompt.split("Here is the retrieved document:", 1)[-1]
        context = context.split("Here is the user question:", 1)[0]
        return '{"binary_score": "%s"}' % ("yes" if "battery" in context else "no")

    return responder("honest", reply)


# --- the gate ------------------------------------------------------------------------------


@verifier
def quotes_in_handbook(text: str, evidence: Any) -> list[Finding]:
    """Every span the answer quotes is in a handbook passage (the passages as text, or
    the messages that carried them)."""
    docs = [d if isinstance(d, str) else d.text for d in evidence.require("docs")]
    spans = quoted(text)
    if not spans:
        return [Finding.failed("quotes_in_handbook", "no_quote", "the answer quotes nothing")]
    return [
        Finding.ok("quotes_in_handbook", subject=span)
        if found_in(span, docs)
        else Finding.failed(
            "quotes_in_handbook", "not_in_handbook", "no passage says this", subject=f"#{i}"
        )
        for i, span in enumerate(spans)
    ]


def gates(docs: Any = None) -> dict[str, Any]:
    """The gate on ``generate_answer``; ``docs`` is where quotes must come from (by
    default the handbook itself, a fixed value)."""
    answer = trustgate.TrustGate(
        "answer_quotes",
        reads=trustgate.LastAIText(),
        verifiers=[quotes_in_handbook],
        evidence=trustgate.EvidenceSources(extra={"docs": DOCS if docs is None else docs}),
    )  # policy: Halt()
    return {"generate_answer": answer}


def build_graph(models: dict[str, Any]) -> StateGraph[Any, Any, Any, Any]:
    @tool
    def retrieve_handbook(query: str) -> str:
        """Search and return passages of the X200 handbook and release notes."""
        words = set(_WORD.findall(query.lower()))
        hits = [d for d in DOCS if words & set(_WORD.findall(d.lower()))]
        return "\n\n".join(hits) or "no passage found"

    retriever_tool = retrieve_handbook
    response = models["response"]
    grader = models["grader"]

    def generate_query_or_respond(state: MessagesState) -> dict[str, Any]:
        """Call the model to generate a response based on the current state. Given
        the question, it will decide to retrieve using the retriever tool, or simply
        respond to the user."""
        reply = response.bind_tools([retriever_tool]).invoke(state["messages"])
        return {"messages": [reply]}

    def grade_documents(state: MessagesState) -> Literal["generate_answer", "rewrite_question"]:
        """Determine whether the retrieved documents are relevant to the question."""
        question = state["messages"][0].content
        context = state["messages"][-1].content
        prompt = GRADE_PROMPT.format(question=question, context=context)
        graded = grader.with_structured_output(GradeDocuments).invoke(
            [{"role": "user", "content": prompt}]
        )
        return "generate_answer" if graded.binary_score == "yes" else "rewrite_question"

    def rewrite_question(state: MessagesState) -> dict[str, Any]:
        """Rewrite the original user question."""
        question = state["messages"][0].content
        prompt = REWRITE_PROMPT.format(question=question)
        reply = response.invoke([{"role": "user", "content": prompt}])
        return {"messages": [HumanMessage(content=reply.content)]}

    def generate_answer(state: MessagesState) -> dict[str, Any]:
        """Generate an answer."""
        question = state["messages"][0].content
        context = state["messages"][-1].content
        prompt = GENERATE_PROMPT.format(question=question, context=context)
        reply = response.invoke([{"role": "user", "content": prompt}])
        return {"messages": [reply]}

    workflow = StateGraph(MessagesState)
    workflow.add_node(generate_query_or_respond)
    workflow.add_node("retrieve", ToolNode([retriever_tool]))
    workflow.add_node(rewrite_question)
    workflow.add_node(generate_answer)
    workflow.add_edge(START, "generate_query_or_respond")
    workflow.add_conditional_edges(
        "generate_query_or_respond", tools_condition, {"tools": "retrieve", END: END}
    )
    workflow.add_conditional_edges("retrieve", grade_documents)
    workflow.add_edge("generate_answer", END)
    workflow.add_edge("rewrite_question", "generate_query_or_respond")
    return workflow


def build(personality: Personality = "honest", *, marker_dir: Path | None = None) -> RealShape:
    recorder = ToolRecorder(marker_dir)
    models = {"response": response_model(personality), "grader": grader_model()}
    builder = build_graph(models)
    return RealShape(
        name=NAME,
        personality=personality,
        builder=builder,
        app=builder.compile(checkpointer=InMemorySaver()),
        inputs={"messages": [HumanMessage("How long does the X200 battery last?")]},
        lies=LIES,
        lie_node=LIE_NODE,
        model_nodes=("generate_query_or_respond", "rewrite_question", "generate_answer"),
        recorder=recorder,
        models=models,
        gates=gates(),
    )
