"""`make demo` from nothing: its own venv holds the package and what the demo needs, and
no test, lint, type-check, notebook or docs tool; the demo runs there and says first,
in a user's words, what it is about to show, and ends each pipeline with its verdict.

The first user of the README waited eleven minutes for `make demo`: it installed every
extra the test suite needs. This test runs the Makefile's own install step into a
fresh venv and reads back what it installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TOOLS = {"pytest", "hypothesis", "mypy", "ruff", "vulture", "mkdocs", "ipykernel", "nbclient"}
"""What the brief names by kind: the test runner, property tests, the type checker, the
linters, the docs builder, the notebook kernel. Every package of the extras that exist
for them is checked too (``_tool_packages``)."""


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _tool_packages() -> set[str]:
    """Every package the dev, docs and oracle extras add that the package itself does
    not depend on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    tools = {_name(r) for group in ("dev", "docs", "oracle") for r in extras[group]}
    return (tools | TOOLS) - core


@pytest.fixture(scope="module")
def demo_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    make = shutil.which("make")
    assert make, "make is not installed"
    venv = tmp_path_factory.mktemp("demo") / "venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRUSTGATE_", "VIRTUAL_ENV"))}
    proc = subprocess.run(
        [
            make,
            "--no-print-directory",
            "demo-venv",
            f"DEMO_VENV={venv}",
            f"PYTHON={sys.executable}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return venv


def test_the_demo_venv_holds_no_test_lint_typecheck_or_docs_package(demo_venv: Path) -> None:
    listed = subprocess.run(
        [str(demo_venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    installed = {p["name"].lower().replace("_", "-") for p in json.loads(listed.stdout)}
    assert "langgraph-trustgate" in installed
    assert installed & _tool_packages() == set()


def test_make_demo_runs_there_and_reads_as_outcomes(demo_venv: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRUSTGATE_", "VIRTUAL_ENV"))}
    proc = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "demo",
            f"DEMO_VENV={demo_venv}",
            f"DEMO_DIR={tmp_path / 'keys'}",
            f"DEMO_ARGS=--database-url {tmp_path / 'demo.db'}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Traceback" not in out + proc.stderr
    first = out.lstrip().splitlines()[0]
    assert first.startswith("trustgate demo: four small agent pipelines"), first
    intro = out.split("═", 1)[0]
    for internal in ("SqliteLedger", "seals?", "ledger", "gates?", "verifiers?", "crossings?"):
        assert not re.search(rf"\b{internal}\b", intro, re.IGNORECASE), internal
    verdicts = [line for line in out.splitlines() if line.startswith("Verdict: ")]
    assert len(verdicts) == 4, out
    assert "VerdictError" not in verdicts[-1] and "stopped there by design" in verdicts[-1]
    assert (tmp_path / "demo.db").exists()
