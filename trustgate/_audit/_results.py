"""What an audit answers: each crossing, each path out of it, and the sample run.

``guarded``, ``unguarded`` or ``unknown``, never a false all-clear: ``unknown`` is
never counted as guarded.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AuditPath",
    "AuditResult",
    "AuditedCrossing",
    "Detection",
    "PathKind",
    "SampleRun",
    "SampleToolCall",
    "Status",
]

Status = Literal["guarded", "unguarded", "unknown"]
PathKind = Literal["plain", "conditional", "waiting", "command", "handoff"]
Detection = Literal["static", "sample_run", "static+sample_run"]


class AuditPath(BaseModel):
    """One way a crossing's output leaves its node, and whether a gate holds it.

    ``target`` is a node name, ``"__end__"``, or ``None`` when it is not declared (a
    conditional branch without targets, a handoff whose target could not be resolved).
    ``kind`` is how the output travels: ``plain`` edge, ``waiting`` (join) edge,
    ``conditional`` branch, ``command`` (a ``Command(goto=...)`` destination the node
    declared) or ``handoff`` (``Command.PARENT`` raised inside the node). ``status`` is
    ``guarded``, ``unguarded`` or ``unknown``; ``reason`` says why; ``gate`` names the
    gate(s) that hold it; ``via`` the node that holds them; ``fix`` how to close a path
    that is not guarded (empty when it is).

    Example:
        ```python
        open_paths = [p.target for p in crossing.paths if p.status != "guarded"]
        ```
    """

    model_config = ConfigDict(frozen=True)

    target: str | None
    kind: PathKind
    status: Status
    reason: str = ""
    gate: str | None = None
    via: str | None = None
    fix: str = ""

    @property
    def guarded(self) -> bool:
        """True only when a gate is proven to hold this path (``unknown`` is not)."""
        return self.status == "guarded"


class AuditedCrossing(BaseModel):
    """A node whose output is (or may be) model output, with every path out of it.

    ``found_by`` says how it was found (``static``, ``sample_run`` or both); ``found``
    says in one line what was found (``"node 'draft' calls ChatOpenAI"``); ``detail``
    where (which model or factory, through which reference), so a surprising entry can
    be traced to the line that holds the model.

    ``routing`` names the routing function when the crossing is one: the path function
    of a conditional edge out of ``node`` that calls a model (a grader that picks the
    next node). It runs after the node's gates have released the node's output, so no
    gate holds what it decides: such a crossing is ``unguarded`` whatever gates the node
    carries, until the model call moves into a node of its own. ``status`` is ``unguarded``
    when any path is, else ``unknown`` when any path is, else ``guarded``; ``reason``
    says why in one line. A node with no declared way out is reported with one path to
    ``"__end__"`` (its output stays in the state the caller reads).

    Example:
        ```python
        for c in trustgate.audit(app):
            print(c.node, c.found_by, c.status, c.reason)
        ```
    """

    model_config = ConfigDict(frozen=True)

    node: str
    found_by: Detection
    status: Status
    reason: str
    paths: tuple[AuditPath, ...]
    gates: tuple[str, ...] = ()
    detail: tuple[str, ...] = ()
    found: str = ""
    routing: str | None = None

    @property
    def guarded(self) -> bool:
        """True only when every path out of the node is proven guarded."""
        return self.status == "guarded"

    def explain(self, path: AuditPath) -> str:
        """One line for one path: what was found, why the path is what it is, and how
        to close it (``"node 'x' calls ChatOpenAI, gated by 'g', which verifies
        nothing: add a verifier to 'g'"``).

        Example:
            ```python
            for c in trustgate.audit(app):
                for p in c.paths:
                    print(c.explain(p))
            ```
        """
        text = f"{self.found}, {path.reason}" if self.found else path.reason
        return f"{text}: {path.fix}" if path.fix else text


class SampleToolCall(BaseModel):
    """A tool call met during the sample run: which node, which tool, whether it ran."""

    model_config = ConfigDict(frozen=True)

    node: str | None
    tool: str
    ran: bool
    """True only when the real tool executed (``run_tools=True``)."""


class SampleRun(BaseModel):
    """How the sample run went: ``finished``, ``interrupted``, ``halted`` or ``error``.

    A sample run that stopped early saw only the nodes before the stop; ``unreached``
    names the interrupted nodes it could not get past (they and what follows them are
    ``unknown`` coverage). ``model_nodes`` lists every top-level node seen starting a
    (stubbed) model run, gate nodes included (a model run inside a routing function is
    counted in ``model_routing``, not for its node); ``tool_calls`` every tool call, and
    whether the real tool ran.

    Example:
        ```python
        run = trustgate.audit(app, {"messages": []}).sample_run
        if run is not None and run.outcome != "finished":
            print("sample run stopped early:", run.outcome, run.detail)
        ```
    """

    model_config = ConfigDict(frozen=True)

    outcome: Literal["finished", "interrupted", "halted", "error"]
    detail: str = ""
    model_nodes: tuple[str, ...] = ()
    model_routing: tuple[str, ...] = ()
    """Routing functions seen starting a model run, as ``node:function``."""
    unattributed: int = 0
    """Model runs whose metadata named no graph node."""
    tool_calls: tuple[SampleToolCall, ...] = ()
    resumed: int = 0
    """How many interrupts the given resume values answered."""
    unreached: tuple[str, ...] = ()
    """Nodes paused at an interrupt no resume value was left for."""
    run_tools: bool = False
    """Whether real tools ran (otherwise every tool was a recording stub)."""


class AuditResult(list[AuditedCrossing]):
    """The crossings (a list, node order), plus how the sample run went.

    ``status`` is the verdict on the whole graph: ``unguarded`` when any crossing is,
    else ``unknown`` when any crossing is or the sample run could not cover the graph
    (it stopped at an interrupt, halted or failed), else ``guarded``.

    Example:
        ```python
        result = trustgate.audit(builder)
        assert result.status == "guarded", [(c.node, c.reason) for c in result]
        ```
    """

    sample_run: SampleRun | None = None

    @property
    def unguarded(self) -> list[AuditedCrossing]:
        """The crossings with at least one path no gate stands on."""
        return [c for c in self if c.status == "unguarded"]

    @property
    def unknown(self) -> list[AuditedCrossing]:
        """The crossings the audit could not decide (none of their paths unguarded)."""
        return [c for c in self if c.status == "unknown"]

    @property
    def status(self) -> Status:
        if self.unguarded:
            return "unguarded"
        if self.unknown or self.coverage_gap:
            return "unknown"
        return "guarded"

    @property
    def coverage_gap(self) -> str:
        """Why the sample run did not cover the graph ('' when it did or did not run)."""
        run = self.sample_run
        if run is None or run.outcome == "finished":
            return ""
        return f"sample run {run.outcome}" + (f": {run.detail}" if run.detail else "")
