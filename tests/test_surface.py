"""The public surface: a small documented root, families in public submodules, the
previous release's names still working with a warning, and imports that cost only
what they use."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
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

# The root of the previous release (139 names): each still imports, with a warning.
PREVIOUS_ROOT = [
    "Approval",
    "ApprovedCitation",
    "ApprovedPrice",
    "Artifact",
    "ArtifactIntegrityError",
    "ArtifactLedger",
    "AsyncPersistence",
    "AsyncVerifier",
    "AuditPath",
    "AuditResult",
    "AuditedCrossing",
    "BlockToolCalls",
    "Brief",
    "CausalRule",
    "Caveat",
    "ChangeCheck",
    "ChangeClaim",
    "ChangesManifest",
    "CitationId",
    "CitationMatch",
    "CitationPattern",
    "CitationRelevanceRule",
    "CitationReplay",
    "ClaimParseError",
    "ClaimsReader",
    "ConfigurationError",
    "Connector",
    "DEFAULT_CITATION_PATTERNS",
    "DEFAULT_RULES",
    "Decision",
    "DraftCheck",
    "DraftSentence",
    "DraftVerdict",
    "Evidence",
    "EvidenceRefused",
    "EvidenceSet",
    "EvidenceSources",
    "FiguresRule",
    "FileCitation",
    "Finding",
    "FromContext",
    "FromKey",
    "FromState",
    "FunctionVerifier",
    "Gap",
    "GateHalted",
    "GateResult",
    "GitError",
    "GroundedValue",
    "GroundingCheck",
    "Halt",
    "HashCheck",
    "HashClaim",
    "HedgeRule",
    "InMemoryLedger",
    "InputError",
    "InvalidCitation",
    "KeptSentence",
    "LangGraphCompatibilityError",
    "LastAIText",
    "LedgerConflict",
    "Lexicon",
    "Locator",
    "ModelVerifier",
    "OVERRIDE_NOTE",
    "Override",
    "OverrideKind",
    "OverrideRecord",
    "PatternRule",
    "Persistence",
    "Policy",
    "PostgresLedger",
    "Record",
    "Redact",
    "RegexCitationPattern",
    "Removal",
    "Report",
    "ReportHistory",
    "Rerender",
    "Review",
    "Routes",
    "SampleRun",
    "Segment",
    "SelfReport",
    "SentenceRule",
    "SqliteLedger",
    "StreamWrites",
    "Telemetry",
    "Testimony",
    "ToolCallArgs",
    "TrustBar",
    "TrustGate",
    "TrustReports",
    "TrustReportsState",
    "TrustgateError",
    "UnsupportedText",
    "Verdict",
    "VerdictError",
    "VerdictIssue",
    "Verifier",
    "Workspace",
    "__version__",
    "aaudit",
    "aconnect",
    "acquire_external",
    "acquire_locators",
    "answer_gap",
    "areports",
    "artifact_id",
    "astream",
    "astream_events",
    "audit",
    "check_artifact_refs",
    "check_change_claim",
    "check_changed_files",
    "check_citations",
    "check_hash_claim",
    "check_integrity",
    "configure_telemetry",
    "connect",
    "extract_citations",
    "guard",
    "guarded_nodes",
    "history",
    "meets_trust_bar",
    "normalize_price",
    "normalize_url",
    "otel",
    "parse_manifest",
    "parse_verdict",
    "replay_citation",
    "replay_manifest",
    "reports",
    "reports_from_state",
    "segment",
    "stream",
    "telemetry",
    "verifier",
    "verify_draft",
]

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

DEPRECATED_MODULES = {
    "trustgate.findings": "import Finding from trustgate",
    "trustgate.report": "import Report, reports and areports from trustgate",
    "trustgate.middleware": "import TrustGateMiddleware from trustgate.graph",
    "trustgate.streaming": "a guarded graph holds its own streams",
    "trustgate.wiring": "import guard and guarded_nodes from trustgate",
    "trustgate.policy": "import policies from trustgate or trustgate.policies",
    "trustgate.telemetry": "import trustgate.otel",
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


@pytest.mark.parametrize("name", sorted(set(PREVIOUS_ROOT) - ROOT_API - {"otel", "telemetry"}))
def test_previous_root_names_still_import_with_a_warning(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"trustgate\.{name} is deprecated") as caught:
        obj = getattr(trustgate, name)
    message = str(caught[0].message)
    _module, _attr, advice = trustgate._DEPRECATED[name]
    assert advice in message
    # the new place the warning names holds the very same object
    for token in message.split():
        place = token.strip("():,")
        if place.startswith("trustgate.") and place.count(".") >= 2 and not place.endswith("."):
            module, _, attr = place.rpartition(".")
            assert getattr(importlib.import_module(module), attr) is obj, place


def test_previous_root_submodules() -> None:
    assert trustgate.otel is importlib.import_module("trustgate.otel")
    assert "telemetry" in trustgate._DEPRECATED  # (its import warns: test_telemetry)


def test_old_module_paths_hold_the_same_objects() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from trustgate.findings import Finding
        from trustgate.middleware import TrustGateMiddleware
        from trustgate.report import Report, TrustReports
    from trustgate import graph

    assert Finding is trustgate.Finding and Report is trustgate.Report
    assert TrustReports is graph.TrustReports
    assert TrustGateMiddleware is graph.TrustGateMiddleware


def _python_files() -> list[Path]:
    files = [*ROOT.glob("trustgate/**/*.py"), *ROOT.glob("examples/*.py")]
    files += [*ROOT.glob("graphs/*.py"), *ROOT.glob("bench/*.py")]
    shims = {ROOT / "trustgate" / f"{m.rpartition('.')[2]}.py" for m in DEPRECATED_MODULES}
    return sorted(f for f in files if f not in shims and "_demo/data" not in str(f))


def test_product_code_uses_no_deprecated_module_or_root_name() -> None:
    deprecated_names = set(trustgate._DEPRECATED)
    problems: list[str] = []
    for path in _python_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module in DEPRECATED_MODULES:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}")
                if node.module == "trustgate":
                    for alias in node.names:
                        if alias.name in deprecated_names:
                            problems.append(
                                f"{path.relative_to(ROOT)}:{node.lineno}: trustgate.{alias.name}"
                            )
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in DEPRECATED_MODULES:
                        problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: {alias.name}")
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "trustgate"
                and node.attr in deprecated_names
            ):
                problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: trustgate.{node.attr}")
    assert not problems, "\n".join(problems)


def test_notebooks_use_no_deprecated_import() -> None:
    problems: list[str] = []
    for nb in sorted(ROOT.glob("examples/*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            tree = ast.parse("\n".join(ln for ln in source.splitlines() if not ln.startswith("%")))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module in DEPRECATED_MODULES:
                    problems.append(f"{nb.name}: {node.module}")
                if isinstance(node, ast.ImportFrom) and node.module == "trustgate":
                    bad = [a.name for a in node.names if a.name in trustgate._DEPRECATED]
                    problems += [f"{nb.name}: trustgate.{n}" for n in bad]
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "trustgate"
                    and node.attr in trustgate._DEPRECATED
                ):
                    problems.append(f"{nb.name}: trustgate.{node.attr}")
    assert not problems, problems


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
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", DeprecationWarning)
                            module = importlib.import_module(str(imp.module))
                        for a in imp.names:
                            if imp.module == "trustgate" and a.name in trustgate._DEPRECATED:
                                problems.append(f"{where}: trustgate.{a.name} is deprecated")
                            elif not hasattr(module, a.name) and (
                                importlib.util.find_spec(f"{imp.module}.{a.name}") is None
                            ):
                                problems.append(f"{where}: {imp.module}.{a.name} does not exist")
    assert not problems, "\n".join(problems)
