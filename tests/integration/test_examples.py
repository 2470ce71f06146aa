"""The example scripts run as written, and the example test passes under the plugin."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_quickstart_script_runs() -> None:
    ns = runpy.run_path(str(EXAMPLES / "quickstart.py"), run_name="__main__")
    assert ns["out"]["review"]["verdict"] == "REQUEST_CHANGES"


def test_users_mutation_test_passes_with_the_plugin(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(EXAMPLES / "test_my_gate.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
