"""Every code block in the README and the documentation site runs as written.

How each fenced block is treated, by its language:

* ``python``: executed. The blocks of one page run in order in one fresh module
  namespace (a page reads top to bottom, like a script a user copies), in a temporary
  working directory, offline: models are the scripted ones of ``trustgate.testing``.
  A block whose first line names a test file (``# test_my_gate.py``) is a user's test
  file: it is written to that file and run by pytest in a subprocess, which must pass
  (with the plugin loaded the way a user's project loads it, from the entry point).
  Blocks that send traces keep their documented endpoints (Phoenix, Jaeger, MLflow,
  Langfuse, a collector); the test points them at a local OTLP receiver on 127.0.0.1
  and, for a page that invokes a graph, checks gate spans arrived. A page whose code
  names the documented PostgreSQL URL runs against a real throwaway PostgreSQL server.
* ``bash``: every command is either run or listed in :data:`NOT_RUN` with the reason it
  is not. ``trustgate ...`` commands run (``python -m trustgate.cli``) in a directory
  holding the files the docs name (:func:`_cli_workspace`); a trailing ``# exit N``
  comment is the exit code they must return, else 0. A command that is neither run nor
  listed fails the test.
* ``json`` and ``toml``: parsed.
* ``text``: diagrams and sample output, not code; nothing to run.

Any other language, and any indented (unfenced) code block, fails the test, so no
block escapes by its spelling.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from _otel import global_providers
from _otlp_receiver import otlp_receiver
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]

ENDPOINTS = (
    "http://localhost:6006",
    "http://localhost:4318",
    "http://localhost:5000",
    "https://cloud.langfuse.com/api/public/otel",
    "https://collector.example.com:4318",
)
PG_URL = "postgresql://trustgate@db.example.com/trust"
"""The PostgreSQL URL the docs show; the test swaps in a real server's."""

