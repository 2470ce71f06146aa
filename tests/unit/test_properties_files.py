"""Property tests for the path guard, replay and artifact ids."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustgate.errors import EvidenceRefused
from trustgate.evidence.artifacts import file_artifact
from trustgate.files import FileCitation, Locator, Workspace, replay_citation

SECRET = "OUTSIDE-SECRET"
NAMES = ["a", "b", "c", "d.txt", "e.py", "l1", "l2", "l3", "sub"]
COMPONENT = st.sampled_from([*NAMES, "..", ".", "", "/", "outside", "root"])

link_target = st.one_of(
    st.sampled_from(
        [
            "a",
            "sub/d.txt",
            "sub",
            "../outside/x.txt",
            "../outside",
            "..",
            ".",
            "l1",
            "l2",
            "l3",
            "sub/l1",
            "../root/a",
            "nowhere",
        ]
    ),
    st.just("ABS_OUTSIDE"),
    st.just("ABS_INSIDE"),
)


def build(tmp: Path, links: list[tuple[str, str]]) -> Path:
    root = tmp / "root"
    (root / "sub").mkdir(parents=True)
    (tmp / "outside").mkdir()
    (tmp / "outside" / "x.txt").write_text(f"{SECRET}\n")
    (root / "a").write_text("inside a\n")
    (root / "sub" / "d.txt").write_text("inside d\n")
    for name, target in links:
        if target == "ABS_OUTSIDE":
            target = str(tmp / "outside" / "x.txt")
        elif target == "ABS_INSIDE":
            target = str(root / "a")
        link = root / name
        if not link.exists() and not link.is_symlink():
            os.symlink(target, link)
    return root


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    links=st.lists(
        st.tuples(st.sampled_from(["l1", "l2", "l3", "sub/l1", "sub/l2"]), link_target), max_size=5
    ),
    parts=st.lists(COMPONENT, min_size=1, max_size=6),
    scoped=st.booleans(),
)
def test_nothing_outside_the_root_is_ever_read(
    links: list[tuple[str, str]], parts: list[str], scoped: bool
) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        root = build(tmp, links)
        ws = Workspace(root, scopes=["sub"] if scoped else None)
        path = "/".join(parts)
        for read in (ws.read_lines, ws.read_bytes, lambda p: ws.acquire(Locator(path=p))):
            try:
                out = read(path)
            except EvidenceRefused as exc:
                assert exc.code
                continue
            assert SECRET not in repr(out)
            if scoped:
                assert "inside d" in repr(out)
    finally:
        shutil.rmtree(tmp)


LINES = ["alpha = compute(1)", "", "  beta gamma delta  ", "x", "}", "return value", "é"]


@settings(max_examples=200, deadline=None)
@given(
    file_lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=12),
    line=st.integers(-2, 15),
    content=st.text(max_size=12),
)
def test_replay_is_deterministic_and_vague_never_passes(
    file_lines: list[str], line: int, content: str
) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        (tmp / "f.txt").write_text("\n".join(file_lines) + "\n")
        ws = Workspace(tmp)
        citation = FileCitation(file="f.txt", line=line, content=content)
        first = replay_citation(citation, ws)
        assert replay_citation(citation, Workspace(tmp)) == first
        stripped = content.strip()
        if first.passed and len("".join(stripped.split())) < 8:
            assert stripped == file_lines[line - 1].strip()
    finally:
        shutil.rmtree(tmp)


coordinates = st.tuples(
    st.sampled_from(["a.py", "b/c.py", "d.md"]),
    st.one_of(st.none(), st.sampled_from(["0" * 40, "f" * 40])),
    st.one_of(st.none(), st.integers(1, 5)),
    st.integers(0, 3),
    st.binary(max_size=16).map(lambda b: b.hex()),
)


@given(st.lists(coordinates, min_size=1, max_size=20, unique=True))
def test_artifact_ids_stable_and_distinct_per_coordinate(
    coords: list[tuple[str, str | None, int | None, int, str]],
) -> None:
    ids = {}
    for path, rev, start, span, text in coords:
        end = None if start is None else start + span
        first, again = (
            file_artifact(
                path=path,
                revision=rev,
                start_line=start,
                end_line=end,
                data=text.encode(),
                text=text,
            )
            for _ in range(2)
        )
        assert first.id == again.id
        first.check_integrity()
        ids[(path, rev, start, end, text)] = first.id
    assert len(set(ids.values())) == len(ids)
