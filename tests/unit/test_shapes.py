"""The real third-party shapes (tests/shapes) run, and unguarded their lies get through.

The bypass matrix and the audit tests stand on these shapes; they prove something only
if (a) the honest build runs to the end the way the original does, and (b) without a
gate the lying build's lie really reaches what acts on it: the final state, a tool
execution, a downstream node's input, the stream. Both are checked here, per shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import StateGraph
from shapes import BUILDERS, Shape, build, lies_in
from shapes._common import MODELS, resolve_chat_model

from trustgate.testing import ScriptedChatModel

NAMES = sorted(BUILDERS)


def _final_words(shape: Shape, final: dict[str, Any]) -> str:
    if "info" in final:
        return str(final["info"])
    if "messages" in final:
        last = final["messages"][-1]
        assert isinstance(last, AIMessage), last
        return last.text
    return str(final.get("final_report"))


# the honest run's last word, per shape: what the original would hand its user
HONEST_ENDS = {
    "supervisor": "no refund is due",
    "swarm": "wired $40.00 to card ending 4242",
    "network": "Booked 3 nights at The Ritz-Carlton",
    "react_agent": "still open",
    "enrichment": "Dana Reyes",
    "reflection": "31 March 1889",
    "research": "National Ignition Facility",
}


@pytest.mark.parametrize("name", NAMES)
def test_honest_run_completes_without_the_lie(name: str, tmp_path: Path) -> None:
    shape = build(name, "honest", marker_dir=tmp_path / "markers")
    assert isinstance(shape.builder, StateGraph)
    config = shape.config()
    final = shape.run(config=config)
    snapshot = shape.app.get_state(config)
    assert snapshot.next == () and not snapshot.interrupts  # ran to the end
    assert HONEST_ENDS[name] in _final_words(shape, final)
    assert not lies_in(final, shape.lies)
    assert not lies_in(shape.recorder.tool_runs, shape.lies)
    assert not lies_in([n.value for n in shape.recorder.node_inputs], shape.lies)
    # every model the shape scripted was asked something, through the graph (the honest
    # supervisor never needs its payments agent)
    idle = {"payments_agent"} if name == "supervisor" else set()
    assert all(m.calls for role, m in shape.models.items() if role not in idle)
    # every model node of the shape ran (its input was recorded)
    ran = {n.node for n in shape.recorder.node_inputs}
    assert set(shape.model_nodes) - idle <= ran, set(shape.model_nodes) - ran
    # a real tool execution leaves a marker file behind
    assert shape.recorder.tool_runs
    written = {p.stem for p in shape.recorder.markers()}
    assert written == {r.tool for r in shape.recorder.tool_runs} <= set(shape.tools)


@pytest.mark.parametrize("name", NAMES)
def test_unguarded_lie_reaches_state_tools_downstream_inputs(name: str) -> None:
    shape = build(name, "lying")
    final = shape.run()
    assert lies_in(final, shape.lies) == list(shape.lies)
    # the lie reaches the input of every node downstream of the lying one
    for node in shape.downstream:
        inputs = shape.recorder.inputs_of(node)
        assert inputs, f"{node} never ran"
        assert lies_in(inputs, shape.lies), f"the lie did not reach {node}'s input"
    # and the arguments of the tools that act on it
    for tool in shape.lie_tools:
        runs = [r for r in shape.recorder.tool_runs if r.tool == tool]
        assert runs and lies_in(runs, shape.lies), f"the lie never reached {tool}"
    # the lie is the lying node's own output: the node ran and is a model node
    assert shape.lie_node in shape.model_nodes
    assert shape.lie_node in {n.node for n in shape.recorder.node_inputs}


@pytest.mark.parametrize("name", NAMES)
def test_unguarded_lie_reaches_every_stream_mode(name: str) -> None:
    shape = build(name, "lying")
    items = shape.stream()
    by_mode: dict[str, list[Any]] = {}
    for _ns, mode, data in items:
        by_mode.setdefault(mode, []).append(data)
    for mode in ("updates", "values", "debug"):
        assert lies_in(by_mode.get(mode, []), shape.lies), f"no lie in the {mode} stream"
    # token streaming: the lying node's model output is streamed in chunks
    chunks = [msg for msg, _meta in by_mode.get("messages", [])]
    streamed = "".join(
        c.text + "".join(str(t.get("args") or "") for t in getattr(c, "tool_call_chunks", []))
        for c in chunks
    )
    assert any(lie in streamed for lie in shape.lies), "no lie in the messages stream"
    # and from inside subgraphs/agents, when the lie is told there
    nested = [ns for ns, mode, data in items if ns and lies_in(data, shape.lies)]
    if name in ("supervisor", "swarm", "network", "reflection", "research"):
        assert nested, "the lie never surfaced in a subgraph's stream"


@pytest.mark.parametrize("name", ["react_agent", "enrichment", "research"])
def test_async_shapes_are_async_as_in_the_templates(name: str) -> None:
    shape = build(name, "honest")
    assert shape.is_async
    with pytest.raises(TypeError, match="async"):
        shape.app.invoke(shape.inputs, shape.config(), context=shape.context)


@pytest.mark.parametrize("name", ["react_agent", "enrichment", "reflection", "research"])
def test_models_are_built_at_run_time_from_a_name(name: str) -> None:
    """No model object is reachable from the graph: the run's context or configuration
    names it, and the node builds it on every call (as the templates do)."""
    shape = build(name, "honest")
    named = str(shape.context) + str(shape.configurable)
    for model in shape.models.values():
        assert not any(model is v for v in _reachable(shape.builder))
    assert "scripted" in named
    # a second, differently-named model answers instead when the run names it
    other = ScriptedChatModel(responses=["x"], repeat_last=True)
    assert resolve_chat_model(MODELS.register(other, "other"), "scripted") is other


def _reachable(builder: StateGraph[Any, Any, Any, Any]) -> list[Any]:
    """Objects reachable from the builder's nodes through closures (one level)."""
    out: list[Any] = []
    for spec in builder.nodes.values():
        fn = getattr(spec.runnable, "func", None) or getattr(spec.runnable, "afunc", None)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                out.append(cell.cell_contents)
            except ValueError:
                continue
    return out


def test_the_recorder_tells_node_inputs_at_depth() -> None:
    shape = build("research", "honest")
    shape.run()
    inner = [n for n in shape.recorder.node_inputs if n.node == "write_section"]
    assert inner and inner[0].path == ("build_section_with_web_research", "write_section")
    feedback = next(n for n in shape.recorder.node_inputs if n.node == "human_feedback")
    assert feedback.path == ("human_feedback",)


def test_the_research_plan_waits_for_a_person() -> None:
    shape = build("research", "honest")
    config = shape.config()
    import asyncio

    asyncio.run(shape.app.ainvoke(shape.inputs, config))
    snapshot = shape.app.get_state(config)
    assert snapshot.next == ("human_feedback",)
    (pending,) = snapshot.interrupts
    assert "Milestones" in str(pending.value)
    assert not shape.recorder.inputs_of("build_section_with_web_research")


def test_scripted_ai_message_replies_are_fresh_copies() -> None:
    reply = AIMessage("same")
    model = ScriptedChatModel(responses=[reply], repeat_last=True)
    first, second = model.invoke("a"), model.invoke("b")
    assert first is not reply and second is not first
    assert first.content == second.content == "same"
