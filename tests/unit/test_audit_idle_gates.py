"""audit(): a gate that verifies nothing is no guard.

A gate without verifiers releases what it reads as verified and what it lets through
unread: a node whose only gates are such gates is reported ``unguarded``, the row names
the gate and says to add a verifier, and ``trustgate audit`` exits 1 on it.
"""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate import Finding, TrustGate
from trustgate.cli import main
from trustgate.graph import TrustGateMiddleware, audit, guard
from trustgate.policies import Override
from trustgate.readers import FromKey
from trustgate.testing import honest_model
from trustgate.verifiers.base import FunctionVerifier

MODEL = honest_model("drafted", repeat_last=True)


class S(TypedDict, total=False):
    text: str
    other: str


def step1(state: S) -> dict[str, Any]:
    return {"text": MODEL.invoke("go").text}


def builder() -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_edge(START, "step1")
    g.add_edge("step1", END)
    return g


def _ok(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("ok")]


def checking(name: str = "check") -> TrustGate:
    return TrustGate(
        name,
        reads=FromKey("text"),
        verifiers=[FunctionVerifier(_ok, name="ok")],
        policy=Override("text", "withheld"),
    )


def open_door(name: str = "open") -> TrustGate:
    """Lets everything through, verifies nothing (a gate that reads claims with no
    verifier is refused where it is built)."""
    return TrustGate(name, passthrough="*")


def test_a_passthrough_everything_gate_without_verifiers_is_unguarded() -> None:
    (c,) = audit(guard(builder(), {"step1": open_door()}))
    assert c.node == "step1" and c.status == "unguarded" and not c.guarded
    (p,) = c.paths
    assert p.status == "unguarded" and p.target == END
    assert p.reason == "gated by 'open', which verifies nothing"
    assert p.fix == "add a verifier to 'open'"
    assert p.gate == "open" and p.via == "step1"
    assert c.gates == ()  # no gate holds it
    assert c.explain(p) == (
        "node 'step1' calls ScriptedChatModel, gated by 'open', which verifies nothing: "
        "add a verifier to 'open'"
    )


def test_a_gate_with_no_verifiers_at_all_is_unguarded_also_in_a_sample_run() -> None:
    bare = TrustGate("bare", passthrough=["text"])
    result = audit(guard(builder(), {"step1": bare}).compile(), {"text": ""})
    assert result.sample_run is not None and result.sample_run.outcome == "finished"
    (c,) = result
    assert c.found_by == "static+sample_run" and c.status == "unguarded"
    assert result.status == "unguarded"
    assert c.paths[0].reason == "gated by 'bare', which verifies nothing"


def test_a_chain_is_guarded_by_its_verifying_gates_only() -> None:
    (c,) = audit(guard(builder(), {"step1": [checking(), open_door("idle")]}))
    assert c.status == "guarded" and c.gates == ("check",)
    assert [(p.gate, p.fix) for p in c.paths] == [("check", "")]
    (c,) = audit(guard(builder(), {"step1": [open_door("one"), open_door("two")]}))
    assert c.status == "unguarded"
    assert c.paths[0].reason == "gated by 'one', 'two', which verify nothing"


def test_middleware_gates_that_verify_nothing_are_no_guard() -> None:
    idle = TrustGate("idle", passthrough="*")
    agent = create_agent(
        honest_model("done", repeat_last=True),
        [],
        middleware=[TrustGateMiddleware(model_gates=[idle])],
    )
    result = audit(agent, {"messages": [HumanMessage("hi")]})
    (c,) = result
    assert c.node == "model" and c.status == "unguarded"
    assert {p.reason for p in c.paths} == {"gated by 'idle', which verifies nothing"}
    assert {p.fix for p in c.paths} == {"add a verifier to 'idle'"}


GRAPHS = """
from typing import Any
from typing_extensions import TypedDict
from langgraph.graph import END, START, StateGraph
from trustgate._gate import TrustGate
from trustgate.graph import guard
from trustgate.readers import FromKey
from trustgate.testing import honest_model

MODEL = honest_model("text", repeat_last=True)


class S(TypedDict, total=False):
    text: str


def step1(state: S) -> dict[str, Any]:
    return {"text": MODEL.invoke("go").text}


def builder():
    g = StateGraph(S)
    g.add_node("step1", step1)
    g.add_edge(START, "step1")
    g.add_edge("step1", END)
    return g


open_door = guard(builder(), {"step1": TrustGate("open", passthrough="*")})
"""


@pytest.fixture
def mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"idle_gates_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(GRAPHS))
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


def test_cli_exits_1_on_a_gate_that_verifies_nothing_and_says_what_to_do(
    mod: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", f"{mod}:open_door"]) == 1
    out = capsys.readouterr().out
    assert "UNGUARDED" in out and "verdict: UNGUARDED" in out
    assert (
        "node 'step1' calls ScriptedChatModel, gated by 'open', which verifies nothing: "
        "add a verifier to 'open'"
    ) in out
