"""Each demo pipeline ends with one line a new user can read as an outcome: what the
model claimed, what was checked, what was done; a halt reads as the designed stop it is.
The line is computed from the run, so the honest run gets a different, true one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trustgate.cli import main


@pytest.fixture(autouse=True)
def _scripted_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)


def _verdicts(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str) -> dict[str, Any]:
    assert main(["demo", *argv, "--json", "--database-url", str(tmp_path / "d.db")]) == 0
    runs = json.loads(capsys.readouterr().out)["pipelines"]
    return {name: run["verdict"] for name, run in runs.items()}


def test_the_inventing_runs_end_in_outcomes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    v = _verdicts(capsys, tmp_path)
    assert "said APPROVE" in v["code-review"] and "(APPROVE → REQUEST_CHANGES)" in v["code-review"]
    assert "dropped (db_pool_size, replica_pool_size, service_owner)" in v["investigation"]
    assert "the case file keeps 1 value" in v["investigation"]
    assert "2 sentences asserting what the record does not show" in v["postmortem"]
    compliance = v["compliance"]
    assert "“Stakeholder email” was not released" in compliance
    assert "answered in prose, not with a verdict" in compliance
    assert "stopped there by design" in compliance and "VerdictError" not in compliance
    assert all(line.endswith(".") and "\n" not in line for line in v.values())


def test_the_honest_runs_say_nothing_was_changed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    v = _verdicts(capsys, tmp_path, "--honest")
    assert "matched, so its APPROVE stood" in v["code-review"]
    assert "went out as written" in v["postmortem"]
    assert "every citation and price was on the approved list" in v["compliance"]
    assert "not released" not in v["compliance"]


def test_the_text_output_starts_with_what_is_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["demo", "code-review", "--database-url", str(tmp_path / "d.db")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("trustgate demo: four small agent pipelines")
    assert out.rstrip().splitlines()[-3].startswith("Verdict: The reviewing model said APPROVE")
