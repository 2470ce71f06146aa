"""`trustgate demo`: runs every pipeline with its inventing models, exit 0, catches each lie."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trustgate.cli import main


@pytest.fixture(autouse=True)
def _scripted_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)  # never a paid model in tests


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["demo", *argv, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)["pipelines"]
    return out


def _overrides(run: dict[str, Any]) -> list[tuple[str, str]]:
    return [(o["kind"], o["target"]) for c in run["crossings"] for o in c["overrides"]]


def test_demo_json_all_pipelines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _json(capsys, "all", "--database-url", str(tmp_path / "demo.db"))
    assert list(out) == ["code-review", "investigation", "postmortem", "compliance"]

    cr = out["code-review"]
    assert cr["status"] == "completed"
    first = cr["crossings"][0]
    assert first["decision"] == "modified"
    assert sorted(f["code"] for f in first["failed"]) == [
        "content_mismatch",
        "file_missing",
        "not_in_diff",
    ]
    assert first["overrides"][0]["before"] == "APPROVE"
    assert first["overrides"][0]["after"] == "REQUEST_CHANGES"
    assert "(Overridden: evidence verification failed" in cr["artefact"]

    inv = out["investigation"]
    assert [c["decision"] for c in inv["crossings"]] == ["reviewed", "modified"]
    assert ("field_override", "reconciliation.db_host") in _overrides(inv)
    assert list(inv["artefact_data"]["case"]) == ["request_timeout_ms"]
    assert inv["crossings"][0]["approval"]["who"] == "Dana (SRE)"

    pm = out["postmortem"]
    assert [k for k, _ in _overrides(pm)] == ["sentence_delete", "sentence_delete", "citation_drop"]
    assert "because" not in pm["artefact"] and "**Open question:**" in pm["artefact"]
    assert "Per Dana (SRE) (not in the record):" in pm["artefact"]

    co = out["compliance"]
    assert co["status"] == "halted" and co["halted"]["gate"] == "blind_verifier"
    assert [c["decision"] for c in co["crossings"]] == [
        "rerendered",
        "caveated",
        "rerendered",
        "pass",
        "halted",
    ]
    assert "clause 9.3" not in co["artefact"] and "(not released" in co["artefact"]
    assert (tmp_path / "demo.db").exists()  # checkpoints in the embedded SQLite database


def test_demo_honest_overrides_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _json(capsys, "--honest", "--database-url", str(tmp_path / "h.db"))
    for name, run in out.items():
        assert run["status"] == "completed", name
        if name == "investigation":
            # nothing the model said is overridden; the file the demo changes during
            # the pause is still caught by the re-hash (the world changed, not the model)
            assert run["crossings"][0]["decision"] == "pass"
            assert _overrides(run) == [("field_override", "reconciliation.db_host")]
            continue
        assert _overrides(run) == [], name
        assert {c["decision"] for c in run["crossings"]} == {"pass"}, name


def test_demo_text_and_default_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRUSTGATE_DATABASE_URL", raising=False)
    assert main(["demo", "code-review"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "Overridden: evidence verification failed" in out
    assert "claimed" in out and "checked" in out and "overridden" in out
    assert "field_override review.verdict: APPROVE → REQUEST_CHANGES" in out
    assert "final artefact" in out
    assert "\033[" not in out  # no colour when not on a terminal
    assert "code-review: builder" in captured.err  # progress, on stderr
    assert (tmp_path / ".trustgate" / "trustgate.db").exists()


def test_demo_bad_input(tmp_path: Path) -> None:
    assert main(["demo", "nonsense"]) == 2
    assert main(["demo", "--otlp-endpoint", "not a url"]) == 2
    db = str(tmp_path / "bad.db")
    assert main(["demo", "postmortem", "--model", "no-such-provider:x", "--database-url", db]) == 2
