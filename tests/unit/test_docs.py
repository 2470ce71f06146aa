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
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from _docs_support import (
    BASH_PAGES,
    DOCS,
    NOT_RUN,
    PAGES,
    README,
    ROOT,
    _not_run_reason,
    _page_id,
    blocks,
    commands,
)

"""The PostgreSQL URL the docs show; the test swaps in a real server's."""


# --- python ----------------------------------------------------------------------------


# --- bash -------------------------------------------------------------------------------


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
    """The filter table quotes exactly the expressions tests/integration/test_telemetry_phoenix.py
    runs against a real Phoenix server."""
    checked = re.findall(
        r'^FILTER_\w+ = "(.*)"$',
        (ROOT / "tests" / "integration" / "test_telemetry_phoenix.py").read_text(encoding="utf-8"),
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
