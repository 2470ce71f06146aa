"""``trustgate check-contract``: exit 0 clean, 1 violation, 2 bad input (one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trustgate.cli import main

BRIEF = {
    "citations": [
        {
            "id": "ISO/IEC 27001:2022 Annex A 5.9",
            "text": "Inventory of information and other associated assets",
        },
        "ISO/IEC 27001:2022 clause 7.5",
    ],
    "judgments": ["The register is owned by the CISO."],
}
EVIDENCE = {"urls": ["https://vendor.example/pricing"], "prices": ["USD 1200"]}

HONEST = (
    "The register (A.5.9) is documented information under ISO 27001 §7.5. "
    "The tool costs $1,200.00, see https://Vendor.example/pricing/."
)
LYING = (
    "The register (A.5.9) is audited under ISO/IEC 27001:2022 clauses 9.2 and 9.3. "
    "The tool costs $950, see https://vendor.example/discount."
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {
        "brief": tmp_path / "brief.json",
        "evidence": tmp_path / "evidence.json",
        "honest": tmp_path / "honest.md",
        "lying": tmp_path / "lying.md",
        "altered": tmp_path / "altered.md",
    }
    paths["brief"].write_text(json.dumps(BRIEF))
    paths["evidence"].write_text(json.dumps(EVIDENCE))
    paths["honest"].write_text(HONEST)
    paths["lying"].write_text(LYING)
    paths["altered"].write_text('A.5.9 "Inventory of information assets".')
    return {k: str(v) for k, v in paths.items()}


def test_clean_draft_exits_0(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "check-contract",
            files["honest"],
            "--brief",
            files["brief"],
            "--evidence",
            files["evidence"],
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "no violation" in out


def test_violations_exit_1_and_are_listed(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "check-contract",
            files["lying"],
            "--brief",
            files["brief"],
            "--evidence",
            files["evidence"],
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    for needle in [
        "invented_citation",
        "clause 9.2",
        "clause 9.3",
        "unapproved_price",
        "USD 950",
        "unapproved_url",
        "4 violation(s)",
    ]:
        assert needle in out


def test_altered_citation_exits_1(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check-contract", files["altered"], "--brief", files["brief"]]) == 1
    assert "altered_citation" in capsys.readouterr().out


def test_without_evidence_only_citations_are_checked(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path(files["honest"]).write_text("A.5.9 costs $1 at https://anything.example.")
    assert main(["check-contract", files["honest"], "--brief", files["brief"]]) == 0


def test_json_output(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "check-contract",
            files["lying"],
            "--brief",
            files["brief"],
            "--evidence",
            files["evidence"],
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["passed"] is False and data["violations"] == 4
    assert [(f["code"], f["subject"]) for f in data["findings"]] == [
        ("invented_citation", "ISO 27001 clause 9.2"),
        ("invented_citation", "ISO 27001 clause 9.3"),
        ("unapproved_price", "USD 950"),
        ("unapproved_url", "https://vendor.example/discount"),
    ]

    main(["check-contract", files["honest"], "--brief", files["brief"], "--json"])
    assert json.loads(capsys.readouterr().out)["passed"] is True


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        ("missing_draft", "cannot read draft"),
        ("missing_brief", "cannot read brief"),
        ("bad_json", "not valid JSON"),
        ("wrong_shape", "wrong shape"),
        ("not_object", "must be a JSON object"),
        ("bad_evidence", "evidence set"),
        ("bad_price", "not one price"),
        ("not_utf8", "not valid UTF-8"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    setup: str, needle: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    draft, brief, evidence = files["honest"], files["brief"], files["evidence"]
    if setup == "missing_draft":
        draft = draft + ".missing"
    elif setup == "missing_brief":
        brief = brief + ".missing"
    elif setup == "bad_json":
        Path(brief).write_text("{not json")
    elif setup == "wrong_shape":
        Path(brief).write_text('{"citations": [{"id": 3}]}')
    elif setup == "not_object":
        Path(brief).write_text('["A.5.9"]')
    elif setup == "bad_evidence":
        Path(evidence).write_text('{"urls": "https://x.example"}')
    elif setup == "bad_price":
        Path(evidence).write_text('{"prices": ["about a thousand"]}')
    elif setup == "not_utf8":
        Path(draft).write_bytes(b"\xff\xfe clause 9.2")
    code = main(["check-contract", draft, "--brief", brief, "--evidence", evidence])
    captured = capsys.readouterr()
    assert code == 2
    assert needle in captured.err
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err


def test_missing_brief_option_is_a_usage_error(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check-contract", files["honest"]]) == 2
    assert "--brief" in capsys.readouterr().err


def test_console_entry_point(files: dict[str, str]) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustgate.cli",
            "check-contract",
            files["lying"],
            "--brief",
            files["brief"],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "invented_citation" in proc.stdout
