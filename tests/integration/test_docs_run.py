"""Every code block in the README and the documentation site runs as written (python blocks
in one namespace per page, bash blocks in a subprocess).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from _docs_support import (
    BASH_PAGES,
    PAGES,
    Block,
    _not_run_reason,
    _page_id,
    blocks,
    commands,
)
from _otel import global_providers
from _otlp_receiver import otlp_receiver

ENDPOINTS = (
    "http://localhost:6006",
    "http://localhost:4318",
    "http://localhost:5000",
    "https://cloud.langfuse.com/api/public/otel",
    "https://collector.example.com:4318",
)
PG_URL = "postgresql://trustgate@db.example.com/trust"
"""The PostgreSQL URL the docs show; the test swaps in a real server's."""


# --- python ----------------------------------------------------------------------------


def run_python(page: Path, code_blocks: list[Block]) -> None:
    """Run a page's python blocks in order in one module namespace (type hints resolve,
    dataclasses and pydantic models defined in a block work as in a user's script)."""
    name = "docs_" + re.sub(r"\W", "_", _page_id(page))
    module = types.ModuleType(name)
    module.__file__ = str(page)
    sys.modules[name] = module
    try:
        for b in code_blocks:
            if TEST_FILE.match(b.code):
                run_test_file(b)
                continue
            # padded so tracebacks point at the Markdown line
            source = "\n" * b.line + b.code
            try:
                exec(compile(source, str(page), "exec"), module.__dict__)
            except BaseException as exc:
                exc.add_note(f"in the python block at {b}")
                raise
    finally:
        del sys.modules[name]


TEST_FILE = re.compile(r"# (test_\w+\.py)\n")


