"""Reference graph: ``trustgate.pipelines.code_review`` (see its docstring), for langgraph.json.

``graph`` runs the scripted inventing personality offline, or the model named by
``TRUSTGATE_MODEL`` (e.g. ``openai:gpt-4.1-mini``); the LangGraph server brings
its own checkpointer. Its gates record every crossing into the report log
``TRUSTGATE_DATABASE_URL`` names (set ``TRUSTGATE_LEDGER_KEY`` too), which
``trustgate.server`` serves at ``/trustgate/reports``. ``build(model=None, ...)``
compiles another one.
"""

from __future__ import annotations

from typing import Any

from trustgate.pipelines.code_review import build

__all__ = ["build", "graph"]

graph: Any = build(checkpointer=False, report_log=True)
