"""Real third-party LangGraph shapes, built with scripted honest and lying models.

Test support for the bypass matrix and the audit tests (not shipped in the wheel).
Each module rebuilds, or builds with the real package, one shape people actually run:

=============== ==============================================================
``supervisor``  langgraph-supervisor: ``create_supervisor`` over two agents
``swarm``       langgraph-swarm: ``create_swarm`` with handoff tools
``network``     the multi-agent network tutorial: nested agents, ``Command.PARENT``
``react_agent`` the react-agent template: model built from ``runtime.context``
``enrichment``  the data-enrichment template: ``Info`` tool call, model from config
``reflection``  a reflection loop with a structured-output judge
``research``    plan → interrupt → ``Send`` into a section subgraph → compile
=============== ==============================================================

Every module has ``NAME``, ``LIES`` (text only the lie contains), ``LIE_NODE`` (the
top-level node whose output carries it), ``build_graph(...)`` (the uncompiled builder)
and ``build(personality="honest"|"lying", *, marker_dir=None) -> Shape``.

Six more modules hold graphs built by third-party packages themselves, each with the
gates a user puts on it (``build(...) -> RealShape``, ``RealShape.guarded()``; see
``_real``); ``tests/unit/test_real_graphs.py`` runs them. They are not in :data:`BUILDERS`
(the bypass matrix brings its own policies) and are imported on their own, so that a
test of the shapes above does not import their packages:

==================== ========================================================
``deep_agent``       deepagents: ``create_deep_agent``, a ``task`` sub-agent, files
``agent_middleware`` ``create_agent`` + human-in-the-loop, summarisation, to-dos
``bigtool``          langgraph-bigtool: tools retrieved from a store
``rag_tutorial``     LangGraph's agentic-RAG tutorial graph, keyword retriever
``agentic_rag``      the tutorial's wiring, a lying grader in a routing function (audit)
``memory_agent``     langmem: the memory tools over the graph's store
``mcp_alerts``       langchain-mcp-adapters: tools of a stdio MCP server
==================== ========================================================
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import enrichment, network, react_agent, reflection, research, supervisor, swarm
from ._common import (
    MODELS,
    SCRIPTED_PROVIDER,
    NodeInput,
    Personality,
    Recorder,
    Shape,
    ToolRun,
    lies_in,
)

BUILDERS: dict[str, Callable[..., Shape]] = {
    m.NAME: m.build
    for m in (supervisor, swarm, network, react_agent, enrichment, reflection, research)
}
"""Shape name → ``build(personality, *, marker_dir=None)``."""


def build(
    name: str, personality: Personality = "honest", *, marker_dir: Path | None = None
) -> Shape:
    return BUILDERS[name](personality, marker_dir=marker_dir)


__all__ = [
    "BUILDERS",
    "MODELS",
    "SCRIPTED_PROVIDER",
    "NodeInput",
    "Personality",
    "Recorder",
    "Shape",
    "ToolRun",
    "build",
    "lies_in",
]