def run_test_file(b: Block) -> None:
    """A user's test file from the docs, run by pytest as the user would run it."""
    m = TEST_FILE.match(b.code)
    assert m is not None
    Path(m.group(1)).write_text(b.code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", m.group(1)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{b}: the test file failed\n{proc.stdout[-3000:]}"
    assert " passed" in proc.stdout and " failed" not in proc.stdout, proc.stdout[-1000:]


PY_PAGES = [p for p in PAGES if any(b.lang == "python" for b in blocks(p))]


@pytest.mark.parametrize("page", PY_PAGES, ids=[_page_id(p) for p in PY_PAGES])
def test_python_blocks_run(
    page: Path, in_tmp: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    code_blocks = [b for b in blocks(page) if b.lang == "python"]
    text = "".join(b.code for b in code_blocks)
    if PG_URL in text:
        url = request.getfixturevalue("pg_url")
        code_blocks = [
            Block(b.path, b.line, b.lang, b.code.replace(PG_URL, url)) for b in code_blocks
        ]
    if "otel.configure" not in text:
        run_python(page, code_blocks)
        return
    with otlp_receiver() as (url, received), global_providers(None):
        code_blocks = [Block(b.path, b.line, b.lang, _redirect(b.code, url)) for b in code_blocks]
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        run_python(page, code_blocks)
        if ".invoke(" in text:  # a traced run: its gate spans reached the receiver
            names = {span.name for _, span in received.spans()}
            assert any(n.startswith("trustgate.gate ") for n in names), names


def _redirect(code: str, url: str) -> str:
    for endpoint in ENDPOINTS:
        code = code.replace(endpoint, url)
    return code


# --- bash -------------------------------------------------------------------------------


def _cli_workspace(root: Path) -> None:
    """The files the command-line examples name."""
    (root / "record.txt").write_text(
        "14:02 checkout p99 latency 9.2s\n"
        "14:03 alert CheckoutLatencyHigh fired\n"
        "13:58 deploy 4411 started\n"
        "14:20 deploy 4411 rolled back\n",
        encoding="utf-8",
    )
    (root / "draft.md").write_text(
        "Checkout latency rose to 9.2 seconds at 14:02. [[1]] "
        "The pool was exhausted because the deploy doubled worker concurrency.\n",
        encoding="utf-8",
    )
    (root / "brief.json").write_text(
        json.dumps(
            {
                "citations": [
                    {
                        "id": "ISO/IEC 27001:2022 clause 5.9",
                        "text": "Inventory of information and other associated assets",
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    (root / "evidence.json").write_text(
        json.dumps({"urls": ["https://vendor.example/pricing"], "prices": ["$1,200.00"]}),
        encoding="utf-8",
    )
    (root / "policy.md").write_text(
        "Keep the register current (ISO 27001 §5.9). Audit it under clause 9.2.\n",
        encoding="utf-8",
    )
    repo = root / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "limits.py").write_text(
        "# order limits\n\nMAX_QUANTITY = 100\n\n\n"
        "def check(qty):\n    return qty <= MAX_QUANTITY\n",
        encoding="utf-8",
    )
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "add", "-A"],
        [
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "user.name=t",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            "initial",
        ],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    (root / "manifest.json").write_text(
        json.dumps(
            {
                "items": [
                    {
                        "item": "Cap the order quantity",
                        "status": "already_correct",
                        "evidence": [
                            {"file": "app/limits.py", "line": 3, "content": "MAX_QUANTITY = 100"}
                        ],
                    },
                    {
                        "item": "Validate the quantity",
                        "status": "already_correct",
                        "evidence": [
                            {"file": "app/limits.py", "line": 7, "content": "raise ValueError"}
                        ],
                    },
                ]
            }
        ),
        encoding="utf-8",
    )
    from trustgate.persistence import connect

    connect(root / "tg.db").close()  # the database `trustgate history` reads
    pkg = root / "myapp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "graph.py").write_text(
        textwrap.dedent(
            """
            from langgraph.graph import START, StateGraph
            from typing_extensions import TypedDict

            import trustgate
            from trustgate.testing import lying_model

            model = lying_model("The deploy caused it.", repeat_last=True)


            class State(TypedDict, total=False):
                draft: str


            def write(state: State) -> dict:
                return {"draft": model.invoke("why?").text}


            builder = StateGraph(State)
            builder.add_node("write", write)
            builder.add_edge(START, "write")
            unguarded = builder.compile()
            gate = trustgate.TrustGate(
                "draft", reads="draft", verifiers=[trustgate.verifier(lambda c, e: [])]
            )
            app = trustgate.guard(builder, {"write": gate}).compile()
            """
        ),
        encoding="utf-8",
    )


@pytest.mark.parametrize("page", BASH_PAGES, ids=[_page_id(p) for p in BASH_PAGES])
def test_bash_blocks(page: Path, in_tmp: Path) -> None:
    _cli_workspace(in_tmp)
    env = {**os.environ, "PYTHONPATH": str(in_tmp), "TRUSTGATE_DATABASE_URL": str(in_tmp / "tg.db")}
    for b in blocks(page):
        if b.lang != "bash":
            continue
        for command, comment in commands(b):
            if _not_run_reason(command) is not None:
                continue
            argv = shlex.split(command)
            assert argv[0] == "trustgate", (
                f"{b}: {command!r} is neither run by this test nor listed in NOT_RUN with "
                "the reason it is not"
            )
            expected = int(m.group(1)) if (m := re.search(r"\bexit (\d+)", comment)) else 0
            proc = subprocess.run(
                [sys.executable, "-m", "trustgate.cli", *argv[1:]],
                cwd=in_tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.returncode == expected, (
                f"{b}: {command!r} exited {proc.returncode}, the docs say {expected}\n"
                f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )


# --- the rest ---------------------------------------------------------------------------


# --- the site ---------------------------------------------------------------------------


def _nav_pages(nav: object) -> Iterator[str]:
    if isinstance(nav, str):
        if nav.endswith(".md"):
            yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


# --- user-facing text names scenarios by what they do -------------------------------------

"""Names of the internal systems trustgate generalises (case-sensitive where the word is
also English: "beyond" in a sentence is fine, the capitalised product name is not)."""
