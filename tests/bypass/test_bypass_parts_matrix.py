"""The part classes of ``test_bypass_parts`` crossed with every policy and two ways to look.

Each class hides the lie in a part that accounting or a policy used to miss: a message
that carries only a fabricated tool call, two calls under one id, the first of two
writes to a reducer key, a decision field a router reads, the text of a message whose
calls are declared, an overwrite that drops history. Each is guarded the way a user
would for that output, under every policy; whatever the policy does (halt, rewrite,
re-render, caveat, ask a person), the lie must appear nowhere outside the audit record
(a person's approval releases it on purpose), and no tool may run with it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph.message import add_messages
from langgraph.types import Command, Overwrite
from shapes import Recorder
from test_bypass_attacks import CHECK, LIE, LIE_TEXT, TRUE_TEXT, attack, graph
from typing_extensions import TypedDict

from trustgate import TrustGate
from trustgate.policies import (
    BlockToolCalls,
    Caveat,
    Halt,
    Override,
    Redact,
    Rerender,
    Review,
)
from trustgate.readers import FromKey, LastAIText, ToolCallArgs
from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], operator.add]
    verdict: str


class _LieRule(SentenceRule):
    name = "unsupported"
    code = "unsupported_claim"

    def check(self, sentence: DraftSentence) -> str | None:
        return "names a record no source has" if LIE in sentence.text else None


ARGS = {"reference": LIE}
HONEST = {"reference": "ticket 12"}


@dataclass(frozen=True)
class Case:
    """One part class: the node, the gate's reader and declarations, the override."""

    node: Callable[[Recorder], Callable[[S], Any]]
    reads: Callable[[], Any]
    passthrough: tuple[str, ...]
    override: tuple[str, Any]
    tools: bool = False


def _calls(*calls: dict[str, Any], text: str = "") -> Callable[[Recorder], Callable[[S], Any]]:
    def make(recorder: Recorder) -> Callable[[S], Any]:
        def agent(state: S) -> dict[str, Any]:
            if any(isinstance(m, ToolMessage) for m in state["messages"]):
                return {"messages": [AIMessage(TRUE_TEXT)]}
            msg = AIMessage(text, tool_calls=[dict(c) for c in calls])
            return {"messages": [msg], "verdict": "approve"}

        return agent

    return make


def _two_writes(recorder: Recorder) -> Callable[[S], Any]:
    def agent(state: S) -> Command[Any]:
        return Command(update=[("notes", [LIE_TEXT]), ("notes", [TRUE_TEXT])])

    return agent


def _decision(recorder: Recorder) -> Callable[[S], Any]:
    def agent(state: S) -> dict[str, Any]:
        return {"verdict": f"APPROVE ({LIE})"}

    return agent


def _overwrite(recorder: Recorder) -> Callable[[S], Any]:
    def agent(state: S) -> dict[str, Any]:
        return {"messages": Overwrite([AIMessage(LIE_TEXT)])}

    return agent


CASES = {
    "call_only": Case(
        _calls({"name": "refund", "args": ARGS, "id": "c1"}),
        ToolCallArgs,
        ("messages.text", "verdict"),
        ("verdict", "reject"),
        tools=True,
    ),
    "one_id_two_calls": Case(
        _calls(
            {"name": "refund", "args": HONEST, "id": "c1"},
            {"name": "refund", "args": ARGS, "id": "c1"},
        ),
        ToolCallArgs,
        ("messages.text", "verdict"),
        ("verdict", "reject"),
        tools=True,
    ),
    "text_beside_calls": Case(
        _calls({"name": "refund", "args": HONEST, "id": "c1"}, text=LIE_TEXT),
        LastAIText,
        ("messages.tool_calls", "verdict"),
        ("verdict", "reject"),
        tools=True,
    ),
    "first_of_two_writes": Case(
        _two_writes, lambda: FromKey("notes"), (), ("notes", ["[withheld]"])
    ),
    "decision_field": Case(_decision, lambda: FromKey("verdict"), (), ("verdict", "REJECT")),
    "overwrite_drops_history": Case(
        _overwrite, LastAIText, ("messages.text",), ("verdict", "reject")
    ),
}

POLICIES = (
    "halt",
    "override",
    "redact",
    "block",
    "rerender_caveat",
    "caveat",
    "review_approve",
    "review_reject",
    "review_respond",
)


def _policy(name: str, case: Case) -> Any:
    field, value = case.override
    return {
        "halt": Halt(),
        "override": Override(field, value),
        "redact": Redact(rules=[_LieRule()]),
        "block": BlockToolCalls(then=Halt()),
        "rerender_caveat": Rerender(as_message=True, issues_key=None, then=Caveat()),
        "caveat": Caveat(),
        "review_approve": Review(),
        "review_reject": Review(),
        "review_respond": Review(),
    }[name]


def _answer(policy: str) -> Callable[[Any], Any] | None:
    if not policy.startswith("review"):
        return None
    kind = policy.removeprefix("review_")
    if kind == "respond":
        return lambda value: {"type": "respond", "by": "alice", "message": "No refund today."}
    return lambda value: {"type": kind, "by": "alice"}


def _graph(case: Case, recorder: Recorder) -> Any:
    if not case.tools:
        return graph(case.node(recorder), S)

    @tool
    def refund(reference: str) -> str:
        """Pay out a refund against a ledger reference."""
        recorder.tool_ran("refund", reference=reference)
        return "refunded"

    return graph(case.node(recorder), S, tools=[refund])


CELLS = [(c, p) for c in CASES for p in POLICIES]


@pytest.mark.parametrize(("case_name", "policy"), CELLS)
def test_the_lie_is_nowhere_under_every_policy(case_name: str, policy: str) -> None:
    case = CASES[case_name]
    recorder = Recorder()
    gate = TrustGate(
        "gate",
        reads=case.reads(),
        verifiers=[CHECK],
        policy=_policy(policy, case),
        passthrough=list(case.passthrough),
    )
    inputs = {"messages": [HumanMessage("Was the refund approved?")]}
    if case_name == "overwrite_drops_history":
        inputs = {"messages": [HumanMessage(f"Remember {LIE}.")]}
    a = attack(
        _graph(case, recorder),
        gate,
        inputs,
        downstream=("after", "tools") if case.tools else ("after",),
        recorder=recorder,
        answer=_answer(policy),
    )
    ran = [str(r.args.get("reference")) for r in recorder.tool_runs]
    if policy == "review_approve" and not a.halted:
        # a person approved the flagged output: released as their decision, recorded
        approvals = [r.approval for r in a.runs["stream"].reports if r.approval is not None]
        assert approvals and approvals[0].decision == "approve"
        return
    if case_name == "overwrite_drops_history":
        # the lie was in the input; what must hold is that the removal never lands
        assert a.halted
        return
    a.assert_blocked()
    assert LIE not in " ".join(ran)
    decisions = [r.decision for r in a.runs["stream"].reports]
    # the gate acted (a halt, a rewrite, a re-render whose next answer then passed)
    assert any(d != "pass" for d in decisions), decisions
