"""What importing the public surface costs, in fresh interpreters: ``import trustgate``
loads nothing heavy, the pure families load no LangGraph, the pytest plugin loads
nothing until a fixture is used, and the CLI loads what a command needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


_LOADED = (
    "import json, sys\n"
    "heavy = ('langgraph', 'langchain', 'langchain_core', 'pydantic', 'opentelemetry')\n"
    "def loaded():\n"
    "    return sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy})\n"
)


def test_import_trustgate_imports_nothing_heavy() -> None:
    got = _python(_LOADED + "import trustgate\nprint(json.dumps(loaded()))\n")
    assert got == []


def test_drafts_import_no_langgraph_and_no_langchain() -> None:
    code = (
        _LOADED + "from trustgate.drafts import Record, verify_draft\n"
        "v = verify_draft('Latency rose at 14:02 [[1]]. The deploy caused it.',\n"
        "                 Record.from_text('14:02 p99 9.2s'))\n"
        "print(json.dumps({'loaded': loaded(), 'removed': len(v.removed)}))\n"
    )
    got = _python(code)
    assert got["removed"] == 1
    assert not {"langgraph", "langchain", "langchain_core"} & set(got["loaded"]), got


@pytest.mark.parametrize("module", ["trustgate.contracts", "trustgate.files"])
def test_pure_families_import_no_langgraph(module: str) -> None:
    got = _python(_LOADED + f"import {module}\nprint(json.dumps(loaded()))\n")
    assert not {"langgraph", "langchain", "langchain_core"} & set(got), got


_PLUGIN_CONFTEST = """
import json, os, sys

def pytest_sessionfinish(session):
    plugin = session.config.pluginmanager.get_plugin("trustgate")
    with open(os.environ["MODULES_OUT"], "w") as fh:
        name = getattr(plugin, "__name__", None)
        json.dump({"modules": sorted(sys.modules), "plugin": name}, fh)
"""


def _plugin_run(tmp_path: Path, test_body: str) -> dict[str, Any]:
    (tmp_path / "conftest.py").write_text(_PLUGIN_CONFTEST)
    (tmp_path / "test_user.py").write_text(test_body)
    out_file = tmp_path / "modules.json"
    env = {**os.environ, "MODULES_OUT": str(out_file)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result: dict[str, Any] = json.loads(out_file.read_text())
    return result


def test_pytest_plugin_costs_nothing_until_a_fixture_is_used(tmp_path: Path) -> None:
    got = _plugin_run(tmp_path, "def test_plain():\n    assert 1 + 1 == 2\n")
    assert got["plugin"] == "trustgate._pytest_plugin"
    roots = {m.split(".")[0] for m in got["modules"]}
    assert not {"langgraph", "langchain", "langchain_core"} & roots
    assert "trustgate.testing" not in got["modules"]


def test_pytest_plugin_fixture_loads_on_use(tmp_path: Path) -> None:
    body = (
        "def test_liar(trustgate_lying_model):\n"
        "    assert trustgate_lying_model('x').personality == 'lying'\n"
    )
    got = _plugin_run(tmp_path, body)
    assert "trustgate.testing" in got["modules"]


def test_cli_help_and_check_draft_import_only_what_they_use(tmp_path: Path) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("Latency rose at 14:02 [[1]].\n")
    record = tmp_path / "record.txt"
    record.write_text("14:02 p99 9.2s\n")
    code = (
        _LOADED + "import contextlib, io\n"
        "from trustgate.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "after_help = loaded()\n"
        "quiet = contextlib.redirect_stdout(io.StringIO())\n"
        "with quiet, contextlib.redirect_stderr(io.StringIO()):\n"
        f"    code = main(['check-draft', {str(draft)!r}, '--record', {str(record)!r}])\n"
        "print(json.dumps({'help': after_help, 'draft': loaded(), 'code': code}))\n"
    )
    got = _python(code)
    assert got["help"] == []
    assert got["code"] == 0
    assert not {"langgraph", "langchain", "langchain_core", "opentelemetry"} & set(got["draft"])
