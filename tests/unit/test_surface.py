"""The public surface: a small documented root, families in public submodules, and
docstrings that teach it."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
import textwrap
import warnings
from pathlib import Path

import pytest

import trustgate

ROOT = Path(__file__).resolve().parents[2]

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

# The whole public surface: each public module and exactly the names its ``__all__``
# lists. A name added to or removed from a public module, and a module added to or
# removed from the package, fails here until this list (the API) says so.
SURFACE: dict[str, str] = {
    "trustgate": " ".join(sorted(ROOT_API)),
    "trustgate.cli": "main",
    "trustgate.cli.demo": "register",
    "trustgate.cli.files": "EXIT_BAD_INPUT register",
    "trustgate.contracts": (
        "ApprovedCitation ApprovedPrice Brief CitationId CitationMatch CitationPattern "
        "DEFAULT_CITATION_PATTERNS EvidenceSet RegexCitationPattern Verdict VerdictError "
        "VerdictIssue check_citations check_integrity extract_citations normalize_price "
        "normalize_url parse_verdict"
    ),
    "trustgate.drafts": (
        "CausalRule CitationRelevanceRule DEFAULT_RULES DraftCheck DraftSentence DraftVerdict "
        "FiguresRule FunctionJudge GAP_LABEL Gap HedgeRule InvalidCitation JUDGE_PROMPT "
        "JudgeCache JudgeSummary Judgment KeptSentence Lexicon ModelJudge PatternRule Record "
        "Removal Segment SentenceJudge SentenceRule Testimony UnsupportedText answer_gap "
        "averify_draft parse_judgments segment testimony_text verify_draft"
    ),
    "trustgate.errors": (
        "ArtifactIntegrityError ClaimParseError ClaimTooLarge ConfigurationError "
        "DatabaseUnavailable EvidenceRefused GateHalted GitError InputError JudgeError "
        "LangGraphCompatibilityError LedgerConflict LedgerKeyError LedgerTampered "
        "NodeErrorWithheld ReviewKeyMismatch ReviewSealError ReviewSealTampered "
        "TrustgateError TrustgateOutcome VerdictError"
    ),
    "trustgate.files": (
        "Artifact ArtifactLedger ChangeCheck ChangeClaim ChangesManifest CitationReplay "
        "Connector FileCitation GroundedValue GroundingCheck HashCheck HashClaim "
        "InMemoryLedger Locator PostgresLedger SelfReport SqliteLedger TrustBar Workspace "
        "acquire_external acquire_locators artifact_id check_artifact_refs check_change_claim "
        "check_changed_files check_hash_claim meets_trust_bar parse_manifest replay_citation "
        "replay_manifest"
    ),
    "trustgate.gate": (
        "Cut Evidence EvidenceSources Finding FromContext FromState FunctionVerifier "
        "ModelVerifier Report Strike TextEdit TrustGate Verifier verifier"
    ),
    "trustgate.graph": (
        "AuditPath AuditResult AuditedCrossing GuardedStateGraph SampleRun "
        "TrustGateAgentState TrustGateMiddleware TrustReports TrustReportsState aaudit audit "
        "guard guarded_nodes reports_from_state"
    ),
    "trustgate.otel": (
        "CAPTURE_CONTENT_ENV CONTENT_KEY_ENV CONTENT_MAX_LENGTH_ENV CrossingSpan "
        "DURATION_BUCKETS OVERRIDE_SPANS_ENV OtlpExtraMissing PipelineRun SpanLink Telemetry "
        "VerifierSpan configure crossing parent_context pipeline_run semconv span_link "
        "summarise"
    ),
    "trustgate.otel.metrics": "DURATION_BUCKETS Instruments instruments",
    "trustgate.otel.runs": "PipelineRun current_run pipeline_run",
    "trustgate.otel.sdk": "DISTRIBUTION Telemetry configure missing_extra_error",
    "trustgate.otel.semconv": (
        "CrossingAttributes EvaluationAttributes EventNames JudgeAttributes MetricNames "
        "OpenInferenceAttributes OverrideAttributes RunAttributes SpanKindValues SpanNames "
        "VerifierAttributes"
    ),
    "trustgate.otel.spans": "CrossingSpan VerifierSpan crossing summarise",
    "trustgate.persistence": (
        "AsyncPersistence Backend DEFAULT_DATABASE ENV_VAR EPHEMERAL_KEY "
        "InMemoryReportHistory LoggedRow Persistence PostgresReportHistory ReportHistory "
        "ReportList ReportingSaver SqliteReportHistory aconnect connect history "
        "open_report_log parse_since resolve_url"
    ),
    "trustgate.pipelines": "MODEL_ENV PIPELINES load make_sample_repository",
    "trustgate.pipelines.code_review": (
        "CodeReviewState InspectorReview ROLES build builder sample_inputs"
    ),
    "trustgate.pipelines.compliance": (
        "ComplianceState Plan PlanStep ROLES blind_gate build sample_inputs"
    ),
    "trustgate.pipelines.investigation": (
        "DropUngrounded InvestigationState ROLES ScopedGrounding build grounding_gate "
        "reconcile_gate sample_inputs"
    ),
    "trustgate.pipelines.postmortem": (
        "PostmortemState ROLES build find_gaps redact_gate sample_inputs"
    ),
    "trustgate.policies": (
        "Approval Ask BlockToolCalls CAVEAT_HEADER Caveat CrossingView CutText Decision "
        "DropToolCalls Halt OVERRIDE_NOTE Override OverrideKind OverrideRecord Policy "
        "PrependText Redact Release ReplaceText Rerender Review SetPath Stop policy_chain"
    ),
    "trustgate.policies.caveat": "CAVEAT_HEADER Caveat",
    "trustgate.policies.halt": "Halt",
    "trustgate.policies.override": "OVERRIDE_NOTE Override",
    "trustgate.policies.redact": "Redact",
    "trustgate.policies.rerender": "Rerender",
    "trustgate.policies.review": "Review",
    "trustgate.policies.tool_calls": "BlockToolCalls blocked_message",
    "trustgate.readers": (
        "ClaimsReader FromKey FunctionReader LastAIText RouteClaim Routes StreamWrites "
        "ToolCall ToolCallArgs"
    ),
    "trustgate.render": "to_html to_text",
    "trustgate.server": "REPORTS_PATH app reports_app reports_route",
    "trustgate.testing": (
        "LieCheck LieNotBlocked PIPELINES ScriptExhausted ScriptedChatModel "
        "assert_lie_blocked code_review_models compliance_models honest_model "
        "investigation_models lying_model pipeline_models postmortem_models span_exporter"
    ),
}

# Subpackages whose modules are the implementation behind the families above (their
# docstrings say so): not part of the API.
IMPLEMENTATION = {"trustgate.evidence", "trustgate.verifiers"}


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


def _public_modules(package: str) -> set[str]:
    """The modules of ``package`` (and of its public subpackages) without a leading
    underscore, found on disk: what a user can import by a public-looking path."""
    found: set[str] = set()
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name.startswith("_"):
            continue
        name = f"{package}.{info.name}"
        found.add(name)
        if info.ispkg and name not in IMPLEMENTATION:
            found |= _public_modules(name)
    return found


# The CLI's command modules: their surface is the command line (tests/test_cli.py).
COMMAND_MODULES = {
    "trustgate.cli.audit",
    "trustgate.cli.contracts",
    "trustgate.cli.drafts",
    "trustgate.cli.history",
}


def test_the_package_has_exactly_the_listed_public_modules() -> None:
    found = _public_modules("trustgate")
    listed = (set(SURFACE) | IMPLEMENTATION | COMMAND_MODULES) - {"trustgate"}
    assert found - listed == set(), "public modules the surface does not list"
    assert listed - found == set(), "listed modules that are gone"


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_each_public_module_exports_exactly_its_listed_names(module: str) -> None:
    mod = importlib.import_module(module)
    exported = list(mod.__all__)
    assert len(exported) == len(set(exported)), f"{module}.__all__ repeats a name"
    listed = set(SURFACE[module].split())
    assert set(exported) - listed == set(), f"{module}: names the surface does not list"
    assert listed - set(exported) == set(), f"{module}: listed names it no longer exports"
    for name in exported:
        assert hasattr(mod, name), f"{module}.__all__ names {name!r}, which it lacks"


def _imports(path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module, name)`` for each ``from trustgate... import name`` and
    ``import trustgate...`` in ``path`` (code, not docstrings)."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "trustgate":
                found += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name, None) for a in node.names if a.name.startswith("trustgate")
            ]
    return found


def _is_submodule(package: str, name: str) -> bool:
    return importlib.util.find_spec(f"{package}.{name}") is not None


def test_nothing_in_the_package_imports_the_root() -> None:
    """The root is the facade users import; the library's own modules reach each other
    directly, and the reference pipelines take the gate's names from their family
    (:mod:`trustgate.gate`), so nothing stands above the root it sits under."""
    problems: list[str] = []
    for path in sorted(ROOT.glob("trustgate/**/*.py")):
        rel = path.relative_to(ROOT)
        if "_demo/data" in str(path):
            continue
        for line, module, name in _imports(path):
            if module == "trustgate" and (name is None or not _is_submodule(module, name)):
                problems.append(f"{rel}:{line}: imports {name or 'trustgate'} from the root")
    assert not problems, "\n".join(problems)


def test_reference_pipelines_import_public_names_only() -> None:
    """Users copy the reference pipelines: what they import is the public API (and the
    pipelines' own sample-data and model helpers, which a copy replaces)."""
    problems: list[str] = []
    for path in sorted(ROOT.glob("trustgate/pipelines/*.py")):
        if path.name == "_common.py":
            continue
        for line, module, name in _imports(path):
            if module == "trustgate.pipelines._common" or module in SURFACE:
                if module == "trustgate" and name not in ROOT_API:
                    problems.append(f"{path.name}:{line}: trustgate.{name} is private")
                continue
            problems.append(f"{path.name}:{line}: {module} is private")
    assert not problems, "\n".join(problems)


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
