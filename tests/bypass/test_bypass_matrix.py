"""The bypass matrix of issue 10: real third-party shapes × policies × every way to look.

Each shape of ``tests/shapes`` is built with a lying scripted model, its lying node is
guarded with a gate whose verifier fails on the shape's lie, and the run is watched
through every window (see ``_bypass_support``): final state, state at every depth and
its history, every checkpoint row, every stream mode (sync and async, with and without
``subgraphs=True``), ``astream_events`` v2, ``stream_events(version="v3")``, tool
executions, downstream node inputs and marker files. The lie must appear nowhere but in
the audit record, and the run must stop or correct as its policy says. The honest build,
guarded the same way, must end in the same state as unguarded. The control tests run
the same observation on the unguarded lying build and require the lie in each window
that can carry it, so a green matrix cannot come from a blind observer.

Dimensions. 7 shapes × the policies that fit each (48 shape/policy pairs: Halt,
Override, Redact, BlockToolCalls, Rerender then Caveat or Halt, Review answered approve,
edit or reject). A run is watched one of six ways: ``stream`` and ``astream``, each with
and without ``subgraphs=True`` (every stream mode at once: values, updates, messages,
custom, debug, tasks, checkpoints, tools), ``astream_events`` v2 and ``stream_events`` v3 (the
async shapes run the four async ways). Each pair is watched two ways, rotated so
that every shape is watched every way and every policy every way across the shapes: 96
lying runs, 48 honest runs, 35 control runs. Measured with ``pytest -m bypass`` (this
module and the attacks) on the shared 2-core machine at load 6-7: 51 s, 26 s of CPU;
this module alone about 35 s. Watching every pair every way (``per_cell`` equal to the
number of ways) takes about three times as long.

Known limits: LangGraph's own v3 event stream cannot run the data-enrichment template
(a ``TypeError`` building its dataclass output schema, unguarded too), so that shape is
not watched through v3. No shape writes to the custom stream; the attacks
(``test_bypass_attacks.py``) cover stream-writer payloads.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from _bypass_support import (
    Observation,
    Run,
    is_audit,
    normalise,
    observe,
    observe_async,
    see_recorder,
    strings,
)
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from shapes import BUILDERS, Shape, build

import trustgate
from trustgate import Cut, Finding, TrustGate
from trustgate.evidence.record import Record
from trustgate.policies import (
    CAVEAT_HEADER,
    BlockToolCalls,
    Caveat,
    Halt,
    Override,
    Redact,
    Rerender,
    Review,
)
from trustgate.readers import FunctionReader, LastAIText, ToolCallArgs
from trustgate.verifiers.base import EvidenceSources, FunctionVerifier
from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule

SYNC_WAYS = ("stream", "stream-flat", "astream", "astream-flat", "events", "v3")
ASYNC_WAYS = ("astream", "astream-flat", "events", "v3")

WITHHELD = "[withheld: the section failed verification]"
EDITED = {
    "research": "## Milestones\n\nThe National Ignition Facility reported ignition in 2022.",
}
EDITED_TEXT = "A person replaced this answer after review."


# --- the gate: a verifier that fails on the shape's lie -----------------------------------


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences_with(text: str, lies: Sequence[str]) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip() and any(lie in s for lie in lies)]


def lie_verifier(lies: Sequence[str]) -> FunctionVerifier:
    """Fails on the lie, wherever it is in the claims. Text claims get one finding that
    marks the false sentences for removal; tool-call claims one finding per call (its
    ``subject`` is the call id, as ``BlockToolCalls`` needs). No message quotes the lie:
    a caveat block lists the messages in the released text."""

    def check(claims: Any, evidence: Any) -> list[Finding]:
        from _bypass_support import find_lies, strings

        if (
            isinstance(claims, list)
            and claims
            and all(isinstance(c, Mapping) and "args" in c for c in claims)
        ):
            return [
                Finding.failed(
                    "lie_check",
                    "unsupported",
                    "the call's arguments name facts no source has",
                    subject=str(c.get("id")),
                )
                if find_lies(c, lies)
                else Finding.ok("lie_check", subject=str(c.get("id")))
                for c in claims
            ]
        text = "\n".join(strings(claims))
        if not find_lies(claims, lies):
            return [Finding.ok("lie_check")]
        return [
            Finding.failed(
                "lie_check",
                "unsupported",
                "the text states facts no source supports",
                proposals=[Cut(text=t) for t in _sentences_with(text, lies)],
            )
        ]

    return FunctionVerifier(check, name="lie_check")


class LieRule(SentenceRule):
    """The draft check's sentence rule for this shape: a sentence naming the lie goes."""

    name = "unsupported"
    code = "unsupported_claim"

    def __init__(self, lies: Sequence[str]) -> None:
        self.lies = tuple(lies)

    def check(self, sentence: DraftSentence) -> str | None:
        return "no source supports it" if any(x in sentence.text for x in self.lies) else None


