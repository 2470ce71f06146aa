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

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _bypass_support import Observation, Run, find_lies, normalise, observe, observe_async
from _bypass_support import see_recorder as _see_recorder
from langchain_core.messages import AIMessage, HumanMessage
from shapes import agent_middleware, bigtool, deep_agent, mcp_alerts, memory_agent
from shapes import rag_tutorial as agentic_rag
from shapes._real import RealShape, scrub

import trustgate
from trustgate.errors import ConfigurationError

# tiers per test: the honest runs are unit tests, the lie harness is the bypass tier,
# the MCP server is a subprocess (integration)
unit, bypass, integration = pytest.mark.unit, pytest.mark.bypass, pytest.mark.integration


# --- the harness ------------------------------------------------------------------------------


def _comparable(final: dict[str, Any]) -> Any:
    return scrub(normalise({k: v for k, v in final.items() if k != "trust_reports"}))


def _verified(app: Any, config: dict[str, Any]) -> list[trustgate.Report]:
    """The gates' reports of a run: every one passed, and some verifier checked a claim."""
    reports = trustgate.reports(app, config)
    assert reports, "the gates never ran"
    assert [r.decision for r in reports] == ["pass"] * len(reports), [
        (r.gate, r.decision, [(f.code, f.message) for f in r.failed]) for r in reports
    ]
    checked = [f for r in reports for f in r.findings if f.passed and f.verifier != "gate"]
    assert checked, "no verifier checked anything: the honest run proves nothing"
    return reports


def honest_runs_alike(build: Any, tmp_path: Path) -> tuple[RealShape, dict[str, Any]]:
    """An honest build run unguarded, a second one guarded: the same final state
    (reports aside), the same tool executions, the same store; the guarded shape and
    its final state."""
    plain = build("honest", marker_dir=tmp_path / "plain")
    final_plain = plain.run_to_end(plain.app)
    shape = build("honest", marker_dir=tmp_path / "guarded")
    app = shape.guarded()
    config = shape.config()
    final = shape.run_to_end(app, config)
    assert _comparable(final) == _comparable(final_plain)
    assert shape.executions() == plain.executions()
    assert shape.executions(), "no tool ran: the run proves nothing about tools"
    assert shape.store_values() == plain.store_values()
    assert shape.answered == plain.answered
    assert not find_lies(final, shape.lies)
    assert "trust_reports" not in final_plain
    _verified(app, config)
    return shape, final


def _watch(shape: RealShape, app: Any, how: str) -> Observation:
    """One observed run: every stream item, the state everywhere, the store, the tools."""
    run = Run(
        app=app,
        inputs=shape.inputs,
        config=shape.config(),
        lies=shape.lies,
        context=shape.context,
        answer=shape.answer,
    )
    shape.reset()
    obs = observe(run, how) if how == "stream" else asyncio.run(observe_async(run, how))
    _see_recorder(obs, shape.recorder, ())
    obs.see("tool_executions", shape.executions())
    obs.see("store", shape.store_values())
    return obs


def lie_blocked(build: Any, ways: tuple[str, ...] = ("stream", "astream")) -> dict[str, Any]:
    """The control (unguarded, the lie reaches the state, and the tools the shape names),
    then each way guarded, on a fresh build: the lie appears nowhere but in the audit
    record, and no tool runs with it."""
    plain = build("lying")
    control = _watch(plain, plain.app, ways[0])
    assert control.halted is None and control.error is None
    assert find_lies(control.final, plain.lies), "unguarded, the lie never reached the state"
    for tool in plain.lie_tools:
        runs = [args for name, args in plain.executions() if name == tool]
        assert find_lies(runs, plain.lies), f"unguarded, the lie never reached {tool}"
    out: dict[str, Observation] = {}
    for how in ways:
        shape = build("lying")
        obs = _watch(shape, shape.guarded(), how)
        obs.assert_blocked()
        assert not find_lies(shape.executions(), shape.lies)
        failed = [f for r in obs.reports for f in r.failed if f.verifier != "gate"]
        assert failed, f"[{how}] no verifier failed the lie"
        assert obs.error is None, obs.error
        out[how] = obs
    return out


def _answers(final: dict[str, Any]) -> list[str]:
    return [m.text for m in final.get("messages", []) if isinstance(m, AIMessage) and m.text]


# --- 1. deepagents: a deep agent, its sub-agent and its files -----------------------------------


@unit
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


