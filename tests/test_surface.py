"""The public surface: a small documented root, families in public submodules, and
docstrings that teach it."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import textwrap
import warnings
from pathlib import Path

import pytest

import trustgate

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent

# The root API (shared with the documentation): exactly these names.
ROOT_API = {
    # gates and graphs
    "TrustGate",
    "guard",
    "guarded_nodes",
    "audit",
    "aaudit",
    # readers
    "FromKey",
    "LastAIText",
    "ToolCallArgs",
    "Routes",
    "StreamWrites",
    # policies
    "Halt",
    "Override",
    "Redact",
    "BlockToolCalls",
    "Rerender",
    "Caveat",
    "Review",
    # verifiers
    "Verifier",
    "verifier",
    "FunctionVerifier",
    "CitationReplay",
    "ChangeCheck",
    "HashCheck",
    "GroundingCheck",
    "DraftCheck",
    "ModelVerifier",
    # evidence
    "EvidenceSources",
    "Evidence",
    "FromState",
    "FromContext",
    # results
    "Report",
    "Finding",
    "TextEdit",
    "Cut",
    "Strike",
    "reports",
    "areports",
    # errors
    "TrustgateError",
    "ConfigurationError",
    "GateHalted",
    "__version__",
}

FAMILIES = {
    "trustgate.files": "Workspace FileCitation SelfReport ChangesManifest ChangeClaim HashClaim "
    "Locator parse_manifest replay_citation replay_manifest Artifact ArtifactLedger "
    "InMemoryLedger SqliteLedger PostgresLedger Connector acquire_external artifact_id "
    "TrustBar GroundedValue meets_trust_bar",
    "trustgate.drafts": "verify_draft Record DraftVerdict Removal Gap KeptSentence "
    "InvalidCitation Testimony answer_gap CausalRule HedgeRule PatternRule SentenceRule",
    "trustgate.contracts": "Brief ApprovedCitation EvidenceSet check_citations check_integrity "
    "parse_verdict",
    "trustgate.graph": "guard guarded_nodes TrustGateMiddleware TrustReports audit AuditResult",
    "trustgate.policies": "Halt Override Redact BlockToolCalls Rerender Caveat Review "
    "OverrideRecord Release SetPath",
    "trustgate.readers": "FromKey LastAIText ToolCallArgs Routes StreamWrites ClaimsReader",
    "trustgate.errors": "TrustgateError TrustgateOutcome ConfigurationError GateHalted "
    "ClaimParseError",
    "trustgate.otel": "configure semconv Telemetry",
    "trustgate.persistence": "connect aconnect history",
    "trustgate.server": "app reports_app reports_route REPORTS_PATH",
    "trustgate.testing": "ScriptedChatModel lying_model honest_model assert_lie_blocked",
    "trustgate.pipelines": "PIPELINES load make_sample_repository",
    "trustgate.render": "to_text to_html",
}


def test_root_is_exactly_the_documented_api() -> None:
    assert set(trustgate.__all__) == ROOT_API
    assert len(trustgate.__all__) == len(ROOT_API)  # no duplicates


@pytest.mark.parametrize("name", sorted(ROOT_API - {"__version__"}))
def test_every_root_name_resolves_and_is_documented(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a root name never warns
        obj = getattr(trustgate, name)
    doc = obj.__doc__ or ""
    assert doc.strip(), f"trustgate.{name} has no docstring"
    assert getattr(obj, "__module__", "").startswith("trustgate"), name


def test_version_matches_the_installed_distribution() -> None:
    from importlib.metadata import version

    assert trustgate.__version__ == version("langgraph-trustgate")


def test_dir_lists_the_api_and_the_families() -> None:
    listed = set(dir(trustgate))
    assert listed >= ROOT_API
    assert {"files", "drafts", "contracts", "graph", "otel", "testing"} <= listed
    assert "Locator" not in listed  # a moved name is not advertised


def test_unknown_root_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        trustgate.nope  # noqa: B018


@pytest.mark.parametrize("module", sorted(FAMILIES))
def test_families_export_their_names(module: str) -> None:
    mod = importlib.import_module(module)
    for name in FAMILIES[module].split():
        assert hasattr(mod, name), f"{module}.{name}"
    exported = getattr(mod, "__all__", None)
    if exported is not None:
        for name in exported:
            assert hasattr(mod, name), f"{module}.__all__ names {name!r}, which it lacks"


def test_public_submodules_are_reached_from_the_root() -> None:
    assert trustgate.otel is importlib.import_module("trustgate.otel")


def _python_files() -> list[Path]:
    files = [*ROOT.glob("trustgate/**/*.py"), *ROOT.glob("examples/*.py")]
    files += [*ROOT.glob("graphs/*.py"), *ROOT.glob("bench/*.py")]
    return sorted(f for f in files if "_demo/data" not in str(f))


def test_install_hints_name_the_distribution() -> None:
    """``trustgate`` on PyPI is another project: every install line names ours."""
    offenders = []
    for path in _python_files():
        text = path.read_text()
        for line_no, line in enumerate(text.splitlines(), 1):
            if "pip install" in line and "trustgate" in line and "langgraph-trustgate" not in line:
                if "{install_hint" in line or "install_hint(" in line:
                    continue
                offenders.append(f"{path.relative_to(ROOT)}:{line_no}: {line.strip()}")
    assert not offenders, offenders
    from trustgate._meta import install_hint

    assert install_hint("otlp") == "pip install 'langgraph-trustgate[otlp]'"


# --- no internal scenario names in what users read -------------------------------------

_INTERNAL = re.compile(r"(?i:\bseeds?\b)|Colony|Anvil|ADR-0008|Beyond's")


def test_cli_help_names_scenarios_by_what_they_do() -> None:
    from trustgate.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        texts += [sub.format_help() for sub in action.choices.values()]
    found = [m.group(0) for t in texts for m in _INTERNAL.finditer(t)]
    assert not found, found


def test_docstrings_name_scenarios_by_what_they_do() -> None:
    """Docstrings become the API reference."""
    found: list[str] = []
    for path in sorted(ROOT.glob("trustgate/**/*.py")):
        if "_demo/data" in str(path):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                found += [
                    f"{path.relative_to(ROOT)}: {m.group(0)}" for m in _INTERNAL.finditer(doc)
                ]
    assert not found, found


_EXAMPLE = re.compile(r"```python\n(.*?)```", re.S)


def test_docstring_examples_parse_and_import_what_exists() -> None:
    """Every example in a docstring is valid Python, and what it imports from
    trustgate exists (examples are fragments: names they only use are placeholders)."""
    problems: list[str] = []
    for path in sorted(ROOT.glob("trustgate/**/*.py")):
        if "_demo/data" in str(path):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                continue
            for block in _EXAMPLE.findall(ast.get_docstring(node) or ""):
                code = textwrap.indent(textwrap.dedent(block), "    ")
                where = f"{path.relative_to(ROOT)}: {getattr(node, 'name', 'module')}"
                try:  # inside a coroutine, so `await` and `return` fragments parse too
                    tree = ast.parse(f"async def _example():\n{code}")
                except SyntaxError as exc:
                    problems.append(f"{where}: {exc}")
                    continue
                for imp in ast.walk(tree):
                    if isinstance(imp, ast.ImportFrom) and (imp.module or "").startswith(
                        "trustgate"
                    ):
                        module = importlib.import_module(str(imp.module))
                        for a in imp.names:
                            if not hasattr(module, a.name) and (
                                importlib.util.find_spec(f"{imp.module}.{a.name}") is None
                            ):
                                problems.append(f"{where}: {imp.module}.{a.name} does not exist")
    assert not problems, "\n".join(problems)