RECORD = Record(lines={"1": "the sources this run was given"})


def _redact(lies: Sequence[str], field: str | None = None) -> Redact:
    return Redact(field, rules=[LieRule(lies)])


# --- what each shape's gates read and let through ------------------------------------------

TEXT_PASSTHROUGH: dict[str, tuple[str, ...]] = {
    # the handoff's other parts: its tool call (no arguments), the tool's reply, the
    # package's own keys and the route; the gate reads the AI text the handoff carries
    "supervisor": ("messages.tool_calls", "messages.text", "remaining_steps", "goto"),
    "swarm": ("messages.tool_calls", "messages.text", "active_agent", "goto"),
    "network": ("messages.tool_calls", "messages.text", "goto"),
    "reflection": ("messages.tool_calls", "messages.text"),
}


def _sections_text(update: Mapping[str, Any]) -> str | None:
    sections = update.get("completed_sections")
    if not sections:
        return None
    return "\n\n".join(str(getattr(s, "content", s)) for s in sections)


SECTION_FIELD = "completed_sections.0.content"


def gates_for(shape: Shape, policy: str) -> list[TrustGate]:
    """The gates one cell puts on the shape's lying node."""
    lies = shape.lies
    name = shape.name
    check = lie_verifier(lies)
    if name in TEXT_PASSTHROUGH:
        through = TEXT_PASSTHROUGH[name]
        if policy == "redact":
            return [
                TrustGate(
                    "text",
                    reads=LastAIText(),
                    policy=_redact(lies),
                    evidence=EvidenceSources(record=RECORD),
                    passthrough=through,
                )
            ]
        return [
            TrustGate(
                "text",
                reads=LastAIText(),
                verifiers=[check],
                policy=_text_policy(policy),
                passthrough=through,
            )
        ]
    if name == "react_agent":
        # the tool call is guarded before the tool runs; the text by the policy under test
        calls = TrustGate(
            "calls", reads=ToolCallArgs(), verifiers=[check], policy=BlockToolCalls(then=Halt())
        )
        if policy == "redact":
            text = TrustGate(
                "text",
                reads=LastAIText(),
                policy=_redact(lies),
                evidence=EvidenceSources(record=RECORD),
            )
        else:
            text = TrustGate(
                "text", reads=LastAIText(), verifiers=[check], policy=_text_policy(policy)
            )
        return [calls, text]
    if name == "enrichment":
        first: Any
        if policy == "override":
            first, second = Override("info", None), Override("info", None)
        elif policy == "block":
            first, second = BlockToolCalls(then=Halt()), Halt()
        elif policy == "rerender_halt":
            first, second = Rerender(as_message=True, issues_key=None, then=Halt()), Halt()
        elif policy.startswith("review"):
            first, second = Review(), Review()
        else:
            first, second = Halt(), Halt()
        return [
            TrustGate(
                "calls",
                reads=ToolCallArgs(),
                verifiers=[check],
                policy=first,
                passthrough=["loop_step"],
            ),
            # a part no gate of the node reads must be declared by every gate of it
            TrustGate(
                "info",
                reads="info",
                verifiers=[check],
                policy=second,
                require_claims=False,
                passthrough=["loop_step"],
            ),
        ]
    if name == "research":
        reader = FunctionReader(_sections_text, target=SECTION_FIELD, covers=["completed_sections"])
        if policy == "redact":
            return [
                TrustGate(
                    "section",
                    reads=reader,
                    policy=_redact(lies, SECTION_FIELD),
                    evidence=EvidenceSources(record=RECORD),
                )
            ]
        pol: Any
        if policy == "override":
            pol = Override(SECTION_FIELD, WITHHELD)
        elif policy == "rerender_caveat":
            pol = Rerender(then=Caveat(field=SECTION_FIELD))
        else:
            pol = _text_policy(policy)
        return [TrustGate("section", reads=reader, verifiers=[check], policy=pol)]
    raise AssertionError(name)


def _text_policy(policy: str) -> Any:
    return {
        "halt": Halt(),
        "rerender_caveat": Rerender(as_message=True, issues_key=None, then=Caveat()),
        "rerender_halt": Rerender(as_message=True, issues_key=None, then=Halt()),
        "block_halt": Halt(),
        "review_approve": Review(),
        "review_edit": Review(),
        "review_reject": Review(),
    }[policy]


