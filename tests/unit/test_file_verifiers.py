"""The file verifiers as gate steps: evidence from the crossing, lies stopped."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from _support import APP_PY, MakeRepo

from trustgate import ConfigurationError
from trustgate.files import InMemoryLedger, Workspace
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.base import Evidence, Verifier
from trustgate.verifiers.files.checks import ChangeCheck, CitationReplay, GroundingCheck, HashCheck


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    return make_repo({"app.py": APP_PY, "logs/pool.log": "14:02 pool wait 9200ms\n"})


def failing(findings: list) -> set[str]:
    return {f.code for f in findings if f.blocking}


def test_they_implement_the_protocol() -> None:
    for v in (CitationReplay(), ChangeCheck(), HashCheck(), GroundingCheck()):
        assert isinstance(v, Verifier) and v.name and v.timeout


def test_citation_replay_from_model_output(repo: Path) -> None:
    lie = lying_model(
        {
            "items": [
                {
                    "item": "x",
                    "status": "already_correct",
                    "evidence": [
                        {"file": "app.py", "line": 4, "content": "if body is None: return 400"}
                    ],
                }
            ]
        }
    )
    findings = CitationReplay().verify(lie.invoke("go").text, Evidence(workspace=str(repo)))
    assert failing(findings) == {"content_mismatch"}
    honest = honest_model(
        {
            "items": [
                {
                    "item": "x",
                    "status": "already_correct",
                    "evidence": [
                        {"file": "app.py", "line": 4, "content": "if not event.get('body'):"}
                    ],
                }
            ]
        }
    )
    assert not failing(
        CitationReplay().verify(honest.invoke("go").text, Evidence(workspace=Workspace(repo)))
    )


def test_missing_workspace_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        CitationReplay().verify([], Evidence())


def test_change_and_hash_checks(repo: Path) -> None:
    ev = Evidence(workspace=Workspace(repo))
    assert failing(ChangeCheck().verify({"files": ["app.py"]}, ev)) == {"not_in_diff"}
    assert failing(ChangeCheck().verify([{"files": "app.py"}], ev)) == {"malformed_claim"}
    good = hashlib.sha256(APP_PY.encode()).hexdigest()
    assert not failing(HashCheck().verify({"path": "app.py", "sha256": good}, ev))
    assert failing(HashCheck().verify([{"path": "app.py", "sha256": "0" * 64}], ev)) == {
        "hash_mismatch"
    }


def test_grounding_check_acquires_and_holds_trust_bars(repo: Path) -> None:
    ledger = InMemoryLedger()
    ev = Evidence(workspace=Workspace(repo), ledger=ledger)
    check = GroundingCheck({"root_cause": "verified", "impact": "unverified"})
    honest = {
        "root_cause": {
            "value": "pool wait",
            "evidence": [{"path": "logs/pool.log", "start_line": 1}],
        },
        "impact": {
            "value": "slow checkout",
            "evidence": [{"source": "slack", "uri": "slack://C1/1"}],
        },
    }
    assert not failing(check.verify(honest, ev))
    assert len(ledger) == 2
    lying = {
        "root_cause": {
            "value": "deploy doubled concurrency",
            "evidence": [
                {"source": "slack", "uri": "slack://C1/2"},
                {"path": "logs/deploy.log", "start_line": 3},
                {"path": "../../etc/passwd"},
                "invented-artifact-id",
            ],
        },
        "impact": {"value": "x", "evidence": [{"path": "logs/pool.log", "start_line": 9}]},
    }
    codes = failing(check.verify(lying, ev))
    assert codes == {
        "unverified_evidence",
        "file_missing",
        "path_traversal",
        "unknown_artifact",
        "line_out_of_range",
        "no_evidence",
    }
    assert failing(check.verify("prose", ev)) == {"malformed_claim"}


def test_agent_written_excerpt_is_never_evidence(repo: Path) -> None:
    ledger = InMemoryLedger()
    ev = Evidence(workspace=Workspace(repo), ledger=ledger)
    claim = {
        "root_cause": {
            "value": "pool",
            "evidence": [
                {"path": "logs/pool.log", "start_line": 1, "excerpt": "deploy doubled workers"}
            ],
        }
    }
    findings = GroundingCheck({"root_cause": "verified"}).verify(claim, ev)
    assert failing(findings) == {"agent_excerpt", "no_evidence"}
    assert len(ledger) == 0