@bypass
def test_deep_agent_lie_blocked() -> None:
    runs = lie_blocked(deep_agent.build)
    for obs in runs.values():
        # the report was blocked; told so, the agent still cited its cause: halted
        assert [r.decision for r in obs.reports if r.decision != "pass"] == [
            "blocked",
            "halted",
        ]
        assert deep_agent.REPORT not in obs.final.get("files", {})


@unit
def test_deep_agent_evidence_laundering_is_refused() -> None:
    """A gate that takes the agent's own filesystem as evidence would believe a line the
    agent wrote there itself (the control below shows the laundering): guard() refuses
    it, naming the node the model writes the files through."""
    shape = deep_agent.build("lying", launder=True)
    with pytest.raises(ConfigurationError) as refused:
        trustgate.guard(shape.app, deep_agent.gates(trustgate.FromState("files")))
    assert "'files'" in str(refused.value) and "'tools'" in str(refused.value)


@unit
def test_deep_agent_laundering_control() -> None:
    """Unguarded, the laundering run ends with the invented line cited as the log's."""
    shape = deep_agent.build("lying", launder=True)
    final = shape.run_to_end(shape.app)
    assert find_lies(_answers(final)[-1], shape.lies)
    assert find_lies(final["files"][deep_agent.NOTES], shape.lies)


# --- 2. create_agent with human-in-the-loop, summarisation and to-do middleware -----------------


@unit
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


@bypass
def test_agent_middleware_lie_blocked() -> None:
    runs = lie_blocked(agent_middleware.build)
    for obs in runs.values():
        # the refund was blocked before any person was asked; the claim halted
        assert obs.halted is not None and not obs.interrupts
        assert [r.decision for r in obs.reports if r.decision != "pass"] == [
            "blocked",
            "halted",
        ]


# --- 3. langgraph-bigtool: tools retrieved from a store ------------------------------------------


@unit
def test_bigtool_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, final = honest_runs_alike(bigtool.build, tmp_path)
    assert final["selected_tool_ids"] == ["get_invoice", "pay_invoice"]  # from the store
    assert [n for n, _a in shape.executions()] == ["get_invoice", "pay_invoice", "retrieve_tools"]


@bypass
def test_bigtool_lie_blocked() -> None:
    runs = lie_blocked(bigtool.build)
    for obs in runs.values():
        assert obs.halted is not None
        assert obs.halted.report.decision == "halted"


# --- 4. the agentic-RAG tutorial graph ------------------------------------------------------------


@unit
def test_agentic_rag_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, final = honest_runs_alike(agentic_rag.build, tmp_path)
    # the first retrieval was graded irrelevant and the question rewritten
    assert [a["query"] for _n, a in shape.executions()] == ["X200 battery hours", "firmware notes"]
    assert any(isinstance(m, HumanMessage) and "hours" in m.text for m in final["messages"][1:])
    assert _answers(final)[-1] == agentic_rag.TRUE_ANSWER


@bypass
def test_agentic_rag_lie_blocked() -> None:
    runs = lie_blocked(agentic_rag.build)
    for obs in runs.values():
        assert obs.halted is not None and obs.halted.report.node == "generate_answer"


@unit
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


@unit
def test_memory_agent_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, _final = honest_runs_alike(memory_agent.build, tmp_path)
    (memories,) = shape.store_values()
    assert memories == sorted(
        ({"content": m} for m in memory_agent.TRUE_MEMORIES), key=lambda v: v["content"]
    )


@bypass
def test_memory_agent_lie_blocked() -> None:
    runs = lie_blocked(memory_agent.build)
    for obs in runs.values():
        # only the invented memory was blocked; the true ones were stored, the run ended
        assert obs.halted is None
        assert "Noted" in _answers(obs.final)[-1]
        assert [r.decision for r in obs.reports if r.decision != "pass"] == ["blocked"]


# --- 6. langchain-mcp-adapters: tools of a real MCP server (a subprocess) -------------------------


@integration
def test_mcp_honest_guarded_ends_as_unguarded(tmp_path: Path) -> None:
    shape, _final = honest_runs_alike(mcp_alerts.build, tmp_path)
    # what the server itself recorded
    assert shape.executions() == [
        ("ack_alert", {"alert_id": "ALRT-101", "note": 'on it: "disk 91% full"'}),
        ("get_alert", {"alert_id": "ALRT-101"}),
    ]


@integration
def test_mcp_lie_blocked() -> None:
    """MCP tools are async only: the async ways (astream, astream_events)."""
    runs = lie_blocked(mcp_alerts.build, ways=("astream", "events"))
    for obs in runs.values():
        assert obs.halted is not None