MESSAGE_SHAPE_POLICIES = (
    "halt",
    "redact",
    "rerender_caveat",
    "rerender_halt",
    "review_approve",
    "review_edit",
    "review_reject",
)
POLICIES: dict[str, tuple[str, ...]] = {
    "supervisor": MESSAGE_SHAPE_POLICIES,
    "swarm": MESSAGE_SHAPE_POLICIES,
    "network": MESSAGE_SHAPE_POLICIES,
    "reflection": MESSAGE_SHAPE_POLICIES,
    # every text policy stands behind BlockToolCalls on the search call
    "react_agent": (
        "block_halt",
        "redact",
        "rerender_caveat",
        "review_approve",
        "review_edit",
        "review_reject",
    ),
    "enrichment": (
        "halt",
        "override",
        "block",
        "rerender_halt",
        "review_approve",
        "review_reject",
    ),
    "research": (
        "halt",
        "override",
        "redact",
        "rerender_caveat",
        "rerender_halt",
        "review_approve",
        "review_edit",
        "review_reject",
    ),
}
assert set(POLICIES) == set(BUILDERS)

HALTS = {"halt", "rerender_halt", "review_reject", "block", "block_halt"}


def _review_answer(shape: Shape, policy: str) -> Any:
    kind = policy.removeprefix("review_")
    if kind != "edit":
        return {"type": kind, "by": "alice"}
    if shape.name == "research":
        return {"type": "edit", "by": "alice", "update": {SECTION_FIELD: EDITED["research"]}}
    return {"type": "edit", "by": "alice", "update": {"messages": [AIMessage(EDITED_TEXT)]}}


# --- running one cell ---------------------------------------------------------------------------


def _saver(shape: Shape) -> InMemorySaver:
    """An in-memory saver that may load the shape's own types (the research shape's
    search queries sit in its section subgraph's checkpoints too)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    mods = [*shape.state_types]
    if shape.name == "research":
        mods.append(("shapes.research", "SearchQuery"))
    return InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=mods))


def guarded_app(shape: Shape, policy: str) -> Any:
    builder = trustgate.guard(shape.builder, {shape.lie_node: gates_for(shape, policy)})
    return builder.compile(checkpointer=_saver(shape))


def plain_app(shape: Shape) -> Any:
    return shape.builder.compile(checkpointer=_saver(shape))


@functools.cache
def _built(name: str, personality: str) -> Shape:
    return build(name, personality)  # type: ignore[arg-type]


def shape_for(name: str, personality: str, marker_dir: Path) -> Shape:
    """The shape, built once per session (its models answer from what they are shown,
    so they serve any number of runs), with a clean recorder writing to ``marker_dir``."""
    shape = _built(name, personality)
    shape.recorder.reset()
    shape.recorder.marker_dir = marker_dir
    for model in shape.models.values():
        model.reset()
    return shape


def _answers(shape: Shape, review: Any = None, answered: int = 0) -> Callable[[Any], Any]:
    """Answers the shape's own interrupts in order (the research plan's approval; the
    first ``answered`` were answered before) and a review with ``review`` (``None``:
    stop at the review)."""
    own = list(shape.resume[answered:])

    def answer(value: Any) -> Any:
        if is_audit(value):
            return review
        return own.pop(0) if own else None

    return answer


def run_for(
    shape: Shape,
    app: Any,
    answer: Callable[[Any], Any],
    inputs: Any = None,
    config: dict[str, Any] | None = None,
) -> Run:
    return Run(
        app=app,
        inputs=shape.inputs if inputs is None else inputs,
        config=config or shape.config(),
        lies=shape.lies,
        context=shape.context,
        answer=answer,
        is_async=shape.is_async,
    )


def observed(run: Run, way: str) -> Observation:
    """Run ``run`` the way ``way`` names and look everywhere."""
    flat = way.endswith("-flat")
    how = way.removesuffix("-flat")
    if how == "stream" or (how == "v3" and not run.is_async):
        return observe(run, how, subgraphs=not flat)
    return asyncio.run(observe_async(run, how, subgraphs=not flat))


def run_cell(shape: Shape, policy: str, way: str) -> tuple[Observation, Observation | None]:
    """The guarded lying run up to its end or to the review pause, and (for a review)
    the rest of the thread after the person's answer."""
    app = guarded_app(shape, policy)
    run = run_for(shape, app, _answers(shape))
    first = observed(run, way)
    see_recorder(first, shape.recorder, shape.downstream)
    if not policy.startswith("review"):
        return first, None
    pending = [i.value for i in app.get_state(run.config).interrupts]
    assert first.halted is None and pending and is_audit(pending[0]), (first.halted, pending)
    assert pending[0]["node"] == shape.lie_node and pending[0]["report"]["findings"]
    review = _review_answer(shape, policy)
    answered = len([i for i in first.interrupts if not is_audit(i)])
    answer = _answers(shape, review, answered)
    rest = run_for(shape, app, answer, inputs=Command(resume=review), config=run.config)
    second = observed(rest, way)
    see_recorder(second, shape.recorder, shape.downstream)
    return first, second


