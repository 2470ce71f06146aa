"""`trustgate demo`: completes (exit 0) and catches the inventing builder's lies."""

from __future__ import annotations

import json

import pytest

from trustgate.cli import main


def test_demo_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "code-review", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["pipelines"]["code-review"]
    assert out["honest"]["verdict"] == "APPROVE" and out["honest"]["failed"] == 0
    inventing = out["inventing"]
    assert inventing["verdict"] == "REQUEST_CHANGES"
    codes = sorted(f["code"] for f in inventing["findings"] if f["status"] == "fail")
    assert codes == ["content_mismatch", "file_missing", "not_in_diff", "undeclared_change"]


def test_demo_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Overridden: evidence verification failed" in out
    assert "\033[" not in out  # no colour when not on a terminal
    assert main(["demo", "nonsense"]) == 2
