"""A crossing's write to ``trust_reports`` costs what it adds, not the thread's length.

The channel holds every report of the thread. A write used to re-type every report
it held (``Report.coerce`` on each) and rebuild the index of their ids, and every
step's checkpoint walked the whole log in Python to find what it had already dumped:
a thread with hundreds of crossings paid for all of them at each new one. These tests
count that work (no timing) and hold what the log keeps: appended in order, a report
delivered again replaced where it stands, a value restored, copied or set from outside
typed and indexed once.
"""

from __future__ import annotations

from typing import Any

import pytest

from trustgate import Finding
from trustgate._report import GateBody, Report, ReportLog, gate_json


def _reports(n: int) -> list[Report]:
    return [
        Report(gate="g", node="n", decision="pass", released=True, findings=[Finding.ok("v")])
        for _ in range(n)
    ]


def _bodies(reports: list[Report]) -> list[list[dict[str, Any]]]:
    return [gate_json([r]) for r in reports]


@pytest.fixture
def coerced(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every value ``Report.coerce`` is asked to type."""
    seen: list[Any] = []
    original = Report.coerce.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Report], value: Any) -> Report:
        seen.append(value)
        return original(cls, value)  # type: ignore[no-any-return]

    monkeypatch.setattr(Report, "coerce", classmethod(counting))
    return seen


def _log(bodies: list[list[dict[str, Any]]]) -> ReportLog:
    log = ReportLog()
    for b in bodies:
        log.update([b])
        log.checkpoint()
    return log


def test_a_write_does_not_retype_the_reports_held(coerced: list[Any]) -> None:
    reports = _reports(100)
    log = _log(_bodies(reports))
    before = log.value
    coerced.clear()
    (fresh,) = _reports(1)
    assert log.update([gate_json([fresh])])
    assert coerced == []
    assert [r.id for r in log.value] == [*(r.id for r in reports), fresh.id]
    # a new list: whoever holds the value before the write keeps it as it was
    assert log.value is not before and [r.id for r in before] == [r.id for r in reports]


def test_a_checkpoint_dumps_only_what_is_new(coerced: list[Any]) -> None:
    log = _log(_bodies(_reports(100)))
    coerced.clear()
    (fresh,) = _reports(1)
    body = gate_json([fresh])
    log.update([body])
    forms = log.checkpoint()
    assert len(forms) == 101 and forms[-1] is body[0]  # the gate's own sealed form
    assert coerced == []
    again = log.checkpoint()
    assert again is forms


def test_a_report_delivered_again_is_replaced_where_it_stands(coerced: list[Any]) -> None:
    reports = _reports(5)
    log = _log(_bodies(reports))
    coerced.clear()
    redelivered = reports[2].model_copy(update={"deliveries": 2})
    log.update([gate_json([redelivered])])
    assert coerced == []
    assert [r.id for r in log.value] == [r.id for r in reports]
    assert log.value[2].deliveries == 2
    forms = log.checkpoint()
    assert forms[2]["deliveries"] == 2 and forms[3]["id"] == reports[3].id


@pytest.mark.parametrize("how", ["restored", "copied", "set"])
def test_a_value_from_elsewhere_is_typed_and_indexed_once(how: str, coerced: list[Any]) -> None:
    reports = _reports(4)
    source = _log(_bodies(reports))
    if how == "restored":
        log = source.from_checkpoint([dict(b) for b in source.checkpoint()])
    elif how == "copied":
        log = source.copy()
    else:
        log = ReportLog()
        log.value = [dict(GateBody(b)) for b in source.checkpoint()]  # plain dicts
    redelivered = reports[1].model_copy(update={"deliveries": 3})
    (fresh,) = _reports(1)
    coerced.clear()
    assert log.update([gate_json([redelivered])])
    assert len(coerced) == len(reports)  # typed once, on the first write
    coerced.clear()
    assert log.update([gate_json([fresh])])
    assert coerced == []  # and not again
    assert [r.id for r in log.value] == [*(r.id for r in reports), fresh.id]
    assert all(isinstance(r, Report) for r in log.value)
    assert log.value[1].deliveries == 3
    # the source channel is untouched by what its copy took
    assert [r.deliveries for r in source.value] == [1, 1, 1, 1]
