"""Reports come only from gates: what any other node, the caller's input, a state
update or an edit of a checkpoint puts in ``trust_reports`` is never shown as a crossing
(not in the state, not in ``trustgate.reports``, not in the report log)."""

from __future__ import annotations

import logging
import operator
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Overwrite
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, Report, TrustGate
from trustgate._report import add_reports, gate_json
from trustgate._report_seal import check
from trustgate.errors import ConfigurationError
from trustgate.graph import TrustReports
from trustgate.persistence import InMemoryReportHistory, ReportingSaver, SqliteReportHistory

FORGED_GATE = "reviewer"  # the name a forger gives its report


class S(TypedDict, total=False):
    text: str
    acted: Annotated[list[str], operator.add]
    trust_reports: TrustReports


def _forged(thread: str | None = None, **extra: Any) -> dict[str, Any]:
    return Report(
        gate=FORGED_GATE,
        node="writer",
        decision="pass",
        released=True,
        thread_id=thread,
        **extra,
    ).to_json_dict()


def _gate() -> TrustGate:
    def check_text(claims: Any, evidence: Any) -> list[Finding]:
        return [Finding.ok("text")]

    return TrustGate("text", reads="text", verifiers=[FunctionVerifier(check_text, name="text")])


def _graph(forger: Any, saver: Any) -> Any:
    """writer (guarded) → forger (unguarded, writes whatever it is given) → END."""
    g = StateGraph(S)
    g.add_node("writer", lambda s: {"text": "an honest answer"})
    g.add_node("forger", forger)
    g.add_edge(START, "writer")
    g.add_edge("writer", "forger")
    g.add_edge("forger", END)
    return trustgate.guard(g, {"writer": _gate()}).compile(checkpointer=saver)


def _gates(found: Any) -> list[str]:
    return [r.gate for r in found]


