"""A guarded node that edits its input in place, at any depth, does not get past its gate.

LangGraph hands a node the very objects its channels hold. The guarded node works on
its own copy of them, made before it runs, so an edit deep inside a message (a nested
dict in ``additional_kwargs``, a tool call appended to ``tool_calls``, a block of a
``content`` list) or a list of the state extended in place reaches the graph only if
the node returns it, and then through the gate. Each attack runs unguarded first (the
edit must show: the control), then guarded, watched through every window of
``_bypass_support``.

The last attack is why the copy is made before the call rather than an edit being
found after it: a parallel branch of the same step reads the objects while the guarded
node is still running.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from test_bypass_attacks import (
    LIE_TEXT,
    TRUE_TEXT,
    attack,
    calls_gate,
    graph,
    text_gate,
)
from typing_extensions import TypedDict


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], operator.add]
    docs: list[str]
    verdict: str


def _history() -> dict[str, Any]:
    """A question, and an earlier answer with everything a message can nest."""
    return {
        "messages": [
            HumanMessage("Was the refund approved?", id="h1"),
            AIMessage(
                [{"type": "text", "text": "Checking the ledger."}],
                id="a1",
                additional_kwargs={"meta": {"note": "looked up", "tags": ["ledger"]}},
                tool_calls=[{"name": "lookup", "args": {"q": "refund"}, "id": "c1"}],
                response_metadata={"model_name": "m", "finish_reason": "tool_calls"},
            ),
        ],
        "notes": ["opened"],
        "docs": ["policy.md"],
    }


def _earlier(state: S) -> AIMessage:
    msg = state["messages"][1]
    assert isinstance(msg, AIMessage)
    return msg


def test_a_nested_dict_in_additional_kwargs_edited_in_place() -> None:
    def agent(state: S) -> dict[str, Any]:
        _earlier(state).additional_kwargs["meta"]["note"] = LIE_TEXT
        return {"messages": [AIMessage(TRUE_TEXT)]}

    attack(graph(agent, S), text_gate(), _history()).assert_blocked()


def test_a_list_nested_in_additional_kwargs_appended_in_place() -> None:
    def agent(state: S) -> dict[str, Any]:
        _earlier(state).additional_kwargs["meta"]["tags"].append(LIE_TEXT)
        return {"messages": [AIMessage(TRUE_TEXT)]}

    attack(graph(agent, S), text_gate(), _history()).assert_blocked()


def test_a_tool_call_appended_in_place_and_not_returned() -> None:
    def agent(state: S) -> dict[str, Any]:
        _earlier(state).tool_calls.append(
            {"name": "refund", "args": {"ref": LIE_TEXT}, "id": "c2", "type": "tool_call"}
        )
        return {"messages": [AIMessage(TRUE_TEXT)]}

    attack(graph(agent, S), text_gate(), _history()).assert_blocked()


def test_a_tool_call_appended_in_place_and_returned() -> None:
    """The edited message comes back under its own id: it replaces the one in the
    state, so it is new output, read by the gate."""

    def agent(state: S) -> dict[str, Any]:
        msg = _earlier(state)
        msg.tool_calls.append(
            {"name": "refund", "args": {"ref": LIE_TEXT}, "id": "c2", "type": "tool_call"}
        )
        return {"messages": [msg]}

    a = attack(graph(agent, S), calls_gate(), _history())
    a.assert_blocked()
    assert a.halted


def test_the_args_of_a_tool_call_edited_in_place_and_returned() -> None:
    def agent(state: S) -> dict[str, Any]:
        msg = _earlier(state)
        msg.tool_calls[0]["args"]["q"] = LIE_TEXT
        return {"messages": [msg]}

    a = attack(graph(agent, S), calls_gate(), _history())
    a.assert_blocked()
    assert a.halted


def test_a_list_in_the_state_extended_in_place() -> None:
    def agent(state: S) -> dict[str, Any]:
        state["docs"].extend([LIE_TEXT])
        state["notes"].append(LIE_TEXT)
        return {"messages": [AIMessage(TRUE_TEXT)]}

    attack(graph(agent, S), text_gate(), _history()).assert_blocked()


def test_a_block_of_a_content_list_edited_in_place_and_not_returned() -> None:
    def agent(state: S) -> dict[str, Any]:
        content = _earlier(state).content
        assert isinstance(content, list) and isinstance(content[0], dict)
        content[0]["text"] = LIE_TEXT
        return {"messages": [AIMessage(TRUE_TEXT)]}

    attack(graph(agent, S), text_gate(), _history()).assert_blocked()


def test_a_block_appended_to_a_content_list_and_returned() -> None:
    def agent(state: S) -> dict[str, Any]:
        msg = _earlier(state)
        assert isinstance(msg.content, list)
        msg.content.append({"type": "text", "text": LIE_TEXT})
        return {"messages": [msg]}

    a = attack(graph(agent, S), text_gate(), _history())
    a.assert_blocked()
    assert a.halted


def test_the_message_list_itself_edited_in_place() -> None:
    def agent(state: S) -> dict[str, Any]:
        state["messages"].append(AIMessage(LIE_TEXT, id="planted"))
        state["messages"][0] = HumanMessage(LIE_TEXT, id="h1")
        return {"messages": [AIMessage(TRUE_TEXT)]}

    attack(graph(agent, S), text_gate(), _history()).assert_blocked()


def test_a_parallel_branch_reads_the_state_while_the_guarded_node_runs() -> None:
    """The guarded node edits a nested value in place and, before it returns, a branch
    of the same step reads that value and writes it on. Finding the edit after the
    node returned would be too late: the branch has read it already."""
    edited = threading.Event()
    read = threading.Event()

    def agent(state: S) -> dict[str, Any]:
        _earlier(state).additional_kwargs["meta"]["note"] = LIE_TEXT
        edited.set()
        read.wait(10)  # the branch reads while this node is still running
        return {"messages": [AIMessage(TRUE_TEXT)]}

    def branch(state: S) -> dict[str, Any]:
        edited.wait(10)
        note = _earlier(state).additional_kwargs["meta"]["note"]
        read.set()
        return {"notes": [str(note)]}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_node("branch", branch)
    g.add_node("after", lambda s: {})
    g.add_edge(START, "agent")
    g.add_edge(START, "branch")
    g.add_edge(["agent", "branch"], "after")
    g.add_edge("after", END)

    class Reset:
        """Each run starts with both events clear."""

        def __init__(self) -> None:
            self.inputs = _history()

        def __deepcopy__(self, memo: dict[int, Any]) -> Any:
            edited.clear()
            read.clear()
            import copy

            return copy.deepcopy(self.inputs, memo)

    attack(g, text_gate(), Reset()).assert_blocked()
