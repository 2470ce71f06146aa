"""Citation replay rules (seed 000, plus the vagueness rule and NFC)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import APP_PY, write_tree

from trustgate.files import FileCitation, Workspace, replay_citation


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    write_tree(
        tmp_path,
        {
            "app.py": APP_PY,
            "dup.txt": "target text here\nfiller 1\nfiller 2\nCITED LINE\nfiller 3\n"
            "target text here\nfiller 4\n",
            "unicode.txt": "caf\u00e9 au lait served\n",
            "empty.txt": "",
            "crlf.txt": "first line\r\nsecond line here\r\n",
        },
    )
    return Workspace(tmp_path)


def cite(ws: Workspace, file: str, line: int, content: str, **kw: int) -> tuple[str, dict]:
    f = replay_citation(FileCitation(file=file, line=line, content=content), ws, **kw)
    return (f.code if f.status == "fail" else "pass"), f.detail


def test_exact_line(ws: Workspace) -> None:
    assert cite(ws, "app.py", 6, "payload = json.loads(event['body'])") == (
        "pass",
        {"matched_line": 6, "drift": 0},
    )


def test_trimmed_substring(ws: Workspace) -> None:
    assert cite(ws, "app.py", 5, "   raise ValueError('empty body')   ")[0] == "pass"
    assert cite(ws, "app.py", 5, "ValueError('empty")[0] == "pass"


@pytest.mark.parametrize(("line", "drift"), [(1, 3), (2, 2), (4, 0), (7, -3)])
def test_window(ws: Workspace, line: int, drift: int) -> None:
    code, detail = cite(ws, "dup.txt", line, "CITED LINE")
    assert code == "pass" and detail == {"matched_line": 4, "drift": drift}


def test_outside_window_fails(ws: Workspace) -> None:
    assert cite(ws, "app.py", 10, "import json")[0] == "content_mismatch"
    assert cite(ws, "dup.txt", 4, "CITED LINE", window=0)[0] == "pass"
    assert cite(ws, "dup.txt", 5, "CITED LINE", window=0)[0] == "content_mismatch"


def test_nearest_match_wins_and_earlier_on_tie(ws: Workspace) -> None:
    # "target text here" is on lines 1 and 6; cited at 3: line 1 is 2 away, line 6 is 3.
    assert cite(ws, "dup.txt", 3, "target text here")[1]["matched_line"] == 1
    # cited at 4: lines 1 and 6 are 3 and 2 away
    assert cite(ws, "dup.txt", 4, "target text here")[1]["matched_line"] == 6
    # duplicate equidistant: build one explicitly
    (Path(ws.root) / "tie.txt").write_text("same text xx\nmid\nsame text xx\n")
    assert cite(ws, "tie.txt", 2, "same text xx")[1] == {"matched_line": 1, "drift": -1}


def test_line_bounds_and_empty_content(ws: Workspace) -> None:
    assert cite(ws, "app.py", 0, "import json")[0] == "line_out_of_range"
    assert cite(ws, "app.py", -4, "import json")[0] == "line_out_of_range"
    assert cite(ws, "app.py", 11, "import json")[0] == "line_out_of_range"
    assert cite(ws, "empty.txt", 1, "anything at all")[0] == "line_out_of_range"
    assert cite(ws, "app.py", 1, "   \t ")[0] == "empty_content"
    assert cite(ws, "app.py", 1, "")[0] == "empty_content"


def test_short_content_must_be_whole_line_at_cited_line(ws: Workspace) -> None:
    assert cite(ws, "app.py", 1, "i")[0] == "too_vague"
    assert cite(ws, "app.py", 1, "json")[0] == "too_vague"
    assert cite(ws, "app.py", 1, "import json")[0] == "pass"  # 10 non-space chars
    (Path(ws.root) / "short.py").write_text("x = 1\n\n}\n")
    assert cite(ws, "short.py", 1, "x = 1")[0] == "pass"
    assert cite(ws, "short.py", 3, "}")[0] == "pass"
    # no window for short content, even when the same line is nearby
    assert cite(ws, "short.py", 2, "x = 1")[0] == "too_vague"
    assert cite(ws, "short.py", 1, "x")[0] == "too_vague"


def test_nfc_but_no_other_normalisation(ws: Workspace) -> None:
    decomposed = "cafe\u0301 au lait"
    assert cite(ws, "unicode.txt", 1, decomposed)[0] == "pass"
    assert cite(ws, "unicode.txt", 1, "CAFÉ AU LAIT")[0] == "content_mismatch"
    assert cite(ws, "unicode.txt", 1, "café  au lait")[0] == "content_mismatch"
    assert cite(ws, "app.py", 6, "payload=json.loads(event['body'])")[0] == "content_mismatch"


def test_line_endings_do_not_matter(ws: Workspace) -> None:
    assert cite(ws, "crlf.txt", 2, "second line here")[0] == "pass"
    assert cite(ws, "crlf.txt", 2, "second line here\r")[0] == "pass"


def test_refusals_become_findings(ws: Workspace) -> None:
    assert cite(ws, "missing.py", 1, "import json")[0] == "file_missing"
    assert cite(ws, "../app.py", 1, "import json")[0] == "path_traversal"


def test_replay_is_deterministic(ws: Workspace) -> None:
    c = FileCitation(file="dup.txt", line=3, content="target text here")
    assert len({replay_citation(c, ws).model_dump_json() for _ in range(5)}) == 1


def test_fast_finding_equals_validated_finding() -> None:
    from trustgate import Finding

    fast = Finding.failed("v", "code", "msg", severity="warn", subject="s", detail={"a": 1})
    slow = Finding(
        verifier="v",
        status="fail",
        severity="warn",
        code="code",
        message="msg",
        subject="s",
        detail={"a": 1},
    )
    assert fast == slow and fast.model_dump() == slow.model_dump()
    assert fast.model_copy(update={"subject": "t"}).subject == "t"
    assert Finding.model_validate_json(fast.model_dump_json()) == fast
    with pytest.raises(ValueError):
        Finding.failed("v", "c", "m", severity="fatal")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Finding.ok(1, "m")  # type: ignore[arg-type]
