"""The CLI never shows a traceback, and bad input is bad input everywhere (issue 12, item 8).

Exit 2 with exactly one line on stderr for: empty and binary files in every file
argument, JSON nested past the cap, a brief that is a JSON string, a malformed locator,
an unknown revision. Output that cannot be written (stdout closed, a full device) is
one line too, for text and ``--json`` output. A hypothesis test feeds random bytes to
every file argument of every command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _support import APP_PY, MakeRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustgate.cli import main

BRIEF = {"citations": ["ISO/IEC 27001:2022 clause 9.2"]}
EVIDENCE = {"urls": ["https://vendor.example/pricing"], "prices": ["$5"]}
RECORD = "14:02 checkout p99 latency 9.2s\n14:03 alert fired\n"
DRAFT = "Per ISO 27001 clause 9.2 we audit. Latency rose at 14:02. [[1]]\n"
MANIFEST = [
    {
        "item": "v",
        "status": "already_correct",
        "evidence": [{"file": "app.py", "line": 4, "content": "if not event.get('body'):"}],
    }
]


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    return make_repo({"app.py": APP_PY})


@pytest.fixture
def good(tmp_path: Path, repo: Path) -> dict[str, str]:
    files = {
        "brief.json": json.dumps(BRIEF),
        "evidence.json": json.dumps(EVIDENCE),
        "record.txt": RECORD,
        "record.json": json.dumps({"1": "a line"}),
        "draft.md": DRAFT,
        "manifest.json": json.dumps(MANIFEST),
    }
    out = {"root": str(repo)}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        out[name] = str(tmp_path / name)
    return out


def commands(g: dict[str, str]) -> dict[str, list[str]]:
    """Every command with every file argument it takes, named by that argument."""
    return {
        "contract draft": ["check-contract", g["draft.md"], "--brief", g["brief.json"]],
        "contract brief": ["check-contract", g["draft.md"], "--brief", g["brief.json"]],
        "contract evidence": [
            "check-contract",
            g["draft.md"],
            "--brief",
            g["brief.json"],
            "--evidence",
            g["evidence.json"],
        ],
        "draft draft": ["check-draft", g["draft.md"], "--record", g["record.txt"]],
        "draft record": ["check-draft", g["draft.md"], "--record", g["record.txt"]],
        "draft record json": ["check-draft", g["draft.md"], "--record", g["record.json"]],
        "replay manifest": ["replay", g["manifest.json"], "--root", g["root"]],
    }


# which file each command's bad-input variant replaces
TARGET = {
    "contract draft": "draft.md",
    "contract brief": "brief.json",
    "contract evidence": "evidence.json",
    "draft draft": "draft.md",
    "draft record": "record.txt",
    "draft record json": "record.json",
    "replay manifest": "manifest.json",
}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("trustgate: "), err
    return err


@pytest.mark.parametrize("name", sorted(TARGET))
@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "is empty"),
        (b"  \n\t\n", "is empty"),
        (b"text\x00with a NUL", "binary"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ],
)
def test_empty_and_binary_files_are_bad_input(
    name: str,
    content: bytes,
    said: str,
    good: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(commands(good)[name], capsys)[0] in (0, 1)  # the good files work
    Path(good[TARGET[name]]).write_bytes(content)
    code, _, err = run(commands(good)[name], capsys)
    assert code == 2, (name, err)
    assert said in one_line(err)


@pytest.mark.parametrize(
    "name", ["contract brief", "contract evidence", "draft record json", "replay manifest"]
)
def test_deeply_nested_json_is_bad_input(
    name: str, good: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path(good[TARGET[name]]).write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(commands(good)[name], capsys)
    assert code == 2
    assert "nested deeper" in one_line(err)


@pytest.mark.parametrize(
    ("value", "kind"),
    [('"ISO 27001"', "a JSON string"), ("[1]", "a JSON array"), ("null", "JSON null")],
)
def test_brief_of_the_wrong_json_type_says_so(
    value: str, kind: str, good: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path(good["brief.json"]).write_text(value)
    code, _, err = run(commands(good)["contract brief"], capsys)
    assert code == 2
    assert kind in one_line(err) and "not valid JSON" not in err


@pytest.mark.parametrize(
    "spec", ["app.py:abc", "app.py:", "app.py:0", "app.py:5-3", "app.py:1-x", "app.py:-2"]
)
def test_malformed_locators_are_bad_input(
    spec: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["acquire", spec, "--root", str(repo)], capsys)
    assert code == 2
    assert "locator" in one_line(err)
    assert run(["acquire", "app.py:1-2", "--root", str(repo)], capsys)[0] == 0


def test_unknown_revisions_are_bad_input(
    good: dict[str, str], repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = [{"item": "x", "status": "changed", "files": ["app.py"]}]
    Path(good["manifest.json"]).write_text(json.dumps(changed))
    code, _, err = run(
        ["replay", good["manifest.json"], "--root", str(repo), "--base", "nosuchrev"], capsys
    )
    assert code == 2 and "nosuchrev" in one_line(err)
    code, _, err = run(["acquire", "app.py", "--root", str(repo), "--rev", "nosuchrev"], capsys)
    assert code == 2 and "nosuchrev" in one_line(err)


def test_messages_with_newlines_stay_one_line(
    good: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    odd = Path(good["draft.md"]).with_name("a\nb.md")
    code, _, err = run(["check-contract", str(odd), "--brief", good["brief.json"]], capsys)
    assert code == 2
    one_line(err)


# ------------------------------------------------------------------ random bytes


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    name=st.sampled_from(sorted(TARGET)),
    content=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=300).map(str.encode),
        st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
            lambda c: st.one_of(
                st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c, max_size=4)
            ),
            max_leaves=20,
        ).map(lambda v: json.dumps(v).encode()),
    ),
)
def test_random_input_never_crashes(
    name: str,
    content: bytes,
    good: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = Path(good[TARGET[name]])
    original = path.read_bytes()
    path.write_bytes(content)
    try:
        code, _, err = run(commands(good)[name], capsys)
    finally:
        path.write_bytes(original)
    assert code in (0, 1, 2)
    if code == 2:
        one_line(err)
    else:
        assert "Traceback" not in err


# ------------------------------------------------------------------ output that fails

PY = [sys.executable, "-m", "trustgate.cli"]


def _subprocess(args: list[str], *, stdout: object, close_stdout: bool = False) -> tuple[int, str]:
    proc = subprocess.run(
        [*PY, *args],
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: os.close(1)) if close_stdout else None,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("json_out", [False, True])
@pytest.mark.parametrize("how", ["closed", "full"])
def test_output_that_cannot_be_written_is_one_line(
    how: str, json_out: bool, good: dict[str, str]
) -> None:
    if how == "full" and not os.path.exists("/dev/full"):
        pytest.skip("/dev/full is a Linux device")
    big = Path(good["draft.md"])
    big.write_text(DRAFT + "Invented ISO 27001 clause 9.3 and 9.4.\n" * 2000)
    args = ["check-contract", str(big), "--brief", good["brief.json"]]
    if json_out:
        args.append("--json")
    if how == "closed":
        code, err = _subprocess(args, stdout=None, close_stdout=True)
    else:
        with open("/dev/full", "w") as full:
            code, err = _subprocess(args, stdout=full)
    assert code == 2, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err.count("\n") == 1 and "cannot write" in err, err
