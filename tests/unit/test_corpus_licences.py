"""The labelled corpus may be redistributed, and the second held-out set stays held out.

Every row of every corpus file names a licence, and ``tests/corpus/SOURCES.md`` must list
that licence as redistributable and the row's source among its sources: a sentence
quoted from a write-up that grants no licence has no place in the repository. The v2
held-out set (``heldout_v2_sentences.jsonl``) is frozen by its hash, is labelled by
``tests/corpus/LABELLING.md``, and draws its real sentences from organisations that no
other corpus file uses, so that nothing tuned on the other files was tuned on them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
JSONL = (
    "draft_sentences.jsonl",
    "dev_sentences.jsonl",
    "heldout_sentences.jsonl",
    "heldout_v2_sentences.jsonl",
)
V2 = "heldout_v2_sentences.jsonl"
V2_SHA256 = "34b22512cb6d2d4ec0e3df071ae130e81d83d378b9d3e488f8e006f638914d12"
LABELS_V2 = {"causal", "hedged", "plain"}


def _rows(name: str) -> list[dict[str, Any]]:
    text = (CORPUS / name).read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _all_rows() -> dict[str, list[dict[str, Any]]]:
    out = {name: _rows(name) for name in JSONL}
    out["honest_drafts.json"] = json.loads((CORPUS / "honest_drafts.json").read_text("utf-8"))
    return out


def _sources_md() -> str:
    return (CORPUS / "SOURCES.md").read_text("utf-8")


def _redistributable() -> set[str]:
    """SPDX ids (or ``project``) that the Licences table of SOURCES.md marks ``yes``."""
    section = _sources_md().split("## Licences", 1)[1].split("\n## ", 1)[0]
    allowed = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[2] == "yes":
            allowed.add(cells[1])
    return allowed


def test_sources_md_lists_licences_and_refuses_unlicensed_text() -> None:
    allowed = _redistributable()
    assert {"project", "MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0-only"} <= allowed
    assert "none" not in allowed
    for name in ("MIT-PostHog", "MIT-DFDS", "Apache-2.0", "GPL-3.0", "BSD-3-Clause-JupyterHub"):
        assert (CORPUS / "LICENSES" / f"{name}.txt").is_file(), name


def test_every_row_has_a_redistributable_licence_and_a_listed_source() -> None:
    allowed = _redistributable()
    listed = _sources_md()
    for name, rows in _all_rows().items():
        for n, row in enumerate(rows, start=1):
            assert row.get("licence") in allowed, f"{name}:{n}: licence {row.get('licence')!r}"
            source = row.get("source")
            if source is not None:  # honest drafts carry no per-row source
                assert source.replace("|", "\\|") in listed, f"{name}:{n}: {source!r}"


def test_v2_is_frozen() -> None:
    """Figures quoted from the v2 set are comparable only while its bytes are unchanged."""
    data = (CORPUS / V2).read_bytes()
    assert hashlib.sha256(data).hexdigest() == V2_SHA256


def test_v2_rows_are_well_formed_and_balanced() -> None:
    rows = _rows(V2)
    for n, row in enumerate(rows, start=1):
        assert isinstance(row["text"], str) and row["text"].strip() == row["text"] != "", n
        assert row["label"] in LABELS_V2, n
        assert row["origin"] in {"real", "crafted"}, n
        assert row["source"] and row["licence"], n
        if row["origin"] == "real":
            assert row["org"], n
            # a pinned file of a public repository: the excerpt can be checked again
            assert re.fullmatch(
                r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/.+", row["source"]
            )
            assert row["licence"] != "project", n
        else:
            assert row["org"] is None and row["licence"] == "project" and row["class"], n
    for origin in ("real", "crafted"):
        sub = [r for r in rows if r["origin"] == origin]
        assert len(sub) >= 300, origin
        share = {k: v / len(sub) for k, v in Counter(r["label"] for r in sub).items()}
        assert abs(share["causal"] - 0.4) <= 0.05, (origin, share)
        assert abs(share["hedged"] - 0.2) <= 0.05, (origin, share)
        assert abs(share["plain"] - 0.4) <= 0.05, (origin, share)
    assert len({r["org"] for r in rows if r["origin"] == "real"}) >= 2


def _repository(source: str) -> str | None:
    m = re.search(r"github\.com/([^/]+/[^/]+)/", source)
    if m:
        return m.group(1).lower()
    m = re.match(r"([\w.-]+/[\w.-]+) data/", source)
    return m.group(1).lower() if m else None


def test_no_v2_organisation_or_repository_appears_in_another_file() -> None:
    v2 = [r for r in _rows(V2) if r["origin"] == "real"]
    v2_orgs = {r["org"].lower() for r in v2}
    v2_repos = {_repository(r["source"]) for r in v2}
    assert None not in v2_repos
    for name in JSONL:
        if name == V2:
            continue
        for row in _rows(name):
            assert (row.get("org") or "").lower() not in v2_orgs, (name, row.get("org"))
            assert _repository(row["source"]) not in v2_repos, (name, row["source"])
            blob = f"{row.get('org') or ''} {row['source']}".lower()
            assert not any(org in blob for org in v2_orgs), (name, row["source"])


def test_no_text_appears_twice_in_or_across_corpus_files() -> None:
    # counted, not listed: a failure must not print held-out sentences
    seen: dict[str, str] = {}
    repeats: Counter[tuple[str, str]] = Counter()
    for name in JSONL:
        for row in _rows(name):
            if row["text"] in seen:
                repeats[(seen[row["text"]], name)] += 1
            seen.setdefault(row["text"], name)
    assert not repeats, dict(repeats)


def test_calibration_lists_no_held_out_sentence() -> None:
    """bench/calibrate.py scores the held-out sets in aggregate only: even with
    ``--misses`` no held-out sentence is printed, so no rule can be tuned on one."""
    spec = importlib.util.spec_from_file_location(
        "_calibrate_v2", CORPUS.parents[1] / "bench" / "calibrate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_calibrate_v2"] = module
    spec.loader.exec_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main(["--misses", "--json"])
    printed = out.getvalue()
    assert "held-out v2 (frozen)" in printed
    lines = {line.split("] ", 1)[-1] for line in printed.splitlines()}
    for name in ("heldout_sentences.jsonl", V2):
        texts = [r["text"] for r in _rows(name)]
        leaked = sum(1 for t in texts if t in lines or (len(t) > 40 and t in printed))
        assert leaked == 0, f"{leaked} sentences of {name} printed"
