"""A gate seals each report once and writes that one form everywhere: the
``trust_reports`` channel takes the report it came with without checking the seal it
just made, and only that very object is vouched for. Any copy of it, any serializer's
round trip, is a plain dict whose seal is checked like any other write's."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, Report, TrustGate
from trustgate._report import GateBody, add_reports, gate_json
from trustgate._report_seal import check
from trustgate.graph import TrustReports


def _report(**extra: Any) -> Report:
    return Report(
        gate="g",
        node="n",
        decision="halted",
        released=False,
        findings=[Finding.failed("v", "unsupported", "the claim has no source")],
        **extra,
    )


def _serde(body: Any) -> Any:
    serde = JsonPlusSerializer()
    return serde.loads_typed(serde.dumps_typed(body))


COPIES = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda b: pickle.loads(pickle.dumps(b)),
    "checkpoint serializer": _serde,
    "dict": dict,
}


@pytest.mark.parametrize("how", sorted(COPIES))
def test_a_copy_of_a_gates_form_is_a_plain_dict_and_its_edit_is_refused(how: str) -> None:
    (form,) = gate_json([_report()])
    assert type(form) is GateBody
    copied = COPIES[how](form)
    assert type(copied) is dict
    assert check(copied) == ("sealed", None)
    assert [r.id for r in add_reports([], [copied])] == [form["id"]]  # checked, and sealed
    edited = {**copied, "decision": "pass", "released": True}
    assert check(edited)[0] == "forged"
    assert add_reports([], [edited]) == []
    copied["decision"] = "pass"  # edited in place, after the copy
    assert add_reports([], [copied]) == []


def test_the_channel_takes_the_gates_own_report_with_its_seal() -> None:
    report = _report()
    (form,) = gate_json([report])
    (taken,) = add_reports([], [form])
    assert taken is form.report
    assert taken.seal == form["seal"] and report.seal is None
    assert taken.model_dump(exclude={"seal"}) == report.model_dump(exclude={"seal"})
    assert check(taken.to_json_dict()) == ("sealed", None)


def test_a_report_object_with_a_copied_seal_is_refused() -> None:
    """A node that returns a typed report (not the gate's form) is checked: a seal
    copied onto other content does not hold."""
    (form,) = gate_json([_report()])
    forged = form.report.model_copy(update={"decision": "pass", "released": True})
    assert forged.seal == form["seal"]
    assert add_reports([], [forged]) == []


class S(TypedDict, total=False):
    text: str
    trust_reports: TrustReports


def test_the_checkpoint_keeps_the_form_the_gate_sealed() -> None:
    gate = TrustGate(
        "text",
        reads="text",
        verifiers=[FunctionVerifier(lambda c, e: Finding.ok("text"), name="text")],
    )
    g = StateGraph(S)
    g.add_node("writer", lambda s: {"text": "an answer"})
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    saver = InMemorySaver()
    app = trustgate.guard(g, {"writer": gate}).compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "forms"}}
    out = app.invoke({"text": "?"}, config)
    (in_state,) = out["trust_reports"]
    assert in_state.seal is not None
    (read,) = trustgate.reports(app, config)
    assert read == in_state
    tup = saver.get_tuple(config)
    assert tup is not None
    (stored,) = tup.checkpoint["channel_values"]["trust_reports"]
    assert type(stored) is dict and check(stored) == ("sealed", None)
    assert stored == in_state.to_json_dict()
