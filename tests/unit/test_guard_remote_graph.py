"""A remote graph cannot be held locally: guard() says so, audit() never calls it guarded.

A ``RemoteGraph`` runs its model and tools on the server it names; a gate on the local
node sees only what comes back, after the remote tools ran. ``guard()`` refuses a node
that is a remote graph (or a graph running one as a node) and warns about a node whose
code calls one; ``audit()`` reports a gated path through a remote graph ``unknown``.
A ``RemoteGraph`` connects only when invoked: these tests build them without a server
and never invoke them.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.pregel.remote import RemoteGraph
from typing_extensions import TypedDict

from trustgate import Finding, TrustGate
from trustgate.errors import ConfigurationError
from trustgate.graph import audit, guard
from trustgate.readers import FromKey
from trustgate.verifiers.base import FunctionVerifier

URL = "http://127.0.0.1:9"  # never contacted
REMOTE = RemoteGraph("agent", url=URL)


class S(TypedDict, total=False):
    text: str


def _ok(claims: Any, evidence: Any) -> list[Finding]:
    return [Finding.ok("ok")]


def gate() -> TrustGate:
    return TrustGate("check", reads=FromKey("text"), verifiers=[FunctionVerifier(_ok, name="ok")])


def one_node(node: Any) -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(S)
    g.add_node("ask", node)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g


def calls_global(state: S) -> dict[str, Any]:
    return {"text": str(REMOTE.invoke({"text": state.get("text")}))}


def builds_one(state: S) -> dict[str, Any]:
    remote = RemoteGraph("agent", url=URL)
    return {"text": str(remote.invoke({"text": state.get("text")}))}


def only_checks(state: S) -> dict[str, Any]:
    """Names the class without calling a remote graph (as langgraph-supervisor does)."""
    return {"text": "remote" if isinstance(state, RemoteGraph) else "local"}


def test_guarding_a_remote_graph_node_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="remote graph") as err:
        guard(one_node(RemoteGraph("agent", url=URL)), {"ask": gate()})
    assert "guard its model node where the remote graph is served" in str(err.value)


def test_guarding_a_subgraph_whose_node_is_a_remote_graph_is_refused() -> None:
    inner = one_node(RemoteGraph("agent", url=URL)).compile()
    outer = one_node(inner)
    with pytest.raises(ConfigurationError, match="node 'ask', inside it node 'ask'"):
        guard(outer, {"ask": gate()})
    deeper = one_node(one_node(inner).compile())
    with pytest.raises(ConfigurationError, match="remote graph"):
        guard(deeper.compile(), {"ask": gate()})


@pytest.mark.parametrize(
    ("node", "where"),
    [
        (calls_global, "global 'REMOTE' used by calls_global"),
        (builds_one, "RemoteGraph constructed by builds_one"),
    ],
)
def test_a_node_calling_a_remote_graph_is_guarded_with_a_warning_and_audited_unknown(
    node: Any, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="trustgate.graph._guard"):
        guarded = guard(one_node(node), {"ask": gate()})
    warned = [r.getMessage() for r in caplog.records if r.name == "trustgate.graph._guard"]
    assert len(warned) == 1 and "'ask' calls a remote graph" in warned[0] and where in warned[0]
    result = audit(guarded)
    (c,) = result
    assert c.node == "ask" and c.status == "unknown" and not c.guarded
    assert result.status == "unknown"
    (p,) = c.paths
    assert p.status == "unknown" and p.gate == "check"
    assert "holds only what comes back from the remote graph" in p.reason
    assert p.fix == "guard the remote graph's model node on the server that runs it"
    assert c.found.startswith("node 'ask' calls a remote graph")


def test_a_class_named_but_never_called_is_no_remote_graph(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="trustgate.graph._guard"):
        guard(one_node(calls_global), {"ask": gate()})
        guard(one_node(only_checks), {"ask": gate()})
    warned = [r.getMessage() for r in caplog.records if r.name == "trustgate.graph._guard"]
    assert len(warned) == 1 and "calls_global" in warned[0]  # not only_checks
    assert audit(guard(one_node(only_checks), {"ask": gate()})) == []
