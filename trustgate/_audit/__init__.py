"""``audit()``: every node whose output is model output (and every routing function
that calls a model), and whether a gate holds each way out of it. Three answers, never
a false all-clear.

Each crossing and each path out of it is ``guarded`` (a gate holds it), ``unguarded``
(model output leaves with nothing in the way) or ``unknown`` (the audit could not tell,
and says why: an opaque or remote node, a dynamic import, a subgraph it could not open,
a handoff it could not follow, a sample run that stopped before the node). ``unknown``
is never counted as guarded.

Crossings are found

* **statically**, by what a node's runnable refers to: a chat/language model object
  (also inside bindings, sequences, partials, closures, defaults, bound ``self`` and the
  module globals a node's code names, at any depth of helpers), a model *factory* its
  code calls (``init_chat_model``, ``load_chat_model``, a chat-model class constructed
  in the body: the model that a run-time context or configuration names), or an agent
  or compiled subgraph that contains one; the same walk runs over the routing function
  of every conditional edge;
* **by a sample run**, when ``sample_input`` is given: the graph runs once on a copy
  (fresh in-memory checkpointer) with **every chat model and every tool replaced by a
  recording stub**, so nothing with side effects runs (real tools only with
  ``run_tools=True``). The stub models call each tool they are offered once (with
  minimal arguments) and answer structured-output requests with a minimal valid
  object, so the run goes down the tool and handoff paths too.

Never by node names: a model-calling node named ``step1`` is found, a node named
``llm`` that calls no model is not.

Paths out of a crossing: plain, waiting and conditional edges, the ``Command``
destinations a node declares, and **handoffs**: ``Command(graph=Command.PARENT,
goto=...)`` raised by a tool or node anywhere inside the node (a supervisor's or a
swarm's handoff tools, a nested agent's), followed to their targets. Which nodes carry
gates is asked of what ``guard()`` installed (:func:`trustgate.graph.guarded_nodes`
names them) and nothing else: a gate on a node holds everything the node emits, so
every path out of it, handoffs raised inside it included, is guarded by that gate.
``TrustGateMiddleware`` in a ``create_agent`` agent counts the same way for the model
node: its model gates run around the model call, inside the node.

Not guards, however a node is gated: a gate that verifies nothing (no verifiers); a
routing function that calls a model (it runs after the node's gates released the
output: its own crossing, always ``unguarded``); a remote graph the node calls (its
tools ran on its server before the gate saw anything: ``unknown``). Each crossing says
what was found (``found``) and each open path how to close it (``fix``).

Example:
    ```python
    import trustgate

    result = trustgate.audit(app)
    for crossing in result:
        print(crossing.node, crossing.status, crossing.reason)
    ```
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from trustgate._audit import _sample_run
from trustgate._audit._crossings import _check, _combine
from trustgate._audit._discovery import _builder_of
from trustgate._audit._results import (
    AuditedCrossing,
    AuditPath,
    AuditResult,
    SampleRun,
    SampleToolCall,
    Status,
)

__all__ = [
    "AuditPath",
    "AuditResult",
    "AuditedCrossing",
    "SampleRun",
    "SampleToolCall",
    "Status",
    "aaudit",
    "audit",
]


def audit(
    graph: Any,
    sample_input: Any = None,
    *,
    config: RunnableConfig | None = None,
    context: Any = None,
    resume: Sequence[Any] = (),
    run_tools: bool = False,
) -> AuditResult:
    """Every node whose output is model output, and whether a gate holds each path out.

    ``graph`` is a ``StateGraph`` builder or a compiled graph (it is not modified). With
    ``sample_input`` the graph also runs once on a copy (fresh in-memory checkpointer,
    ``config`` merged in, ``context`` passed as the run-time context) with every chat
    model and tool replaced by a recording stub (real tools run only with
    ``run_tools=True``); each interrupt on the way is answered with the next of
    ``resume``, and an interrupt with none left ends the run (``unknown`` coverage).
    Nodes seen starting a model run are added. The run goes through ``ainvoke`` in
    ``asyncio.run`` (inside a running event loop it goes through ``invoke``: use
    :func:`aaudit` there for graphs with async-only nodes).

    Example:
        ```python
        result = trustgate.audit(app, {"messages": [{"role": "user", "content": "hi"}]})
        assert result.status == "guarded", [(c.node, c.reason) for c in result]
        ```
    """
    builder = _builder_of(graph)
    _check(builder)
    run: _sample_run.Outcome | None = None
    if sample_input is not None:
        plan = _sample_run.Plan(graph, sample_input, config, context, list(resume), run_tools)
        # through ainvoke whenever it can: it runs sync and async nodes alike, also
        # when a wrapper hides that a node is async-only
        run = _sample_run.run(plan) if _loop_running() else asyncio.run(_sample_run.arun(plan))
    return _combine(graph, builder, run)


async def aaudit(
    graph: Any,
    sample_input: Any = None,
    *,
    config: RunnableConfig | None = None,
    context: Any = None,
    resume: Sequence[Any] = (),
    run_tools: bool = False,
) -> AuditResult:
    """:func:`audit` with the sample run through ``ainvoke`` (for async graphs).

    Example:
        ```python
        result = await trustgate.aaudit(app, {"messages": []})
        ```
    """
    builder = _builder_of(graph)
    _check(builder)
    run: _sample_run.Outcome | None = None
    if sample_input is not None:
        plan = _sample_run.Plan(graph, sample_input, config, context, list(resume), run_tools)
        run = await _sample_run.arun(plan)
    return _combine(graph, builder, run)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
