"""Manifest replay: no status escapes checking; malformed output is a finding, not a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support import APP_PY, MakeRepo, git, write_tree

from trustgate.files import ChangesManifest, FileCitation, SelfReport, Workspace, replay_manifest


def codes(findings: list) -> list[str]:
    return [f.code if f.status == "fail" else "pass" for f in findings]


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    return make_repo({"app.py": APP_PY, "README.md": "# app\n", "lib/util.py": "X = 1\n"})


def test_already_correct_without_evidence_fails(repo: Path) -> None:
    items = [SelfReport(item="validate body", status="already_correct")]
    assert codes(replay_manifest(items, Workspace(repo))) == ["no_evidence"]


def test_not_applicable_needs_citations_too(repo: Path) -> None:
    items = [{"item": "x", "status": "not_applicable"}]
    assert codes(replay_manifest(items, Workspace(repo))) == ["no_evidence"]


def test_changed_items_checked_against_real_diff(repo: Path) -> None:
    (repo / "app.py").write_text(APP_PY + "# touched\n")
    (repo / "new.py").write_text("print('new')\n")
    items = [
        SelfReport(item="fix handler", status="changed", files=["app.py", "new.py"]),
        SelfReport(item="fix util", status="changed", files=["lib/util.py"]),
        SelfReport(item="no files", status="changed"),
    ]
    found = replay_manifest(items, Workspace(repo))
    by = {(f.code, f.subject) for f in found if f.status == "fail"}
    assert ("not_in_diff", "lib/util.py") in by
    assert ("no_files", "no files") in by
    assert all(f.subject != "app.py" and f.subject != "new.py" for f in found if not f.passed)


def test_undeclared_change_is_a_warning_by_default(repo: Path) -> None:
    (repo / "README.md").write_text("# changed\n")
    (repo / "app.py").write_text(APP_PY + "# touched\n")
    items = [SelfReport(item="fix", status="changed", files=["app.py"])]
    found = replay_manifest(items, Workspace(repo))
    undeclared = [f for f in found if f.code == "undeclared_change"]
    assert [f.subject for f in undeclared] == ["README.md"]
    assert undeclared[0].severity == "warn" and not undeclared[0].blocking
    strict = replay_manifest(items, Workspace(repo), undeclared_severity="block")
    assert any(f.code == "undeclared_change" and f.blocking for f in strict)


def test_diff_is_recomputed_not_remembered(repo: Path) -> None:
    ws = Workspace(repo)
    items = [SelfReport(item="fix", status="changed", files=["app.py"])]
    (repo / "app.py").write_text(APP_PY + "# touched\n")
    assert "not_in_diff" not in codes(replay_manifest(items, ws))
    git(repo, "checkout", "--", "app.py")
    assert "not_in_diff" in codes(replay_manifest(items, ws))


def test_base_revision(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (repo / "lib" / "util.py").write_text("X = 2\n")
    git(repo, "commit", "-qam", "change util")
    items = [SelfReport(item="u", status="changed", files=["lib/util.py"])]
    assert "not_in_diff" in codes(replay_manifest(items, Workspace(repo)))
    assert "not_in_diff" not in codes(replay_manifest(items, Workspace(repo), base=base))
    assert codes(replay_manifest(items, Workspace(repo), base="no-such-rev")) == [
        "unknown_revision"
    ]


def test_changed_items_outside_git_fail_closed(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "x = 1\n"})
    items = [SelfReport(item="u", status="changed", files=["a.py"])]
    assert codes(replay_manifest(items, Workspace(tmp_path))) == ["diff_unavailable"]


@pytest.mark.parametrize(
    "raw",
    [
        "not json at all",
        b"\xff\xfe not utf8",
        '{"no_items": []}',
        "42",
        '"a string"',
    ],
)
def test_unusable_output_is_one_failed_finding(repo: Path, raw: str | bytes) -> None:
    found = replay_manifest(raw, Workspace(repo))
    assert codes(found) == ["malformed_claim"]
    assert found[0].message


def test_malformed_items_do_not_hide_good_ones(repo: Path) -> None:
    raw = json.dumps(
        [
            {
                "item": "ok",
                "status": "already_correct",
                "evidence": [{"file": "app.py", "line": 1, "content": "import json"}],
            },
            {"item": "bad status", "status": "done"},
            {
                "item": "bad line",
                "status": "already_correct",
                "evidence": [{"file": "app.py", "line": "three", "content": "import json"}],
            },
            "not an object",
        ]
    )
    found = replay_manifest(raw, Workspace(repo))
    assert sorted(codes(found)) == ["malformed_claim", "malformed_claim", "malformed_claim", "pass"]
    assert all("malformed" in f.message for f in found if f.code == "malformed_claim")


def test_empty_manifest_fails(repo: Path) -> None:
    assert codes(replay_manifest([], Workspace(repo))) == ["no_claims"]
    assert codes(replay_manifest(ChangesManifest(items=[]), Workspace(repo))) == ["no_claims"]


def test_each_file_read_once_per_call(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(repo)
    calls: list[str] = []
    real = ws._text_lines

    def counting(path: str, **kw: Any) -> tuple[tuple[str, ...], bool]:
        calls.append(path)
        return real(path, **kw)

    monkeypatch.setattr(ws, "_text_lines", counting)
    items = [
        SelfReport(
            item=f"i{n}",
            status="already_correct",
            evidence=[FileCitation(file="app.py", line=n, content="x" * 9)],
        )
        for n in range(1, 6)
    ]
    replay_manifest(items, ws)
    assert calls == ["app.py"]
    replay_manifest(items, ws)
    assert calls == ["app.py", "app.py"]  # guarded afresh on the next call
