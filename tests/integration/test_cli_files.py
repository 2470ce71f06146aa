"""`trustgate replay` / `trustgate acquire`: exit codes 0/1/2 and no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _support import APP_PY, MakeRepo

from trustgate.cli import main


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    return make_repo({"app.py": APP_PY})


def manifest(tmp_path: Path, items: object, name: str = "m.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(items) if not isinstance(items, str) else items)
    return str(path)


GOOD = [
    {
        "item": "v",
        "status": "already_correct",
        "evidence": [{"file": "app.py", "line": 4, "content": "if not event.get('body'):"}],
    }
]
BAD = [
    {
        "item": "v",
        "status": "already_correct",
        "evidence": [{"file": "app.py", "line": 4, "content": "raise BadRequest()"}],
    }
]


def test_replay_exit_codes(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", manifest(tmp_path, GOOD), "--root", str(repo)]) == 0
    assert main(["replay", manifest(tmp_path, BAD), "--root", str(repo)]) == 1
    assert "content_mismatch" in capsys.readouterr().out
    assert main(["replay", manifest(tmp_path, "{oops"), "--root", str(repo)]) == 2
    assert main(["replay", str(tmp_path / "none.json"), "--root", str(repo)]) == 2
    assert main(["replay", manifest(tmp_path, GOOD), "--root", str(tmp_path / "no")]) == 2
    assert main(["replay", manifest(tmp_path, GOOD)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 4


def test_replay_json(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", manifest(tmp_path, BAD), "--root", str(repo), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] is False
    assert out["findings"][0]["code"] == "content_mismatch"


def test_acquire(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["acquire", "app.py:3-4", "--root", str(repo), "--json"]) == 0
    art = json.loads(capsys.readouterr().out)["artifact"]
    assert art["excerpt"] == "def handler(event):\n    if not event.get('body'):\n"
    assert main(["acquire", "app.py:30", "--root", str(repo)]) == 1
    assert "line_out_of_range" in capsys.readouterr().out
    assert main(["acquire", "../etc/passwd", "--root", str(repo), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["code"] == "path_traversal"
    assert main(["acquire", "app.py", "--root", str(repo), "--rev", "HEAD"]) == 0
    assert main(["acquire", "app.py", "--root", str(repo), "--rev", "nope"]) == 2  # bad input
    assert main(["acquire", "app.py", "--root", str(repo), "--scope", "src"]) == 1
    assert main(["acquire", "app.py"]) == 2


def test_console_script_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe[]")
    proc = subprocess.run(
        [sys.executable, "-m", "trustgate.cli", "replay", str(bad), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "not valid UTF-8" in proc.stderr


def test_closed_pipe_is_not_a_traceback(repo: Path, tmp_path: Path) -> None:
    path = manifest(tmp_path, GOOD * 2000)
    proc = subprocess.run(
        f"{sys.executable} -m trustgate.cli replay {path} --root {repo} | head -1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.startswith("PASS")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
