"""Bounded work (issue 12, item 5): caps refuse hostile sizes as findings, never crashes."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate import _limits
from trustgate.errors import ClaimParseError, ClaimTooLarge, InputError
from trustgate.evidence.brief import Brief, EvidenceSet
from trustgate.evidence.workspace import Workspace
from trustgate.files import parse_manifest
from trustgate.verifiers.base import Evidence
from trustgate.verifiers.contracts.citations import check_citations
from trustgate.verifiers.files.checks import CitationReplay
from trustgate.verifiers.files.citations import replay_manifest
from trustgate.verifiers.integrity.check import check_integrity

CITATION = {"file": "a.py", "line": 1, "content": "import os"}


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize("depth", [65, 1_000, 100_000])
def test_deep_json_is_too_large_never_recursion_error(depth: int) -> None:
    with pytest.raises(ClaimTooLarge, match="nested deeper than 64"):
        _limits.loads_json(nested(depth))
    with pytest.raises(ClaimTooLarge):
        parse_manifest('{"items": ' + nested(depth) + "}")


def test_depth_at_the_cap_is_fine() -> None:
    assert _limits.loads_json(nested(64)) is not None


def test_deep_python_objects_and_cycles() -> None:
    deep: Any = 1
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(ClaimTooLarge):
        _limits.check_claim(deep)
    with pytest.raises(ClaimTooLarge):
        parse_manifest({"items": deep})
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ClaimTooLarge, match="refers to itself"):
        _limits.check_claim(loop)


def test_size_and_container_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits, "MAX_CLAIM_BYTES", 1_000)
    with pytest.raises(ClaimTooLarge, match="1,000-character cap"):
        _limits.loads_json("[" + "1," * 600 + "1]")
    with pytest.raises(ClaimTooLarge, match="1,000-byte cap"):
        _limits.loads_json(b" " * 1_001)
    monkeypatch.undo()
    monkeypatch.setattr(_limits, "MAX_JSON_CONTAINERS", 100)
    with pytest.raises(ClaimTooLarge, match="101 arrays/objects"):
        _limits.loads_json("[" + ",".join(["{}"] * 100) + "]")
    # brackets inside strings are text, not containers
    assert _limits.loads_json(json.dumps(["{[" * 500])) == ["{[" * 500]


def test_bad_text_is_a_parse_error() -> None:
    with pytest.raises(ClaimParseError, match="not valid UTF-8"):
        _limits.loads_json(b"\xff\xfe[]")
    with pytest.raises(ClaimParseError, match="not valid JSON"):
        _limits.loads_json("{oops")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200)))
def test_loads_json_raises_nothing_but_claim_parse_error(raw: bytes | str) -> None:
    try:
        value = _limits.loads_json(raw)
    except ClaimParseError:
        return
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    assert value == json.loads(text) or value != value  # NaN is not equal to itself


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=3_000), st.sampled_from(["[", '{"a":']))
def test_any_nesting_is_refused_or_parsed(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * depth + "1" + closer * depth
    try:
        _limits.loads_json(text)
    except ClaimTooLarge:
        assert depth > _limits.MAX_JSON_DEPTH
    else:
        assert depth <= _limits.MAX_JSON_DEPTH


def _ws(tmp_path: Path) -> Workspace:
    (tmp_path / "a.py").write_text("import os\n")
    return Workspace(tmp_path)


def test_a_million_citations_are_one_blocking_finding(tmp_path: Path) -> None:
    """The manifest of the issue (10^6 citations): refused before a single citation is
    validated or replayed, with a clear message, in bounded memory."""
    items = [{"item": "x", "status": "already_correct", "evidence": [CITATION] * 1_000_000}]
    tracemalloc.start()
    try:
        with pytest.raises(ClaimTooLarge, match="1,000,000 citations"):
            parse_manifest(items)
        findings = replay_manifest(items, _ws(tmp_path))
        verified = CitationReplay().verify({"items": items}, Evidence(workspace=_ws(tmp_path)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    for out in (findings, verified):
        assert [(f.code, f.blocking) for f in out] == [("claim_too_large", True)]
        assert "10,000-citation cap" in out[0].message
    assert peak < 20 * 1024 * 1024  # the 10^6 items were never copied or validated


def test_many_items_and_text_manifests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many = [{"item": f"i{i}", "status": "changed", "files": ["a.py"]} for i in range(10_001)]
    [f] = replay_manifest(many, _ws(tmp_path))
    assert f.code == "claim_too_large" and "10,001 items" in f.message
    text = json.dumps([{"item": "x", "status": "already_correct", "evidence": [CITATION] * 10_001}])
    [f] = replay_manifest(text, _ws(tmp_path))
    assert f.code == "claim_too_large"
    monkeypatch.setattr(_limits, "MAX_CLAIM_BYTES", 100)
    [f] = replay_manifest(text.encode(), _ws(tmp_path))
    assert f.code == "claim_too_large" and "bytes" in f.message


def test_citations_at_the_cap_are_all_replayed(tmp_path: Path) -> None:
    items = [{"item": "x", "status": "already_correct", "evidence": [CITATION] * 10_000}]
    [finding] = replay_manifest(items, _ws(tmp_path))  # the passes of one file: one finding
    assert finding.passed and len(finding.detail["citations"]) == 10_000


def test_contract_checks_refuse_drafts_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits, "MAX_DRAFT_CHARS", 1_000)
    draft = "Per A.5.9 see https://example.com for $5. " * 30
    for out in (
        check_citations(draft, Brief(citations=["A.5.9"])),
        check_integrity(draft, EvidenceSet(urls=["https://example.com"], prices=["$5"])),
    ):
        assert [(f.code, f.blocking) for f in out] == [("claim_too_large", True)]
        assert "1,000-character cap" in out[0].message
    assert all(f.passed for f in check_citations(draft[:900], Brief(citations=["A.5.9"])))


def test_file_verifiers_refuse_claims_past_the_caps(tmp_path: Path) -> None:
    from trustgate.verifiers.files.checks import ChangeCheck, GroundingCheck, HashCheck

    ev = Evidence(workspace=_ws(tmp_path))
    locator = {"path": "a.py", "start_line": 1}
    proposal = {"f": {"value": 1, "evidence": [locator] * 1_000_000}}
    deep: Any = {"files": ["a.py"]}
    for _ in range(200):
        deep = [deep]
    for verifier, claims in (
        (GroundingCheck(), proposal),
        (ChangeCheck(), deep),
        (HashCheck(), deep),
    ):
        [f] = verifier.verify(claims, ev)
        assert (f.code, f.blocking) == ("claim_too_large", True), verifier


def test_brief_and_evidence_text_are_bounded() -> None:
    with pytest.raises(ClaimTooLarge):
        Brief.from_json('{"citations": ' + nested(10_000) + "}")
    with pytest.raises(ClaimTooLarge):
        EvidenceSet.from_json(nested(10_000))
    with pytest.raises(InputError, match="got a string"):
        Brief.from_json('"ISO 27001"')


@pytest.mark.parametrize(
    ("unit", "check"),
    [
        ("A.5.9, ", "citations"),
        ("Article 32 and ", "citations"),
        ("see https://example.com/x ", "integrity"),
        ("a@b.example ", "integrity"),
        ("$5 ", "integrity"),
        ("\uff04\uff15 ", "integrity"),
    ],
)
def test_drafts_with_too_many_items_are_refused(
    unit: str, check: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_limits, "MAX_DRAFT_ITEMS", 100)
    brief = Brief(citations=["A.5.9", "GDPR Article 32"])
    evidence = EvidenceSet(urls=["https://example.com/x", "a@b.example"], prices=["$5"])

    def run(text: str) -> list[Any]:
        if check == "citations":
            return check_citations(text, brief)
        return check_integrity(text, evidence)

    assert all(f.passed for f in run(unit * 30))
    [f] = run(unit * 400)
    assert (f.code, f.blocking) == ("claim_too_large", True)
    assert "100" in f.message