NOT_RUN: dict[str, str] = {
    "pip install": "installs from the package index; the test environment has the package "
    "installed from this checkout with every extra",
    "make demo": "builds a virtualenv and runs the demo; tests/test_demo_cli.py runs the demo",
    "make test": "is the whole check this test is part of",
    "make unit": "is the unit tier of the check this test is part of",
    "make docs": "is the docs build that `make test` runs (mkdocs build --strict)",
    "make bench": "runs every benchmark for minutes; the figures quoted are their printed output",
    "make oracle": "runs LangGraph's own test suite (tens of minutes); "
    "tests/test_langgraph_oracle.py runs it",
    "python bench/": "benchmarks run for minutes on a shared machine; the figures quoted are "
    "their printed output",
    "pytest": "runs the test file shown above it, which test_python_blocks_run writes out "
    "and runs with pytest itself",
    "phoenix serve": "starts a server that runs until stopped; tests/_phoenix.py starts a "
    "real Phoenix for tests/test_telemetry_phoenix.py",
    "mlflow server": "starts a server that runs until stopped; tests/_mlflow.py starts a "
    "real MLflow for tests/test_telemetry_mlflow.py",
    "docker run": "needs a container runtime; the OTLP wire format is tested against a "
    "local receiver (tests/test_telemetry_otlp.py)",
    "export": "sets variables for the commands that follow; the page's Python blocks run "
    "with them set",
    ".venv/bin/mkdocs serve": "serves the site until stopped; `make docs` builds it",
    "langgraph dev": "starts LangGraph's development server until stopped; "
    "tests/test_served_graphs.py runs it and reads the record back through langgraph_sdk",
    "trustgate demo": "runs all four pipelines; tests/test_demo_cli.py runs it and checks "
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


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRUSTGATE_MODEL", raising=False)  # never a paid model
    monkeypatch.delenv("TRUSTGATE_DATABASE_URL", raising=False)
    return tmp_path


PY_PAGES = [p for p in PAGES if any(b.lang == "python" for b in blocks(p))]


@pytest.mark.integration  # a real PostgreSQL, an OTLP receiver, pytest in a subprocess
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


@pytest.mark.integration  # the trustgate command in a subprocess
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

ALLOWED = {"python", "bash", "json", "toml", "text"}


@pytest.mark.parametrize("page", PAGES, ids=[_page_id(p) for p in PAGES])
def test_every_block_has_a_known_language(page: Path) -> None:
    for b in blocks(page):
        assert b.lang in ALLOWED, f"{b}: a ```{b.lang} block: say what it is ({sorted(ALLOWED)})"
        if b.lang == "json":
            json.loads(b.code)
        elif b.lang == "toml":
            tomllib.loads(b.code)


def test_the_docs_have_code() -> None:
    """The test above cannot pass by finding nothing."""
    counts = {lang: sum(b.lang == lang for p in PAGES for b in blocks(p)) for lang in ALLOWED}
    assert counts["python"] >= 30 and counts["bash"] >= 5, counts


def test_not_run_commands_appear_in_the_docs() -> None:
    """Every exemption is used (no stale reasons)."""
    used = {
        prefix
        for p in BASH_PAGES
        for b in blocks(p)
        if b.lang == "bash"
        for c, _ in commands(b)
        for prefix in NOT_RUN
        if _not_run_reason(c) == NOT_RUN[prefix]
    }
    assert used == set(NOT_RUN), sorted(set(NOT_RUN) - used)


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


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = set(_nav_pages(config["nav"]))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert nav == pages, (sorted(pages - nav), sorted(nav - pages))


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links to the docs"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_phoenix_filters_are_the_ones_checked_against_phoenix() -> None:
    """The filter table quotes exactly the expressions tests/test_telemetry_phoenix.py
    runs against a real Phoenix server."""
    checked = re.findall(
        r'^FILTER_\w+ = "(.*)"$',
        (ROOT / "tests" / "test_telemetry_phoenix.py").read_text(encoding="utf-8"),
        re.M,
    )
    page = (DOCS / "telemetry.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| [^|`]+ \| `(.+)` \|$", page, re.M)
    assert len(checked) == 6 and documented == checked


# --- user-facing text names scenarios by what they do -------------------------------------

INTERNAL = re.compile(
    r"(?i:\bseed[- _]?0\d\d\b|\bADR-?0008\b)|\bColony\b|\bInspector\b|\bAnvil\b|\bBeyond\b"
)
"""Names of the internal systems trustgate generalises (case-sensitive where the word is
also English: "beyond" in a sentence is fine, the capitalised product name is not)."""


def _user_facing_files() -> list[Path]:
    examples = sorted((ROOT / "examples").glob("*.ipynb")) + sorted(
        (ROOT / "examples").glob("*.py")
    )
    return [*PAGES, ROOT / "examples" / "README.md", *examples, ROOT / "mkdocs.yml"]


@pytest.mark.parametrize(
    "path", _user_facing_files(), ids=[_page_id(p) for p in _user_facing_files()]
)
def test_no_internal_names(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    hits = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for m in INTERNAL.finditer(text)
    ]
    assert not hits, hits


COMMANDS = ("demo", "replay", "acquire", "check-draft", "check-contract", "audit", "history")


def test_cli_text_names_scenarios_by_what_they_do(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    """The command line's help and the demo's output are user-facing text too."""
    from trustgate.cli import main

    texts = []
    for argv in (["--help"], *([c, "--help"] for c in COMMANDS)):
        with pytest.raises(SystemExit) as exit_info:
            main(list(argv))
        assert exit_info.value.code == 0
        texts.append(capsys.readouterr().out)
    assert main(["demo", "postmortem", "--database-url", str(in_tmp / "demo.db")]) == 0
    texts.append(capsys.readouterr().out)
    assert main(["demo", "postmortem", "--json", "--database-url", str(in_tmp / "d2.db")]) == 0
    out = capsys.readouterr().out
    assert "seed" not in json.loads(out)["pipelines"]["postmortem"]
    texts.append(out)
    hits = [m.group(0) for text in texts for m in INTERNAL.finditer(text)]
    assert not hits, hits
    assert "Postmortem: a model drafts an incident report from the incident record" in texts[-2]


def test_the_oracle_page_quotes_the_allow_list() -> None:
    """Every reason in the oracle's allow-list is on the page, with its entry count."""
    allow = tomllib.loads(
        (ROOT / "tests" / "langgraph_oracle" / "allowlist.toml").read_text(encoding="utf-8")
    )["allow"]
    counts: dict[str, int] = {}
    for entry in allow:
        counts[entry["reason"]] = counts.get(entry["reason"], 0) + 1
    page = (DOCS / "oracle.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (.+) \| (\d+) \|$", page, re.M))
    assert {r: int(n) for r, n in rows.items()} == counts
