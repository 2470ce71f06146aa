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