# --- the cells: every policy of every shape, each watched two ways ------------------------------

_IS_ASYNC = {"react_agent": True, "enrichment": True, "research": True}
# LangGraph's own v3 event stream cannot run the data-enrichment template at all (its
# dataclass output schema is built from the whole state: TypeError, unguarded too)
_CANNOT = {("enrichment", "v3")}


def ways_of(name: str) -> tuple[str, ...]:
    ways = ASYNC_WAYS if _IS_ASYNC.get(name) else SYNC_WAYS
    return tuple(w for w in ways if (name, w) not in _CANNOT)


def _cells(per_cell: int) -> list[tuple[str, str, str]]:
    """Each (shape, policy) watched ``per_cell`` ways, rotated so that every shape is
    watched every way and every policy every way across the shapes (all ways are
    exercised by every shape's halting and rewriting policies alike)."""
    cells = []
    for s, name in enumerate(sorted(POLICIES)):
        ways = ways_of(name)
        for p, policy in enumerate(POLICIES[name]):
            for j in range(per_cell):
                cells.append((name, policy, ways[(p * per_cell + j + s) % len(ways)]))
    return cells


CELLS = _cells(2)


def _decisions(obs: Observation) -> list[str]:
    return [r.decision for r in obs.reports]


@pytest.mark.parametrize(("name", "policy", "way"), CELLS)
def test_lie_blocked(name: str, policy: str, way: str, tmp_path: Path) -> None:
    shape = shape_for(name, "lying", tmp_path / "markers")
    first, second = run_cell(shape, policy, way)
    problems = outcome_problems(shape, policy, first, second)
    assert not problems, "\n".join(problems)


def outcome_problems(
    shape: Shape, policy: str, first: Observation, second: Observation | None
) -> list[str]:
    """Everything wrong with one cell's run: where the lie surfaced, and how the run
    failed to stop or correct as its policy says (all of it, so one failure tells all)."""
    problems: list[str] = []

    def blocked(obs: Observation, label: str) -> None:
        try:
            obs.assert_blocked()
        except AssertionError as exc:
            problems.append(f"{label}: {exc}")

    blocked(first, "before any decision of a person" if second else "the run")
    obs = second or first
    decisions = _decisions(obs)
    if not decisions:
        problems.append("no gate reported on this run")
    if policy in HALTS:
        # stops: halted, nothing downstream ran, no tool acted on the lie
        if obs.halted is None or not decisions or decisions[-1] != "halted":
            problems.append(f"expected a halt, got {decisions} (halted={obs.halted})")
        ran = [n for n in shape.downstream if shape.recorder.inputs_of(n)]
        if ran:
            problems.append(f"downstream nodes ran after a halt: {ran}")
        if second is not None:
            blocked(second, "after the person's decision")
        return problems
    if obs.halted is not None:
        problems.append(f"expected a release, the run halted: {obs.halted} {decisions}")
        return problems
    if obs.error is not None and not (policy == "override" and shape.name == "enrichment"):
        problems.append(f"the run failed: {obs.error!r}")
    if policy == "review_approve":
        # a person approved the flagged output: it is released as their decision (the
        # approval is testimony in the report; the findings stay failed)
        approved = [r for r in obs.reports if r.approval is not None]
        if not approved or approved[0].approval.decision != "approve":  # type: ignore[union-attr]
            problems.append(f"no approval recorded: {decisions}")
        elif approved[0].approval.who != "alice" or not approved[0].failed:  # type: ignore[union-attr]
            problems.append("the approval lost who approved or what failed")
        if not obs.hits:
            problems.append("an approved output is released as the person decided")
        return problems
    blocked(obs, "after the person's decision" if second else "the run")
    if policy == "review_edit":
        edited = [r for r in obs.reports if r.approval is not None]
        if not edited or edited[0].approval.decision != "edit" or not edited[0].released:  # type: ignore[union-attr]
            problems.append(f"no released edit: {decisions}")
        shown = EDITED.get(shape.name, EDITED_TEXT)
        if shown not in "\n".join(strings(obs.final)):
            problems.append("the person's edit is not what was released")
    elif policy == "redact":
        kinds = [o.kind for r in obs.reports for o in r.overrides]
        if "sentence_delete" not in kinds or "modified" not in decisions:
            problems.append(f"no redaction: {decisions} {kinds}")
    elif policy == "rerender_caveat":
        if "caveated" not in decisions or CAVEAT_HEADER not in "\n".join(strings(obs.final)):
            problems.append(f"no caveat released: {decisions}")
    elif policy == "override":
        if "modified" not in decisions:
            problems.append(f"no override: {decisions}")
        if shape.name == "enrichment" and obs.error is None:
            # the model is told nothing and lies again each turn; every turn is
            # overridden and the template loops to its recursion limit
            problems.append("expected the run to end at the recursion limit")
    else:  # pragma: no cover - every policy is named above
        raise AssertionError(policy)
    return problems


