"""Strict verdict parsing: exactly one agreeing JSON object, else VerdictError, never a pass."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.contracts import Verdict, VerdictIssue, parse_verdict
from trustgate.errors import VerdictError
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.contracts.verdict import MAX_VERDICT_CHARS

PASS = '{"pass": true, "issues": []}'


def test_a_well_formed_pass() -> None:
    v = parse_verdict(PASS)
    assert v.passed is True and v.issues == ()
    assert parse_verdict(' \n\t{"issues":[],"pass":true}\r\n ').passed


def test_a_well_formed_fail_normalises_string_and_object_issues() -> None:
    v = parse_verdict(
        '{"pass": false, "issues": ["  cites clause 9.2, not in the brief ", '
        '{"message": "alters A.5.9", "code": "altered_citation", "quote": "x"}]}'
    )
    assert v.passed is False
    assert v.issues == (
        VerdictIssue(message="cites clause 9.2, not in the brief"),
        VerdictIssue(message="alters A.5.9", code="altered_citation", detail={"quote": "x"}),
    )
    findings = v.findings()
    assert [f.code for f in findings] == ["verdict_issue", "verdict_issue"]
    assert findings[1].detail == {"code": "altered_citation", "quote": "x"}
    assert all(f.blocking for f in findings)


def test_pass_verdict_findings() -> None:
    [f] = parse_verdict(PASS).findings("blind_verifier")
    assert f.passed and f.verifier == "blind_verifier"


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("Looks good to me!", "does not start with a JSON object"),
        ('The draft passes. {"pass": true, "issues": []}', "does not start"),
        ('{"pass": true, "issues": []} The draft is fine.', "trailing text"),
        ('```json\n{"pass": true, "issues": []}\n```', "code fence"),
        ('```\n{"pass": true, "issues": []}\n```', "code fence"),
        ('~~~\n{"pass": true, "issues": []}\n~~~', "code fence"),
        (PASS + PASS, "second JSON value"),
        (PASS + "\n" + '{"pass": false, "issues": ["x"]}', "second JSON value"),
        (PASS + " []", "second JSON value"),
        ('{"pass": true, "issues": ["x"]}', "pass but lists 1 issue"),
        ('{"pass": false, "issues": []}', "fail but lists no issues"),
        ('{"pass": "true", "issues": []}', '"pass" must be true or false'),
        ('{"pass": 1, "issues": []}', '"pass" must be true or false'),
        ('{"pass": null, "issues": []}', '"pass" must be true or false'),
        ('{"pass": "yes", "issues": []}', '"pass" must be true or false'),
        ('{"pass": true, "issues": {}}', '"issues" must be a list'),
        ('{"pass": true, "issues": null}', '"issues" must be a list'),
        ('{"pass": true, "issues": ""}', '"issues" must be a list'),
        ('{"pass": false, "issues": [1]}', "issue 0 is int"),
        ('{"pass": false, "issues": [["x"]]}', "issue 0 is list"),
        ('{"pass": false, "issues": ["  "]}', "issue 0 is blank"),
        ('{"pass": false, "issues": [{}]}', '"message"'),
        ('{"pass": true, "issues": [{"msg": "x"}]}', '"message"'),
        ('{"pass": true}', "lacks 'issues'"),
        ('{"issues": []}', "lacks 'pass'"),
        ("{}", "lacks"),
        ('{"pass": true, "issues": [], "reasoning": "fine"}', "unknown key"),
        ('{"passed": true, "pass": true, "issues": []}', "unknown key"),
        ('{"pass": true, "pass": false, "issues": ["x"]}', "repeats the key 'pass'"),
        ('{"pass": false, "pass": true, "issues": []}', "repeats the key 'pass'"),
        ('{"pass": true, "issues": [], "issues": []}', "repeats the key 'issues'"),
        ('{"pass": false, "issues": [{"message": "a", "message": "b"}]}', "repeats"),
        ('{"pass": true, "issues": [', "truncated"),
        ('{"pass": true, "iss', "truncated"),
        ('{"pass": tru', "not valid JSON"),
        ("{'pass': True, 'issues': []}", "not valid JSON"),
        ('{"pass": true, "issues": [],}', "not valid JSON"),
        ('{"pass": false, "issues": [NaN]}', "NaN"),
        ('{"pass": false, "issues": [Infinity]}', "Infinity"),
        ('{"pass": false, "issues": [-Infinity]}', "Infinity"),
        ('{"pass": false, "issues": [1e999]}', "overflows"),
        ('{"pass": false, "issues": [' + "9" * 5000 + "]}", "not valid JSON"),
        ("[" + PASS + "]", "does not start"),
        ('"pass"', "does not start"),
        ("true", "does not start"),
        ("\ufeff" + PASS, "does not start"),
        ("\u00a0" + PASS, "does not start"),
        ('{"a":' * 50_000, "nests too deeply|not valid JSON"),
    ],
)
def test_malformed_verdicts_raise_and_never_pass(raw: str, needle: str) -> None:
    with pytest.raises(VerdictError, match=needle) as info:
        parse_verdict(raw)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("raw", [b'{"pass": true, "issues": []}', None, {"pass": True}, 1, []])
def test_non_text_input_is_refused(raw: Any) -> None:
    with pytest.raises(VerdictError, match="must be text"):
        parse_verdict(raw)


def test_huge_input_is_refused_before_parsing() -> None:
    raw = '{"pass": false, "issues": ["' + "x" * MAX_VERDICT_CHARS + '"]}'
    with pytest.raises(VerdictError, match="limit"):
        parse_verdict(raw)


def test_verdict_built_by_hand_accepts_string_issues() -> None:
    v = Verdict(passed=False, issues=["cites clause 9.2"])
    assert v.messages == ["cites clause 9.2"]
    assert v == parse_verdict('{"pass": false, "issues": ["cites clause 9.2"]}')


def test_verdict_model_enforces_agreement_too() -> None:
    with pytest.raises(VerdictError):
        Verdict(passed=True, issues=(VerdictIssue(message="x"),))
    with pytest.raises(VerdictError):
        Verdict(passed=False)


# --------------------------------------------------------------------------- mutation tests


@pytest.mark.parametrize(
    "reply",
    [
        "The draft looks faithful to the brief. PASS.",
        '```json\n{"pass": true, "issues": []}\n```',
        '{"pass": true, "issues": ["cites ISO 27001 clause 9.2, not in the brief"]}',
        '{"pass": true, "issues": []}\n{"pass": false, "issues": ["x"]}',
        '{"pass": true, "pass": false, "issues": []}',
        '{"pass": "true", "issues": []}',
        '{"pass": true, "issues": [], "confidence": 0.4}',
        '{"pass": true, "issues": [',
    ],
)
def test_lying_verifier_models_never_get_a_pass(reply: str) -> None:
    model = lying_model(reply)
    with pytest.raises(VerdictError):
        parse_verdict(model.invoke("brief + draft").text)


def test_honest_verifier_models_parse() -> None:
    model = honest_model(
        {"pass": False, "issues": ["cites ISO/IEC 27001:2022 clause 9.2, outside the brief"]},
        {"pass": True, "issues": []},
    )
    first = parse_verdict(model.invoke("verify").text)
    second = parse_verdict(model.invoke("verify again").text)
    assert (first.passed, second.passed) == (False, True)
    assert "clause 9.2" in first.issues[0].message


# --------------------------------------------------------------------------- properties


class _Dup(Exception):
    pass


def _oracle_pass(text: str) -> bool:
    """The only texts that may pass: whitespace + one exact agreeing pass object."""
    stripped = text.strip(" \t\r\n")
    if not stripped.startswith("{"):
        return False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise _Dup
        return dict(pairs)

    try:
        obj = json.loads(stripped, object_pairs_hook=hook, parse_constant=lambda c: math.nan)
    except (ValueError, _Dup, RecursionError):
        return False
    return (
        isinstance(obj, dict)
        and set(obj) == {"pass", "issues"}
        and obj["pass"] is True
        and isinstance(obj["issues"], list)
        and obj["issues"] == []
    )


def _check(text: str) -> None:
    try:
        verdict = parse_verdict(text)
    except VerdictError:
        return
    if verdict.passed:
        assert _oracle_pass(text), text
        assert verdict.issues == ()
    else:
        assert verdict.issues


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["pass", "issues", "message", "x"]), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_property_arbitrary_text_never_passes_unless_well_formed(text: str) -> None:
    _check(text)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_property_arbitrary_json_values(value: Any) -> None:
    _check(json.dumps(value))


@settings(max_examples=400, deadline=None)
@given(
    st.fixed_dictionaries(
        {"pass": json_values | st.booleans(), "issues": json_values | st.just([])}
    )
)
def test_property_verdict_shaped_objects(value: dict[str, Any]) -> None:
    _check(json.dumps(value))


VALID = [
    '{"pass": true, "issues": []}',
    '{"pass": false, "issues": ["cites clause 9.2"]}',
    '{"issues": [{"message": "x", "code": "y"}], "pass": false}',
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "wrap", "swap"]))
        i = draw(st.integers(0, len(text)))
        if kind == "delete" and text:
            j = draw(st.integers(i, min(len(text), i + 6)))
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = (
                text[:i] + draw(st.sampled_from([*'{}[]",:tfn0 \nx', "true", "false"])) + text[i:]
            )
        elif kind == "replace":
            text = text.replace(
                draw(st.sampled_from(["true", "false", "[]", '"pass"', '"issues"'])),
                draw(st.sampled_from(["false", "true", '["x"]', "[]", '"pass"', "1", '"true"'])),
                1,
            )
        elif kind == "duplicate":
            j = draw(st.integers(i, len(text)))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "wrap":
            pre, post = draw(
                st.sampled_from(
                    [("```json\n", "\n```"), ("Verdict: ", ""), ("", " ok"), ("[", "]")]
                )
            )
            text = pre + text + post
        elif kind == "swap":
            text = text.replace('"issues": []', '"issues": [], "pass": true', 1)
    return text


@settings(max_examples=600, deadline=None)
@given(mutated())
def test_property_mutated_verdicts_never_pass_unless_still_well_formed(text: str) -> None:
    _check(text)


@pytest.mark.parametrize(
    "raw",
    [
        '{"pass": false, "issues": [{"msg": "cites 9.2"}]}',
        '{"pass": false, "issues": [{"message": ""}]}',
        '{"pass": false, "issues": [{"message": "x", "code": 3}]}',
        '{"pass": false, "issues": [{"problem": "invented clause", "where": [1, 2]}]}',
    ],
)
def test_a_fail_with_issue_objects_of_its_own_shape_is_still_a_fail(raw: str) -> None:
    verdict = parse_verdict(raw)
    assert verdict.passed is False
    assert len(verdict.issues) == 1
    issue = verdict.issues[0]
    obj = json.loads(raw)["issues"][0]
    assert issue.detail == obj  # the object is kept whole as the issue
    assert issue.message.startswith("{")
    assert all(not f.passed for f in verdict.findings())
