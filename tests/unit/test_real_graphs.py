"""Real third-party graphs, guarded the way the README guards an agent.

Six graphs, each built by its own package with scripted models (``tests/shapes``):
a ``deepagents`` deep agent, ``create_agent`` with LangChain's human-in-the-loop,
summarisation and to-do middleware, ``langgraph-bigtool``, the agentic-RAG tutorial
graph, a ``langmem`` memory agent and ``langchain-mcp-adapters`` tools served by a real
MCP server in a subprocess. For each graph:

* honest: the guarded run ends in the same state as the unguarded one (reports
  aside) with the same tool executions, and its gates verified real claims;
* lying: unguarded, the lie reaches the state and the tools (the control); guarded,
  it appears nowhere outside the audit record (every stream mode, state at every
  depth, history, checkpoint rows, the store, tool executions), watched at least
  through ``stream`` and ``astream``.

Where the gate has a known hole, the test that shows it is a strict ``xfail`` naming
what leaks, so it turns into a passing test when the hole is closed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _bypass_support import find_lies
from _real_graphs_support import _answers, _verified, honest_runs_alike
from langchain_core.messages import HumanMessage
from shapes import agent_middleware, bigtool, deep_agent, memory_agent
from shapes import rag_tutorial as agentic_rag

import trustgate
from trustgate.errors import ConfigurationError

# --- the harness ------------------------------------------------------------------------------


# --- 1. deepagents: a deep agent, its sub-agent and its files -----------------------------------


def test_deep_agent_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, final = honest_runs_alike(deep_agent.build, tmp_path)
    assert sorted(name for name, _args in shape.executions()) == [
        "edit_file",
        "read_file",  # by the sub-agent, inside the ``task`` tool
        "task",
        "write_file",
    ]
    report = final["files"][deep_agent.REPORT]["content"]
    assert f"> {deep_agent.TRUE_LINE}" in report and "Status: final" in report
    assert deep_agent.TRUE_LINE in _answers(final)[-1]


def test_deep_agent_evidence_laundering_is_refused() -> None:
    """A gate that takes the agent's own filesystem as evidence would believe a line the
    agent wrote there itself (the control below shows the laundering): guard() refuses
    it, naming the node the model writes the files through."""
    shape = deep_agent.build("lying", launder=True)
    with pytest.raises(ConfigurationError) as refused:
        trustgate.guard(shape.app, deep_agent.gates(trustgate.FromState("files")))
    assert "'files'" in str(refused.value) and "'tools'" in str(refused.value)


def test_deep_agent_laundering_control() -> None:
    """Unguarded, the laundering run ends with the invented line cited as the log's."""
    shape = deep_agent.build("lying", launder=True)
    final = shape.run_to_end(shape.app)
    assert find_lies(_answers(final)[-1], shape.lies)
    assert find_lies(final["files"][deep_agent.NOTES], shape.lies)


# --- 2. create_agent with human-in-the-loop, summarisation and to-do middleware -----------------


def test_agent_middleware_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, final = honest_runs_alike(agent_middleware.build, tmp_path)
    # the middleware really ran: a plan, a summary in place of the older messages, and
    # a person approved the refund
    assert final["todos"][0]["content"] == f"Look up order {agent_middleware.ORDER}"
    first = final["messages"][0]
    assert isinstance(first, HumanMessage) and agent_middleware.SUMMARY in first.text
    assert shape.models["summariser"].calls
    (request,) = shape.answered
    assert request["action_requests"][0]["name"] == "issue_refund"
    assert (
        "issue_refund",
        {"amount": "$40.00", "destination": "card ending 4242", "order_id": "B-2002"},
    ) in shape.executions()


# --- 3. langgraph-bigtool: tools retrieved from a store ------------------------------------------


def test_bigtool_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, final = honest_runs_alike(bigtool.build, tmp_path)
    assert final["selected_tool_ids"] == ["get_invoice", "pay_invoice"]  # from the store
    assert [n for n, _a in shape.executions()] == ["get_invoice", "pay_invoice", "retrieve_tools"]


# --- 4. the agentic-RAG tutorial graph ------------------------------------------------------------


def test_agentic_rag_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, final = honest_runs_alike(agentic_rag.build, tmp_path)
    # the first retrieval was graded irrelevant and the question rewritten
    assert [a["query"] for _n, a in shape.executions()] == ["X200 battery hours", "firmware notes"]
    assert any(isinstance(m, HumanMessage) and "hours" in m.text for m in final["messages"][1:])
    assert _answers(final)[-1] == agentic_rag.TRUE_ANSWER


def test_agentic_rag_answer_checked_against_what_was_retrieved() -> None:
    """The retrieved passages are evidence for the answer: the tool node writes them into
    ``messages``, so the key is marked trusted, and read as it stood before the step, so
    the answer the node appends is no rewrite of its evidence."""
    shape = agentic_rag.build("honest")
    with pytest.raises(ConfigurationError, match="retrieve"):
        trustgate.guard(shape.app, agentic_rag.gates(trustgate.FromState("messages")))
    evidence = trustgate.FromState("messages", trusted=True, before_step=True)
    app = trustgate.guard(shape.app, agentic_rag.gates(evidence))
    config = shape.config()
    final = shape.run_to_end(app, config)
    assert _answers(final)[-1] == agentic_rag.TRUE_ANSWER
    _verified(app, config)


# --- 5. langmem: a memory agent and its store -----------------------------------------------------


def test_memory_agent_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, _final = honest_runs_alike(memory_agent.build, tmp_path)
    (memories,) = shape.store_values()
    assert memories == sorted(
        ({"content": m} for m in memory_agent.TRUE_MEMORIES), key=lambda v: v["content"]
    )
