"""Real third-party graphs, guarded, against a lying model: the lie appears nowhere (every
stream mode, state, checkpoints, tool executions).
"""

from __future__ import annotations

from _real_graphs_support import _answers, lie_blocked
from shapes import agent_middleware, bigtool, deep_agent, memory_agent
from shapes import rag_tutorial as agentic_rag

# --- the harness ------------------------------------------------------------------------------


def test_deep_agent_lie_blocked() -> None:
    runs = lie_blocked(deep_agent.build)
    for obs in runs.values():
        # the report was blocked; told so, the agent still cited its cause: halted
        assert [r.decision for r in obs.reports if r.decision != "pass"] == [
            "blocked",
            "halted",
        ]
        assert deep_agent.REPORT not in obs.final.get("files", {})


def test_agent_middleware_lie_blocked() -> None:
    runs = lie_blocked(agent_middleware.build)
    for obs in runs.values():
        # the refund was blocked before any person was asked; the claim halted
        assert obs.halted is not None and not obs.interrupts
        assert [r.decision for r in obs.reports if r.decision != "pass"] == [
            "blocked",
            "halted",
        ]


def test_bigtool_lie_blocked() -> None:
    runs = lie_blocked(bigtool.build)
    for obs in runs.values():
        assert obs.halted is not None
        assert obs.halted.report.decision == "halted"


def test_agentic_rag_lie_blocked() -> None:
    runs = lie_blocked(agentic_rag.build)
    for obs in runs.values():
        assert obs.halted is not None and obs.halted.report.node == "generate_answer"


def test_memory_agent_lie_blocked() -> None:
    runs = lie_blocked(memory_agent.build)
    for obs in runs.values():
        # only the invented memory was blocked; the true ones were stored, the run ended
        assert obs.halted is None
        assert "Noted" in _answers(obs.final)[-1]
        assert [r.decision for r in obs.reports if r.decision != "pass"] == ["blocked"]
