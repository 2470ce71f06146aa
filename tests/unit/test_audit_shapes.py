"""audit() on the real third-party shapes (tests/shapes): never a false all-clear.

Each shape is audited unguarded (every model node is reported, unguarded or unknown),
half-guarded (exit 1 while any model node is open) and fully guarded (0 once every
path, handoffs included, is held); a sample run with stubs never executes a real tool
unless asked to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from shapes import BUILDERS, Shape, build
from typing_extensions import TypedDict

from trustgate import Finding, TrustGate
from trustgate.cli import main
from trustgate.graph import AuditResult, audit, guard
from trustgate.readers import FunctionReader
from trustgate.verifiers.base import FunctionVerifier

NAMES = sorted(BUILDERS)
MULTI = [n for n in NAMES if len(build(n).model_nodes) > 1]


def _ok(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("ok")]


def _gate(node: str) -> TrustGate:
    """A gate that inspects the node's whole update and passes it (the audit asks only
    where gates stand; what they check is the gates' business)."""
    return TrustGate(
        f"gate_{node}",
        reads=FunctionReader(lambda update: dict(update) or None),
        verifiers=[FunctionVerifier(_ok, name="ok")],
        passthrough=["goto", "send", "custom"],
    )


def _guarded(shape: Shape, nodes: tuple[str, ...]) -> Any:
    return guard(shape.builder, {n: _gate(n) for n in nodes})


def _sample(shape: Shape, graph: Any, **kw: Any) -> AuditResult:
    return audit(
        graph,
        shape.inputs,
        config={"configurable": dict(shape.configurable)},
        context=shape.context,
        resume=kw.pop("resume", shape.resume),
        **kw,
    )


@pytest.mark.parametrize("name", NAMES)
def test_unguarded_shape_reports_every_model_node_never_all_clear(name: str) -> None:
    shape = build(name)
    result = audit(shape.builder)
    found = {c.node: c for c in result}
    assert set(shape.model_nodes) <= set(found), set(shape.model_nodes) - set(found)
    assert result.status == "unguarded"
    for node in shape.model_nodes:
        assert found[node].status in ("unguarded", "unknown")
        assert all(p.status != "guarded" for p in found[node].paths)
    # handoffs are followed to their targets, and open
    for node, targets in shape.handoffs.items():
        handoffs = {p.target: p for p in found[node].paths if p.kind == "handoff"}
        assert set(targets) <= set(handoffs), (node, handoffs)
        assert all(handoffs[t].status == "unguarded" for t in targets)
    # the same from the shell: exit 1, with every model node in the table
    assert main(["audit", f"shapes.{name}:graph"]) == 1


