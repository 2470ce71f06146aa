"""Closed-list citation contract (seed 004): invented and altered citations, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from trustgate.contracts import (
    DEFAULT_CITATION_PATTERNS,
    ApprovedCitation,
    Brief,
    CitationId,
    RegexCitationPattern,
    check_citations,
    extract_citations,
)
from trustgate.errors import InputError
from trustgate.testing import honest_model, lying_model

ASSET_BRIEF = Brief(
    citations=[
        ApprovedCitation(
            "ISO/IEC 27001:2022 Annex A 5.9",
            text="Inventory of information and other associated assets",
        ),
        ApprovedCitation(
            "ISO/IEC 27001:2022 Annex A 5.10",
            text="Acceptable use of information and other associated assets",
        ),
        ApprovedCitation("ISO/IEC 27001:2022 Annex A 5.11", text="Return of assets"),
        ApprovedCitation("ISO/IEC 27001:2022 clause 7.5", text="Documented information"),
    ],
    judgments=["The register is owned by the CISO.", "Review the register annually."],
)


def failing(findings: list) -> list:  # type: ignore[type-arg]
    return [f for f in findings if not f.passed]


def codes(findings: list) -> list[str]:  # type: ignore[type-arg]
    return [f.code for f in failing(findings)]


# --------------------------------------------------------------------------- the seed's catch


def test_seed_004_live_catch_invented_clauses_9_2_and_9_3() -> None:
    model = lying_model(
        "# Asset register policy (ISO/IEC 27001:2022 Annex A)\n\n"
        "1. Scope: all information and other associated assets (A.5.9).\n"
        "2. Owners keep their entries current; acceptable use follows Annex A 5.10.\n"
        "3. The register is audited under ISO/IEC 27001:2022 clauses 9.2 and 9.3, "
        "the internal audit and management review clauses.\n"
    )
    draft = model.invoke("draft the asset register policy").text
    findings = check_citations(draft, ASSET_BRIEF)
    assert codes(findings) == ["invented_citation", "invented_citation"]
    assert [f.subject for f in findings] == ["ISO 27001 clause 9.2", "ISO 27001 clause 9.3"]
    assert all(f.blocking for f in findings)
    assert findings[0].detail["canonical"] == "clause:27001:9.2"
    assert findings[0].detail["line"] == 5

    # the re-render brings the citations back inside the approved set, and passes
    rerender = honest_model(
        "# Asset register policy (ISO/IEC 27001:2022 Annex A)\n\n"
        "1. Scope: all information and other associated assets (A.5.9).\n"
        "2. Owners keep their entries current; acceptable use follows Annex A 5.10.\n"
        "3. The register is reviewed annually and kept as documented information "
        "(clause 7.5).\n"
    )
    findings = check_citations(rerender.invoke("again").text, ASSET_BRIEF)
    assert [f.status for f in findings] == ["pass"]


HONEST_DRAFTS = [
    "Return of assets on departure is covered by A.5.11; the register itself is "
    "documented information under ISO 27001 §7.5.",
    "# Stakeholder email\n\nHi all, the new asset register goes live on Monday at 09:00. "
    "It took 9.2 seconds to load in testing, version 2.1 of the tool.",
    'Per ISO/IEC 27001:2022 Annex A, control 5.9 ("Inventory of information and other '
    'associated assets"), every asset has an owner.',
    "Controls A.5.9, A.5.10 and A.5.11 apply; see section 3 for the schedule. "
    "Budget figures for 2026 are in the appendix.",
    "“Acceptable use of information and other associated assets” (A.5.10) is "
    "summarised for staff in one page.",
    "",
]


@pytest.mark.parametrize("draft", HONEST_DRAFTS)
def test_honest_drafts_pass_with_one_pass_finding(draft: str) -> None:
    draft = honest_model(draft).invoke("x").text
    findings = check_citations(draft, ASSET_BRIEF)
    assert len(findings) == 1
    assert findings[0].passed


def test_a_draft_without_citations_passes_absence_is_never_a_violation() -> None:
    [f] = check_citations("The register is owned by the CISO.", ASSET_BRIEF)
    assert f.passed and "absence" in f.message


# --------------------------------------------------------------------------- canonical form


@pytest.mark.parametrize(
    "written",
    [
        "ISO/IEC 27001:2022 clause 9.2",
        "ISO 27001 §9.2",
        "ISO 27001 § 9.2",
        "27001 9.2",
        "ISO27001 9.2",
        "ISO/IEC 27001 Clause 9.2",
        "clause 9.2",
        "Clause 9.2 of ISO/IEC 27001:2022",
        "ISO 27001, section 9.2",
        "§9.2",
    ],
)
def test_clause_forms_are_one_id(written: str) -> None:
    brief = Brief(citations=["ISO/IEC 27001:2022 clause 9.2"])
    found = extract_citations(written, frameworks={"27001"})
    assert [m.id.ref for m in found] == ["9.2"]
    assert check_citations(f"Audits follow {written}.", brief)[0].passed


@pytest.mark.parametrize(
    "written",
    [
        "Annex A 5.9",
        "A.5.9",
        "Annex A.5.9",
        "Annex A, control 5.9",
        "Annex A control 5.9",
        "ISO/IEC 27001:2022 Annex A 5.9",
        "ISO 27001 A.5.9",
    ],
)
def test_annex_forms_are_one_id(written: str) -> None:
    [m] = extract_citations(written)
    assert (m.id.kind, m.id.ref) == ("annex", "A.5.9")
    assert check_citations(f"The register ({written}) is kept.", ASSET_BRIEF)[0].passed


def test_bare_framework_number_only_when_the_brief_names_that_framework() -> None:
    assert extract_citations("27001 9.2") == []
    gdpr = Brief(citations=["GDPR Article 32"])
    assert check_citations("We saw 27001 9.2 events.", gdpr)[0].passed
    iso = Brief(citations=["ISO 27001 clause 9.3"])
    assert codes(check_citations("See 27001 9.2.", iso)) == ["invented_citation"]


@pytest.mark.parametrize(
    "text",
    [
        "Checkout latency rose to 9.2 seconds at 14:02.",
        "Upgrade to version 9.2 on 2026-09-02.",
        "Python 3.11.4 and v3.10.2 both work; 1.2.3.4 is the host.",
        "See section 3 and paragraph 4.1 below.",
        "We are ISO 27001 certified since 2022 and ISO 9001:2015 too.",
        "The 2022 edition of the standard replaced the 2013 one.",
        "Costs rose 9.2% in Q3; 27001 users signed up.",
        "state-of-the-art 5G; an A.B.C test; Figure 3.2.",
        "Markdown [see-here](https://example.com/a-1) and task [x] and marker [[12]].",
        "Suppliers sign clause 4 of the supplier contract and Article 3 of this policy.",
        "See § 3 of the master services agreement.",
    ],
)
def test_numbers_that_are_not_citations(text: str) -> None:
    assert extract_citations(text) == []
    assert check_citations(text, Brief())[0].passed


def test_lists_and_ranges_yield_every_endpoint() -> None:
    found = extract_citations("ISO/IEC 27001:2022 clauses 9.2, 9.3 and 10.1; clause 6.1–6.2")
    assert [m.id.ref for m in found] == ["9.2", "9.3", "10.1", "6.1", "6.2"]
    assert {m.edition for m in found[:3]} == {"2022"}
    # an undotted number after a dotted clause is prose, not a list item
    assert [m.id.ref for m in extract_citations("clause 9.2 and 14 days later")] == ["9.2"]


def test_dotted_clauses_are_distinct_ids() -> None:
    brief = Brief(citations=["ISO 27001 clause 9"])
    assert codes(check_citations("ISO 27001 clause 9.2 applies.", brief)) == ["invented_citation"]
    assert check_citations("ISO 27001 clause 9 applies.", brief)[0].passed


# --------------------------------------------------------------------------- articles, CFR, ids


def test_approved_article_covers_its_paragraphs() -> None:
    brief = Brief(citations=["GDPR Article 32"])
    for ok in ["Article 32(1)", "Art. 32(1)(b) GDPR", "Article 32 of the GDPR", "article 32"]:
        assert check_citations(f"Encryption per {ok}.", brief)[0].passed, ok
    assert codes(check_citations("Breaches go under Article 33.", brief)) == ["invented_citation"]


def test_approved_paragraph_accepts_its_article_but_not_a_sibling() -> None:
    brief = Brief(citations=["Article 32(1)"])
    assert check_citations("Article 32 applies.", brief)[0].passed
    assert check_citations("Article 32(1)(a) applies.", brief)[0].passed
    [f] = check_citations("Article 32(2) applies.", brief)
    assert (f.code, f.subject) == ("invented_citation", "Article 32(2)")


def test_article_of_another_regulation_is_invented() -> None:
    brief = Brief(citations=["GDPR Article 32"])
    [f] = check_citations("DORA Article 32 requires it.", brief)
    assert f.code == "invented_citation" and f.subject == "DORA Article 32"


def test_hipaa_sections() -> None:
    brief = Brief(citations=["45 CFR § 164.312"])
    assert check_citations("Access control: § 164.312(a)(1).", brief)[0].passed
    assert check_citations("Per 45 C.F.R. 164.312(b).", brief)[0].passed
    found = codes(check_citations("Risk analysis is 45 CFR § 164.308(a)(1).", brief))
    assert found == ["invented_citation"]


def test_bracketed_ids() -> None:
    brief = Brief(citations=["[C-12]", "[REQ-7.1]"])
    assert check_citations("Done [C-12], [req-7.1].", brief)[0].passed
    [f] = check_citations("Done [C-12] and [C-13].", brief)
    assert (f.code, f.subject) == ("invented_citation", "[C-13]")


def test_repeated_invented_id_is_one_finding_with_its_occurrences() -> None:
    draft = "ISO 27001 §9.2 first. Then ISO/IEC 27001 clause 9.2 again. And 27001 9.2."
    [f] = check_citations(draft, ASSET_BRIEF)
    assert f.detail["occurrences"] == 3
    assert f.detail["offset"] == 0


# --------------------------------------------------------------------------- altered citations


def test_altered_wording_after_the_citation_is_caught() -> None:
    model = lying_model('Annex A 5.9 "Inventory of information assets" applies to laptops.')
    [f] = check_citations(model.invoke("x").text, ASSET_BRIEF)
    assert f.code == "altered_citation"
    assert f.detail["quoted"] == "Inventory of information assets"
    assert f.detail["approved_text"] == "Inventory of information and other associated assets"


def test_altered_wording_before_the_citation_is_caught() -> None:
    [f] = check_citations("“Return of all assets within a week” (A.5.11).", ASSET_BRIEF)
    assert f.code == "altered_citation"


def test_appositive_title_after_a_comma_is_compared() -> None:
    [f] = check_citations('Annex A 5.11, "Return of all assets", is enforced.', ASSET_BRIEF)
    assert f.code == "altered_citation"


def test_wrong_clause_for_the_wording_names_its_owner() -> None:
    draft = 'A.5.10: "Inventory of information and other associated assets".'
    [f] = check_citations(draft, ASSET_BRIEF)
    assert f.code == "altered_citation"
    assert f.detail["wording_of"] == "ISO 27001 Annex A.5.9"


@pytest.mark.parametrize(
    "draft",
    [
        'A.5.9 "Inventory of information and other associated assets"',
        "A.5.9: “inventory of information and other associated assets.”",
        'A.5.9 ("Inventory of information")',  # a faithful partial quote
        'A.5.9 "Inventory of information ... associated assets"',
        "A.5.9 requires an inventory of our assets and their owners.",  # paraphrase
        "A.5.9 applies.",  # no wording at all
        'Under A.5.9, "laptops" are assets too.',  # the draft's own sentence
    ],
)
def test_faithful_quotes_paraphrase_and_no_wording_are_not_alterations(draft: str) -> None:
    assert check_citations(draft, ASSET_BRIEF)[0].passed


def test_wording_is_not_compared_when_the_brief_gives_none() -> None:
    brief = Brief(citations=["GDPR Article 32"])
    assert check_citations('Article 32 "anything at all" says so.', brief)[0].passed


def test_an_unapproved_edition_is_an_altered_citation() -> None:
    [f] = check_citations("Per ISO/IEC 27001:2013 Annex A 5.9.", ASSET_BRIEF)
    assert f.code == "altered_citation" and f.detail["reason"] == "edition"
    assert f.detail["approved_editions"] == ["2022"]


def test_literal_approved_id_no_pattern_parses() -> None:
    brief = Brief(citations=[ApprovedCitation("SOC 2 Type II", text="Service organization")])
    assert check_citations("We hold a soc 2  type ii report.", brief)[0].passed
    [f] = check_citations('SOC 2 Type II "Security organization" report', brief)
    assert f.code == "altered_citation"


# --------------------------------------------------------------------------- extension, input


def test_users_can_add_a_citation_pattern() -> None:
    soc2 = RegexCitationPattern(name="soc2", regex=r"\bCC(?P<ref>\d+\.\d+)\b", kind="soc2")
    patterns = [*DEFAULT_CITATION_PATTERNS, soc2]
    brief = Brief(citations=["CC6.1"])
    assert check_citations("Logical access: CC6.1.", brief, patterns=patterns)[0].passed
    [f] = check_citations("Change management: CC8.1.", brief, patterns=patterns)
    assert f.code == "invented_citation" and f.detail["canonical"] == "soc2:*:8.1"


def test_a_pattern_that_does_not_compile_is_refused() -> None:
    with pytest.raises(ValidationError):
        RegexCitationPattern(name="bad", regex="(", kind="x")


def test_citation_id_rules() -> None:
    art32 = CitationId(kind="article", framework="gdpr", ref="32")
    assert art32.covers(CitationId(kind="article", ref="32", sub=("1", "b")))
    assert not art32.covers(CitationId(kind="article", framework="dora", ref="32"))
    assert not art32.same_citation(CitationId(kind="article", ref="32", sub=("1",)))


def test_bad_input_is_a_typed_error() -> None:
    with pytest.raises(InputError):
        check_citations(b"bytes", ASSET_BRIEF)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        check_citations("x", ["A.5.9"])  # type: ignore[arg-type]
    assert check_citations("A.5.9", {"citations": ["A.5.9"]})[0].passed


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"citation": []}', "citation"),
        ('{"citations": [{"id": "  "}]}', "blank"),
        ('{"citations": [{"id": "A.5.9", "txt": "x"}]}', "txt"),
        ('{"citations": 3}', "citations"),
    ],
)
def test_brief_loader_errors_are_one_line_input_errors(data: str, needle: str) -> None:
    with pytest.raises(InputError, match=needle) as info:
        Brief.from_json(data)
    assert "\n" not in str(info.value)


def test_brief_from_file(tmp_path: object) -> None:
    from pathlib import Path

    p = Path(str(tmp_path)) / "brief.json"
    p.write_text('{"citations": ["A.5.9", {"id": "A.5.10", "text": "x"}], "judgments": ["j"]}')
    brief = Brief.from_file(p)
    assert [c.id for c in brief.citations] == ["A.5.9", "A.5.10"]
    with pytest.raises(InputError, match="cannot read"):
        Brief.from_file(p.with_name("missing.json"))


# --------------------------------------------------------------------------- properties

FORMS = [
    "ISO/IEC 27001:2022 clause {r}",
    "ISO 27001 §{r}",
    "27001 {r}",
    "clause {r}",
    "Clause {r} of ISO 27001",
]
REFS = st.tuples(st.integers(4, 10), st.integers(1, 9)).map(lambda t: f"{t[0]}.{t[1]}")
FILLER = st.sampled_from(
    [
        " The register took 9.2 seconds to load at 14:02. ",
        " Owners review entries in version 3.1 of the tool. ",
        " Budgets for 2026 rose 4.5%. ",
        "\n\n- ",
        " ",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    approved=st.lists(REFS, min_size=1, max_size=5, unique=True),
    picks=st.lists(st.tuples(st.integers(0, 100), st.sampled_from(FORMS), FILLER), max_size=8),
    extra=REFS,
    extra_form=st.sampled_from(FORMS),
)
def test_property_only_unapproved_clauses_are_flagged(
    approved: list[str],
    picks: list[tuple[int, str, str]],
    extra: str,
    extra_form: str,
) -> None:
    brief = Brief(citations=[f"ISO/IEC 27001:2022 clause {r}" for r in approved])
    parts = [form.format(r=approved[i % len(approved)]) + filler for i, form, filler in picks]
    honest = "".join(parts)
    assert not failing(check_citations(honest, brief))

    lying = honest + " Also " + extra_form.format(r=extra) + "."
    found = failing(check_citations(lying, brief))
    if extra in approved:
        assert not found
    else:
        assert [f.code for f in found] == ["invented_citation"]
        assert found[0].detail["canonical"].endswith(f":{extra}")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_property_arbitrary_text_never_crashes_and_is_deterministic(text: str) -> None:
    first = check_citations(text, ASSET_BRIEF)
    assert first == check_citations(text, ASSET_BRIEF)
    assert first
    offsets = [f.detail.get("offset", 0) for f in first]
    assert offsets == sorted(offsets)


@pytest.mark.parametrize(
    "module",
    [
        "trustgate.evidence.brief",
        "trustgate.verifiers.contracts.patterns",
        "trustgate.verifiers.contracts.citations",
        "trustgate.verifiers.contracts.verdict",
        "trustgate.verifiers.integrity.check",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    import importlib
    import inspect
    import re
    import textwrap

    mod = importlib.import_module(module)
    objects = [mod] + [
        o
        for _, o in inspect.getmembers(mod)
        if (inspect.isclass(o) or inspect.isfunction(o)) and o.__module__ == module
    ]
    blocks = [
        textwrap.dedent(block)
        for o in objects
        for block in re.findall(r"```python\n(.*?)```", inspect.getdoc(o) or "", re.S)
    ]
    assert blocks
    for block in blocks:
        exec(compile(block, f"<{module} docstring>", "exec"), {})
