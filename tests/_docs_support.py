"""What the docs tests share: the pages, their code blocks, the commands a page shows and
why some are not run.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent


README = ROOT / "README.md"


DOCS = ROOT / "docs"


PAGES = [README, *sorted(DOCS.rglob("*.md"))]


NOT_RUN: dict[str, str] = {
    "pip install": "installs from the package index; the test environment has the package "
    "installed from this checkout with every extra",
    "make demo": "builds a virtualenv and runs the demo; tests/unit/test_demo_cli.py runs the demo",
    "make test": "is the whole check this test is part of",
    "make unit": "is the unit tier of the check this test is part of",
    "make docs": "is the docs build that `make test` runs (mkdocs build --strict)",
    "make bench": "runs every benchmark for minutes; the figures quoted are their printed output",
    "make oracle": "runs LangGraph's own test suite (tens of minutes); "
    "tests/oracle/test_langgraph_oracle.py runs it",
    "python bench/": "benchmarks run for minutes on a shared machine; the figures quoted are "
    "their printed output",
    "pytest": "runs the test file shown above it, which test_python_blocks_run writes out "
    "and runs with pytest itself",
    "phoenix serve": "starts a server that runs until stopped; tests/_phoenix.py starts a "
    "real Phoenix for tests/integration/test_telemetry_phoenix.py",
    "mlflow server": "starts a server that runs until stopped; tests/_mlflow.py starts a "
    "real MLflow for tests/integration/test_telemetry_mlflow.py",
    "docker run": "needs a container runtime; the OTLP wire format is tested against a "
    "local receiver (tests/integration/test_telemetry_otlp.py)",
    "export": "sets variables for the commands that follow; the page's Python blocks run "
    "with them set",
    ".venv/bin/mkdocs serve": "serves the site until stopped; `make docs` builds it",
    "langgraph dev": "starts LangGraph's development server until stopped; "
    "tests/integration/test_served_graphs.py runs it and reads the record back through "
    "langgraph_sdk",
    "trustgate demo": "runs all four pipelines; tests/unit/test_demo_cli.py runs it and checks "
    "its output",
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The code blocks of a Markdown page, as CommonMark finds them."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    found = []
    for t in tokens:
        if t.type == "code_block":
            line = t.map[0] + 1 if t.map else 0
            raise AssertionError(f"{path.relative_to(ROOT)}:{line}: indented code block")
        if t.type == "fence":
            lang = t.info.split()[0] if t.info.strip() else ""
            found.append(Block(path, (t.map[0] + 1) if t.map else 0, lang, t.content))
    return found


def _page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def commands(block: Block) -> Iterator[tuple[str, str]]:
    """(command, trailing comment) per command line, continuation lines joined."""
    text = block.code.replace("\\\n", " ")
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
        comment = raw.partition(" #")[2] if " #" in raw else ""
        yield " ".join(shlex.quote(w) for w in words), comment


def _not_run_reason(command: str) -> str | None:
    for prefix, reason in NOT_RUN.items():
        if (
            command == prefix
            or command.startswith(prefix + " ")
            or (prefix.endswith("/") and command.startswith(prefix))
        ):
            return reason
    return None


BASH_PAGES = [p for p in PAGES if any(b.lang == "bash" for b in blocks(p))]