@pytest.mark.parametrize("name", MULTI)
def test_half_guarded_shape_exits_1_and_names_the_gate(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shape = build(name)
    guarded = _guarded(shape, (shape.lie_node,))
    result = audit(guarded)
    found = {c.node: c for c in result}
    lying = found[shape.lie_node]
    assert lying.status == "guarded" and lying.gates == (f"gate_{shape.lie_node}",)
    # every path out of the gated node is held, handoffs raised inside it included
    assert all(p.status == "guarded" and p.gate for p in lying.paths)
    assert any(p.kind == "handoff" for p in lying.paths) == (shape.lie_node in shape.handoffs)
    others = set(shape.model_nodes) - {shape.lie_node}
    assert {c.node for c in result.unguarded} == others
    assert result.status == "unguarded"


@pytest.mark.parametrize("name", NAMES)
def test_fully_guarded_shape_is_proven_guarded_and_keeps_every_crossing(name: str) -> None:
    shape = build(name)
    before = audit(shape.builder)
    after = audit(_guarded(shape, shape.model_nodes))
    assert sorted(c.node for c in after) == sorted(c.node for c in before)  # nothing dropped
    by_node = {c.node: c for c in after}
    for b in before:
        a = by_node[b.node]
        assert a.status == "guarded" and a.gates == (f"gate_{a.node}",)
        # every path listed before is still listed, now held by the named gate
        assert {(p.target, p.kind) for p in b.paths} <= {(p.target, p.kind) for p in a.paths}
    assert after.status == "guarded"


@pytest.mark.parametrize("name", NAMES)
def test_fully_guarded_shape_with_a_sample_run_exits_0(name: str) -> None:
    """The safe sample run goes through every gate, handoffs included (the stub
    answers a handoff tool with its ``Command.PARENT``), and finishes."""
    shape = build(name)
    result = _sample(
        shape, _guarded(shape, shape.model_nodes).compile(checkpointer=shape.checkpointer())
    )
    assert result.sample_run is not None
    assert result.sample_run.outcome == "finished", result.sample_run.detail
    assert result.status == "guarded"


def test_an_interrupt_without_a_resume_value_is_unknown_coverage_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shape = build("research")
    app = _guarded(shape, shape.model_nodes).compile(checkpointer=shape.checkpointer())
    result = _sample(shape, app, resume=())
    run = result.sample_run
    assert run is not None and run.outcome == "interrupted"
    assert run.unreached == ("human_feedback",) and run.resumed == 0
    assert not result.unguarded and result.status == "unknown"
    assert "interrupt in human_feedback" in result.coverage_gap
    # with the plan approved the run goes on through the Send into the section subgraph
    resumed = _sample(shape, app)
    assert resumed.sample_run is not None and resumed.sample_run.resumed == 1
    assert "build_section_with_web_research" in resumed.sample_run.model_nodes


@pytest.mark.parametrize("name", NAMES)
def test_sample_run_never_runs_a_real_tool_unless_asked(name: str, tmp_path: Path) -> None:
    shape = build(name, marker_dir=tmp_path / "markers")
    result = _sample(shape, shape.app)
    run = result.sample_run
    assert run is not None and run.outcome == "finished", run.detail
    assert not shape.recorder.markers() and not shape.recorder.tool_runs
    assert all(not c.ran for c in run.tool_calls)
    # every model the shape scripted was replaced: none of them was asked anything
    assert not any(m.calls for m in shape.models.values())
    stubbed = {c.tool for c in run.tool_calls}
    real = _sample(shape, shape.app, run_tools=True).sample_run
    assert real is not None and real.run_tools
    ran = {c.tool for c in real.tool_calls if c.ran}
    assert {p.stem for p in shape.recorder.markers()} == ran
    if name != "enrichment":  # its agent submits Info first: its tools are never called
        assert ran and stubbed & set(shape.tools)


def test_run_time_model_named_by_context_needs_no_provider(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The react-agent template names a provider model in its context: the sample run
    stubs init_chat_model, so no provider package or key is needed."""
    code = main(
        [
            "audit",
            "shapes.react_agent:graph",
            "--input",
            '{"messages": [{"role": "user", "content": "status of INC-4521?"}]}',
            "--context",
            '{"model": "anthropic/claude-sonnet-4-5"}',
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["status"] == "unguarded"
    assert data["sample_run"]["outcome"] == "finished"
    assert data["sample_run"]["tool_calls"] == [{"node": "tools", "tool": "search", "ran": False}]
    (crossing,) = data["crossings"]
    assert crossing["node"] == "call_model" and crossing["found_by"] == "static+sample_run"
    assert any("load_chat_model" in d for d in crossing["detail"])


def test_resume_values_from_the_shell_pass_the_interrupt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shape = build("research")
    config = json.dumps({"configurable": shape.configurable})
    base = ["audit", "shapes.research:graph", "--input", '{"topic": "fusion"}']
    assert main([*base, "--config", config]) == 1
    out = capsys.readouterr().out
    assert "sample run: interrupted" in out and "0 interrupt(s) resumed" in out
    assert main([*base, "--config", config, "--resume", "true"]) == 1
    out = capsys.readouterr().out
    assert "sample run: finished" in out and "1 interrupt(s) resumed" in out


class S(TypedDict, total=False):
    text: str


def dynamic(state: S) -> dict[str, Any]:
    import importlib

    module = importlib.import_module("json")
    return {"text": module.dumps(state)}


def test_a_node_the_audit_cannot_follow_is_unknown_never_guarded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    g = StateGraph(S)
    g.add_node("dynamic", dynamic)
    g.add_edge(START, "dynamic")
    g.add_edge("dynamic", END)
    result = audit(g)
    (c,) = result
    assert c.status == "unknown" and "dynamic import" in c.reason
    assert result.status == "unknown"
    # gated, the node's output is held whatever it does
    assert audit(guard(g, {"dynamic": _gate("dynamic")})).status == "guarded"


def test_an_errored_sample_run_exits_non_zero_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "boom_graph.py").write_text(
        "from typing_extensions import TypedDict\n"
        "from langgraph.graph import END, START, StateGraph\n"
        "class S(TypedDict, total=False):\n    text: str\n"
        "def boom(state):\n    raise RuntimeError('no network\\nsecond line')\n"
        "g = StateGraph(S)\ng.add_node('boom', boom)\ng.add_edge(START, 'boom')\n"
        "g.add_edge('boom', END)\napp = g.compile()\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "boom_graph:app"]) == 0  # statically: no model anywhere
    capsys.readouterr()
    assert main(["audit", "boom_graph:app", "--input", "{}"]) == 3
    captured = capsys.readouterr()
    assert captured.err.strip() == "trustgate: sample run failed: RuntimeError: no network"
    assert "verdict: UNKNOWN (sample run error: RuntimeError: no network)" in captured.out
