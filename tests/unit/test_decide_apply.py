"""Decide, then apply: verifiers say in their findings what must go; policies act on
that and know no other module's finding codes."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from trustgate import Finding, GroundingCheck, Strike
from trustgate.files import InMemoryLedger, Locator, Workspace, acquire_locators, meets_trust_bar
from trustgate.pipelines.investigation import DropUngrounded
from trustgate.policies import Release, SetPath
from trustgate.verifiers.base import Evidence

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class _View:
    """The part of a crossing a policy reads."""

    output: dict[str, Any]
    unresolved: list[Finding]
    findings: Sequence[Finding] = field(default_factory=list)
    gate: str = "g"
    node: str = "n"
    attempt: int = 1
    claims: Any = None
    target: str | None = None

    def get(self, path: str) -> Any:
        return self.output.get(path)

    def text(self, target: str) -> str | None:
        return None

    def report_draft(self) -> dict[str, Any]:
        return {}


def _proposal() -> dict[str, Any]:
    return {
        "owner": {"value": "team-platform", "evidence": [{"path": "a.txt"}, {"path": "../x"}]},
        "timeout": {"value": 30000, "evidence": []},
    }


def test_drop_ungrounded_acts_on_what_the_finding_says_to_strike() -> None:
    findings = [
        Finding.failed(
            "anything",
            "some_code",
            "entry refused",
            proposals=[Strike(path=("owner", "evidence", 1))],
        ),
        Finding.failed(
            "anything", "other_code", "nothing grounds it", proposals=[Strike(path=("timeout",))]
        ),
    ]
    decision = DropUngrounded().decide(_View({"proposal": _proposal()}, findings))
    assert isinstance(decision, Release)
    (rewrite,) = decision.rewrites
    assert isinstance(rewrite, SetPath)
    assert rewrite.value == {"owner": {"value": "team-platform", "evidence": [{"path": "a.txt"}]}}
    assert [r.kind for r in decision.records] == ["citation_drop", "field_override"]
    assert [r.target for r in decision.records] == [
        "proposal.owner.evidence[1]",
        "proposal.timeout",
    ]
    assert list(decision.resolves) == findings


def test_drop_ungrounded_ignores_codes_without_a_strike() -> None:
    """The codes the policy once knew, with no strike in the finding: not its business."""
    findings = [
        Finding.failed("trust_bar", code, "x", subject="timeout")
        for code in ("no_evidence", "unknown_artifact", "tampered", "malformed_claim")
    ]
    assert DropUngrounded().decide(_View({"proposal": _proposal()}, findings)) is None


def test_grounding_check_findings_say_what_to_strike(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("owner: team-platform\n")
    found = GroundingCheck(default="verified").verify(_proposal(), Evidence(workspace=tmp_path))
    strikes = {
        (f.code, p.path)
        for f in found
        if not f.passed
        for p in f.proposals
        if isinstance(p, Strike)
    }
    assert ("path_traversal", ("owner", "evidence", 1)) in strikes
    assert ("no_evidence", ("timeout",)) in strikes
    ok = [f for f in found if f.passed and "artifact_id" in f.detail]
    assert [f.detail["field"] for f in ok] == ["owner"]


def test_trust_bar_and_acquisition_findings_say_what_to_strike(tmp_path: Path) -> None:
    ledger = InMemoryLedger()
    found = meets_trust_bar({"f": {"value": 1, "artifacts": []}, "g": "oops"}, ledger, {})
    assert {f.subject: [p.path for p in f.proposals] for f in found if not f.passed} == {
        "f": [("f",)],
        "g": [("g",)],
    }
    (tmp_path / "a.txt").write_text("x\n")
    _, refused = acquire_locators(
        [Locator(path="a.txt"), {"path": "missing.txt"}, {"nope": 1}], Workspace(tmp_path)
    )
    assert [[p.path for p in f.proposals] for f in refused if not f.passed] == [[(1,)], [(2,)]]


def _policy_classes() -> list[tuple[Path, ast.ClassDef]]:
    found = []
    for path in sorted(ROOT.glob("trustgate/**/*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.FunctionDef) and b.name == "decide" for b in node.body
            ):
                found.append((path, node))
    return found


def test_every_policy_is_found() -> None:
    names = {c.name for _, c in _policy_classes()}
    assert {"Halt", "Override", "Redact", "BlockToolCalls", "Caveat", "Review"} <= names
    assert "DropUngrounded" in names


@pytest.mark.parametrize(("path", "cls"), _policy_classes(), ids=lambda v: getattr(v, "name", ""))
def test_no_policy_branches_on_a_finding_code(path: Path, cls: ast.ClassDef) -> None:
    """A policy may quote ``f.code`` in a reason; it may not compare it to anything."""
    for node in ast.walk(cls):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            assert not any(isinstance(p, ast.Attribute) and p.attr == "code" for p in parts), (
                f"{path.name}:{node.lineno}: {cls.name} compares a finding code"
            )