# --- honest runs: guarded exactly as in the matrix, nothing changes -----------------------------

HONEST_CELLS = [(name, policy) for name in sorted(POLICIES) for policy in POLICIES[name]]


@functools.cache
def _unguarded_honest_final(name: str) -> Any:
    shape = shape_for(name, "honest", Path("/nonexistent-markers"))
    return normalise(_final(shape, plain_app(shape)))


def _final(shape: Shape, app: Any) -> dict[str, Any]:
    config = shape.config()
    values = shape.run(app, config)
    snapshot = app.get_state(config)
    assert snapshot.next == () and not snapshot.interrupts, (snapshot.next, snapshot.interrupts)
    return {k: v for k, v in values.items() if k != "trust_reports"}


@pytest.mark.parametrize(("name", "policy"), HONEST_CELLS)
def test_honest_run_same_as_unguarded(name: str, policy: str, tmp_path: Path) -> None:
    expected = _unguarded_honest_final(name)
    shape = shape_for(name, "honest", tmp_path / "markers")
    app = guarded_app(shape, policy)
    config = shape.config()
    final = shape.run(app, config)
    assert app.get_state(config).next == ()
    assert normalise({k: v for k, v in final.items() if k != "trust_reports"}) == expected
    decisions = [r.decision for r in trustgate.reports(app, config)]
    assert decisions and set(decisions) == {"pass"}, decisions


# --- controls: the same windows on the unguarded lying run see the lie ---------------------------

_SUBGRAPH_SHAPES = {"supervisor", "swarm", "network", "reflection", "research"}


def expected_windows(shape: Shape, way: str) -> set[str]:
    """The windows an unguarded lying run of ``shape`` must show the lie in."""
    want = {"final_state", "checkpoint_rows", "get_state_history", "get_state(subgraphs=True)"}
    if shape.name in _SUBGRAPH_SHAPES:
        want |= {"checkpoint_rows:nested", "get_state_history:nested"}
    how = way.removesuffix("-flat")
    if how in ("stream", "astream"):
        want |= {f"{how}:{m}" for m in ("values", "updates", "debug", "tasks", "checkpoints")}
    elif how == "events":
        want |= {"events:on_chat_model_stream", "events:on_chain_end", "events:on_chain_stream"}
    else:
        want |= {f"v3:{m}" for m in ("values", "messages", "updates", "debug", "checkpoints")}
    want |= {f"inputs_of:{n}" for n in shape.downstream}
    if shape.lie_tools:
        want |= {"tool_runs", *(f"marker:{t}.ran" for t in shape.lie_tools)}
    return want


CONTROL_CELLS = [(name, way) for name in sorted(POLICIES) for way in ways_of(name)]


@pytest.mark.parametrize(("name", "way"), CONTROL_CELLS)
def test_unguarded_lie_is_seen_in_every_window(name: str, way: str, tmp_path: Path) -> None:
    shape = shape_for(name, "lying", tmp_path / "markers")
    obs = observed(run_for(shape, plain_app(shape), _answers(shape)), way)
    see_recorder(obs, shape.recorder, shape.downstream)
    missing = expected_windows(shape, way) - obs.channels
    assert not missing, f"the observer is blind in {sorted(missing)}"
    # token streams: the lying node's model output reached the consumer (the research
    # writer's tokens come from inside its section subgraph: seen only with subgraphs)
    how = way.removesuffix("-flat")
    if how in ("stream", "astream") and not (name == "research" and way.endswith("-flat")):
        assert any(c.startswith(f"{how}:messages") for c in obs.channels), obs.channels
    with pytest.raises(AssertionError, match="the lie got through"):
        obs.assert_blocked()
