"""What the real-package graphs share: a shape that carries its own gates.

The shapes of ``BUILDERS`` rebuild well-known graphs for the bypass matrix, which brings
its own policies. The graphs here are built by third-party packages as their users build
them (``deepagents``, LangChain's middleware, ``langgraph-bigtool``, ``langmem``,
``langchain-mcp-adapters``, the agentic-RAG tutorial), and each comes with the gates a
user reading the README would put on it: a reader for where the claims are, a
verifier that checks them against the real source, the parts declared ``passthrough``.
A test then runs each graph unguarded and guarded, honest and lying.

Two things a comparison of two runs must leave out, because they differ between any
two runs of the same graph, guarded or not: wall-clock timestamps (the deep agent's
files) and random identifiers (a memory's uuid, an MCP content block's id).
:func:`scrub` replaces both.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.types import Command

from ._common import Recorder, Shape

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_LC_ID = re.compile(r"\blc_[0-9a-f-]{36}\b")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")
_TIME_KEYS = frozenset({"created_at", "modified_at", "updated_at"})


def scrub(value: Any) -> Any:
    """``value`` with timestamps and random ids replaced by placeholders (see the module
    docstring); everything else is kept."""
    if isinstance(value, str):
        return _STAMP.sub("<time>", _LC_ID.sub("<lc-id>", _UUID.sub("<uuid>", value)))
    if isinstance(value, Mapping):
        return {k: ("<time>" if k in _TIME_KEYS else scrub(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


class ToolRecorder(Recorder):
    """A :class:`Recorder` that sees every tool execution through LangChain's callbacks.

    The packages bring their own tools (the deep agent's filesystem, ``write_todos``,
    langmem's memory tools, an MCP server's tools), which cannot call
    :meth:`Recorder.tool_ran`; the tool's start callback records each execution, with
    the arguments the tool ran with (injected state, store and runtime left out by
    LangChain), in this process and, as ``<tool>.ran`` marker files, on disk.
    """

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = str((serialized or {}).get("name") or kwargs.get("name") or "?")
        args = inputs if isinstance(inputs, dict) else {"input": input_str}
        self.tool_ran(name, **json.loads(json.dumps(args, default=str)))


@dataclass
class RealShape(Shape):
    """A third-party graph built by its package, with the gates a user puts on it.

    ``gates`` maps a node to its gates (what ``trustgate.guard(app, gates)`` takes).
    ``answer`` answers the graph's own interrupts (a person approving a tool call):
    given an interrupt's value it returns the resume value. ``store`` is the run's
    long-term store (each build has its own, so two runs never share memories).
    """

    gates: dict[str, Any] = field(default_factory=dict)
    store: Any = None
    answer: Callable[[Any], Any] | None = None
    ran_elsewhere: Path | None = None
    """Where tools that run in another process (an MCP server) write their markers."""
    answered: list[Any] = field(default_factory=list)
    """The interrupts :meth:`run_to_end` answered (their values), in order."""

    def guarded(self) -> Any:
        """This build's compiled graph, guarded the way the README guards an agent."""
        import trustgate

        return trustgate.guard(self.app, self.gates)

    def run_to_end(self, app: Any, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run ``app`` from the shape's input to the end, answering its interrupts; the
        final state values."""
        config = config or self.config()
        if self.is_async:
            return asyncio.run(self.arun_to_end(app, config))
        current: Any = self.inputs
        for _ in range(6):
            app.invoke(current, config, context=self.context)
            pending = app.get_state(config).interrupts
            if not pending or self.answer is None:
                break
            self.answered.append(pending[0].value)
            current = Command(resume=self.answer(pending[0].value))
        return dict(app.get_state(config).values)

    async def arun_to_end(self, app: Any, config: dict[str, Any]) -> dict[str, Any]:
        current: Any = self.inputs
        for _ in range(6):
            await app.ainvoke(current, config, context=self.context)
            pending = (await app.aget_state(config)).interrupts
            if not pending or self.answer is None:
                break
            self.answered.append(pending[0].value)
            current = Command(resume=self.answer(pending[0].value))
        return dict((await app.aget_state(config)).values)

    def executions(self) -> list[tuple[str, Any]]:
        """The tool executions of this build's runs (ids scrubbed), sorted: the calls
        of one message run in parallel, in no fixed order. Tools of another process
        are read from the marker files they wrote."""
        if self.ran_elsewhere is not None:
            runs = [
                (marker.stem, json.loads(line))
                for marker in sorted(self.ran_elsewhere.glob("*.ran"))
                for line in marker.read_text(encoding="utf-8").splitlines()
            ]
        else:
            runs = [(r.tool, dict(r.args)) for r in self.recorder.tool_runs]
        return sorted(((tool, scrub(args)) for tool, args in runs), key=json.dumps)

    def reset(self) -> None:
        """Forget the tool executions seen so far (before a run is watched)."""
        self.recorder.reset()
        if self.ran_elsewhere is not None:
            for marker in self.ran_elsewhere.glob("*.ran"):
                marker.unlink()

    def store_values(self) -> list[Any]:
        """Everything in the store, namespace by namespace (sorted, ids scrubbed)."""
        if self.store is None:
            return []
        return [
            sorted(
                (scrub(item.value) for item in self.store.search(ns, limit=1000)),
                key=lambda v: json.dumps(v, sort_keys=True, default=str),
            )
            for ns in sorted(self.store.list_namespaces())
        ]


def approve_all(value: Any) -> Any:
    """The person's answer to LangChain's ``HumanInTheLoopMiddleware``: approve every
    call it shows (batched requests list them, a per-call request is one)."""
    if isinstance(value, Mapping) and "action_requests" in value:
        return {"decisions": [{"type": "approve"} for _ in value["action_requests"]]}
    return {"type": "approve"}


QUOTED = re.compile(r"\"([^\"]+)\"")
"""A span the model quotes (``"..."``): what it says a source says, word for word."""


def quoted(text: str) -> list[str]:
    return QUOTED.findall(text)


def found_in(span: str, sources: Sequence[str]) -> bool:
    return any(span in source for source in sources)