def _logged(log: Any, thread: str) -> list[str]:
    return [r.gate for r in log.history(thread=thread)]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_report_an_unguarded_node_writes_is_refused(
    backend: str, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    log = (
        InMemoryReportHistory()
        if backend == "memory"
        else SqliteReportHistory(tmp_path / "reports.db")
    )
    saver = ReportingSaver(InMemorySaver(), log)
    app = _graph(lambda s: {"trust_reports": [_forged("t")]}, saver)
    config = {"configurable": {"thread_id": "t"}}
    with caplog.at_level(logging.WARNING):
        out = app.invoke({"text": "?"}, config)
    assert _gates(out["trust_reports"]) == ["text"]
    assert _gates(trustgate.reports(app, config)) == ["text"]
    saver.reconcile(config)
    assert _logged(log, "t") == ["text"]
    assert "not written by a gate" in caplog.text


def test_a_report_in_the_callers_input_is_refused() -> None:
    """The schema declares the channel (the documented pattern), so the input may carry
    it: a deployed graph takes its input from clients."""
    log = InMemoryReportHistory()
    app = _graph(lambda s: {}, ReportingSaver(InMemorySaver(), log))
    config = {"configurable": {"thread_id": "input"}}
    out = app.invoke({"text": "?", "trust_reports": [_forged("input")]}, config)
    assert _gates(out["trust_reports"]) == ["text"]
    assert _gates(trustgate.reports(app, config)) == ["text"]
    assert _logged(log, "input") == ["text"]


def test_a_report_put_by_update_state_or_an_overwrite_is_refused() -> None:
    saver = InMemorySaver()
    app = _graph(lambda s: {"trust_reports": Overwrite([_forged("o")])}, saver)
    config = {"configurable": {"thread_id": "o"}}
    out = app.invoke({"text": "?"}, config)
    assert _gates(out["trust_reports"]) == ["text"]  # the gate's report survives the overwrite
    app.update_state(config, {"trust_reports": [_forged("o")]})
    app.update_state(config, {"trust_reports": Overwrite([])})
    assert _gates(app.get_state(config).values["trust_reports"]) == ["text"]
    assert _gates(trustgate.reports(app, config)) == ["text"]


def test_what_is_not_a_report_at_all_is_refused_not_raised() -> None:
    app = _graph(lambda s: {"trust_reports": ["pass", {"gate": 3}, 7]}, InMemorySaver())
    out = app.invoke({"text": "?"}, {"configurable": {"thread_id": "junk"}})
    assert _gates(out["trust_reports"]) == ["text"]


def test_a_report_edited_in_a_checkpoint_is_shown_as_forged() -> None:
    saver = InMemorySaver()
    app = _graph(lambda s: {}, saver)
    config = {"configurable": {"thread_id": "edit"}}
    app.invoke({"text": "?"}, config)
    # edit every stored copy of the report, as someone with the database would
    for writes in saver.writes.values():
        for idx, (task, channel, (kind, data), path) in list(writes.items()):
            if channel == "trust_reports":
                bodies = saver.serde.loads_typed((kind, data))
                edited = [{**b, "gate": "approved-by-nobody"} for b in bodies]
                writes[idx] = (task, channel, saver.serde.dumps_typed(edited), path)
    for key, blob in list(saver.blobs.items()):
        if key[2] == "trust_reports" and blob[0] != "empty":
            bodies = saver.serde.loads_typed(blob)
            saver.blobs[key] = saver.serde.dumps_typed(
                [{**b, "gate": "approved-by-nobody"} for b in bodies]
            )
    found = trustgate.reports(app, config)
    assert found == []
    assert {row.status for row in found.refused} == {"forged"}
    assert {row.gate for row in found.refused} == {"approved-by-nobody"}


def test_a_gate_report_copied_into_another_thread_is_not_that_threads_crossing() -> None:
    app = _graph(lambda s: {}, InMemorySaver())
    first = {"configurable": {"thread_id": "a"}}
    app.invoke({"text": "?"}, first)
    (genuine,) = trustgate.reports(app, first)
    copied = gate_json([genuine])
    second = {"configurable": {"thread_id": "b"}}
    app.invoke({"text": "?", "trust_reports": copied}, second)
    found = trustgate.reports(app, second)
    assert genuine.id not in [r.id for r in found]
    assert [row.status for row in found.refused] == ["forged"]


def test_a_report_sealed_under_another_key_is_not_vouched_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (sealed,) = gate_json([Report(gate="g", node="n", decision="pass", released=True)])
    assert check(sealed)[0] == "sealed"
    monkeypatch.setenv("TRUSTGATE_LEDGER_KEY", "another-key-of-another-worker-0123")
    status, reason = check(sealed)
    assert status == "unsealed" and reason is not None and "another key" in reason
    assert add_reports([], [sealed]) == []


def test_guard_refuses_a_report_channel_with_another_reducer() -> None:
    class Loose(TypedDict, total=False):
        text: str
        trust_reports: Annotated[list[Any], operator.add]

    g = StateGraph(Loose)
    g.add_node("writer", lambda s: {"text": "x"})
    g.add_edge(START, "writer")
    with pytest.raises(ConfigurationError, match="TrustReports"):
        trustgate.guard(g, {"writer": _gate()})


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    claims=st.lists(_json, max_size=4),
    message=st.text(max_size=40),
    detail=st.dictionaries(st.text(max_size=8), _json, max_size=3),
    decision=st.sampled_from(["pass", "modified", "halted"]),
    field=st.sampled_from(["gate", "decision", "released", "claims", "findings", "deliveries"]),
)
def test_a_sealed_report_survives_its_round_trip_and_no_edit_survives_the_seal(
    claims: list[Any], message: str, detail: dict[str, Any], decision: str, field: str
) -> None:
    report = Report(
        gate="g",
        node="n",
        claims=claims,
        findings=[Finding.failed("v", "code", message, detail=detail)],
        decision=decision,  # type: ignore[arg-type]
        released=decision != "halted",
    )
    (sealed,) = gate_json([report])
    # stored and read back as a typed report (what a checkpoint restore does)
    again = Report.coerce(sealed).to_json_dict()
    assert check(again) == ("sealed", None)
    edits: dict[str, Any] = {
        "gate": "other",
        "decision": "pass" if decision != "pass" else "halted",
        "released": not sealed["released"],
        "claims": [*claims, "added"],
        "findings": [],
        "deliveries": 5,
    }
    assert check({**sealed, field: edits[field]})[0] == "forged"
