"""A report's JSON form built by hand is the form pydantic dumps, seal and all.

The gate seals each report over its JSON form; the hand-built form of
``trustgate._report_json`` must be that form exactly (the same keys in the same order,
the same values), or a report sealed in one form fails its seal when read back in the
other. Reports outside the shape it builds are dumped by pydantic as before.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from trustgate import Finding
from trustgate import _report_seal as report_seal
from trustgate._findings import Cut
from trustgate._report import Approval, OverrideRecord, Report, gate_json
from trustgate._report_json import FORM_FIELDS, json_form


def _dumped(r: Report) -> dict[str, Any]:
    return r.model_dump(mode="json", fallback=repr, exclude={"seal"})


def _report(**extra: Any) -> Report:
    values: dict[str, Any] = {
        "gate": "g",
        "node": "n",
        "decision": "pass",
        "released": True,
        "claims": ["ok"],
        "findings": [Finding.ok("v").with_parts(("flag",))],
        "accounting": {"flag": "verified", "n": "passthrough"},
    }
    values.update(extra)
    return Report(**values)


SHAPES = {
    "plain": _report(),
    "ids": _report(
        thread_id="t1",
        run_id="r1",
        step=3,
        checkpoint_ns="n:abc",
        task_id="abc",
        crossing="c" * 32,
        attempt=2,
        deliveries=2,
    ),
    "halted": _report(
        decision="halted",
        released=False,
        error="v: ValueError: boom",
        findings=[
            Finding.failed(
                "v",
                "bad",
                "the claim is false",
                subject="messages[0].text",
                detail={"n": 1, "x": 0.5, "nested": {"k": [1, "two", None, True]}},
                parts=("messages[0].text",),
            ),
            Finding.failed("v", "warned", "meh", severity="warn"),
        ],
        overrides=[
            OverrideRecord(kind="halt", target="n", reason="unresolved: v/bad"),
            OverrideRecord(
                kind="field_override",
                target="verdict",
                before={"verdict": "APPROVE", "n": [1, 2]},
                after="REQUEST_CHANGES",
                reason="v/bad",
                verifier="v",
                configured=True,
            ),
        ],
    ),
    "claims of every plain kind": _report(
        claims=[{"a": [1, 2.5, None]}, 7, True, None, "text", [["x"]], (1, 2)]
    ),
    "approval": _report(
        decision="reviewed",
        approval=Approval(decision="approve", who="ana", what="all", message="fine"),
    ),
    "no microseconds": _report(
        started_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        finished_at=datetime(2026, 1, 2, 3, 4, 5, 10, tzinfo=UTC),
    ),
    "no findings": _report(findings=[], claims=[], accounting={}),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_hand_built_form_is_the_dumped_form(name: str) -> None:
    r = SHAPES[name]
    form = json_form(r)
    assert form is not None, name
    assert form == _dumped(r)
    assert list(form) == list(_dumped(r))  # the same order of keys
    assert [list(f) for f in form["findings"]] == [list(f) for f in _dumped(r)["findings"]]


class _Sub(Report):
    pass


OTHER = {
    "a proposal": _report(
        findings=[Finding.failed("v", "bad", "cut it", proposals=(Cut(text="cut it"),))]
    ),
    "a float that is not finite": _report(claims=[float("nan")]),
    "a key that is not a string": _report(claims=[{1: "one"}]),
    "bytes in a claim": _report(claims=[b"raw"]),
    "a subclass": _Sub(gate="g", node="n", decision="pass", released=True),
    "another time zone": _report(
        started_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=1)))
    ),
    "a naive time": _report(finished_at=datetime(2026, 1, 1)),
    "a model in an override": _report(
        overrides=[OverrideRecord(kind="coerced", target="x", after=Finding.ok("v"), reason="r")]
    ),
}


@pytest.mark.parametrize("name", sorted(OTHER))
def test_anything_else_is_left_to_pydantic(name: str) -> None:
    r = OTHER[name]
    assert json_form(r) is None
    body = gate_json([r])[0]
    assert dict(body) == report_seal.seal(r.to_json_dict())
    assert report_seal.check(body) == ("sealed", None)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_gate_body_is_sealed_as_before(name: str) -> None:
    r = SHAPES[name]
    body = gate_json([r])[0]
    before = report_seal.seal(r.to_json_dict())
    assert dict(body) == before and list(body) == list(before)
    assert report_seal.check(body) == ("sealed", None)
    copied = r.model_copy(update={"seal": before["seal"]})
    assert body.report == copied
    assert body.report.__pydantic_fields_set__ == copied.__pydantic_fields_set__
    assert body.report.__dict__ == copied.__dict__
    # the body is a copy: editing the report's claims does not change what was sealed
    if r.claims and isinstance(r.claims[0], dict):
        r.claims[0]["a"] = "edited"
        assert report_seal.check(body) == ("sealed", None)


def test_the_seal_covers_the_hand_built_form() -> None:
    body = gate_json([SHAPES["halted"]])[0]
    forged = dict(body)
    forged["findings"] = [dict(forged["findings"][0], status="pass")]
    assert report_seal.check(forged)[0] == "forged"


def test_each_hand_built_form_writes_exactly_its_models_fields() -> None:
    """A field added to a report model and not to its hand-built form would be sealed
    without it: the forms list every model's fields, and a mismatch sends every report
    to pydantic (the fast path is off, never wrong)."""
    models = {"Report": Report, "Finding": Finding, "OverrideRecord": OverrideRecord}
    models["Approval"] = Approval
    for name, model in models.items():
        assert set(model.model_fields) == FORM_FIELDS[name], name
    assert json_form(SHAPES["plain"]) is not None


def test_a_model_field_the_form_does_not_list_turns_the_fast_path_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trustgate import _report_json

    monkeypatch.setattr(_report_json, "_fields_agree", None)
    fewer = {**FORM_FIELDS, "OverrideRecord": FORM_FIELDS["OverrideRecord"] - {"configured"}}
    monkeypatch.setattr(_report_json, "FORM_FIELDS", fewer)
    assert json_form(SHAPES["halted"]) is None
