"""Quality gate: the rules meet their targets on the labelled corpus (seed 004).

Both sides are measured: recall on causal and hedged sentences (a miss ships an
invented cause) and false positives on plain ones (a gate that deletes clean text
is an outage). Each sentence alone, uncited, through ``verify_draft``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def calibrate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_calibrate", ROOT / "bench" / "calibrate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_calibrate"] = module
    spec.loader.exec_module(module)
    return module


def test_corpus_is_well_formed() -> None:
    lines = (ROOT / "tests" / "corpus" / "draft_sentences.jsonl").read_text("utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    assert len(rows) >= 300
    assert {r["label"] for r in rows} == {"causal", "hedged", "causal+hedged", "plain"}
    assert all(isinstance(r["text"], str) and r["text"] and r["source"] for r in rows)
    assert len({r["text"] for r in rows}) == len(rows)


# Floors, not targets: the targets (recall >= 0.95, plain deleted <= 0.05)
# are not met on the held-out set (see README, "Calibration"). These floors sit just
# under the measured figures so a change that makes the rules worse fails here; they
# are raised when a change is measured to be better, never lowered to let one in.
HELDOUT_FLOOR = {"causal": 0.74, "hedged": 0.93, "plain_fp": 0.08}
HELDOUT_V2_FLOOR = {"causal": 0.73, "hedged": 0.87, "plain_fp": 0.05}
INSAMPLE_FLOOR = {"causal": 0.83, "hedged": 0.90, "plain_fp": 0.02}  # on 2,486 rows


def test_rules_hold_their_measured_floors(calibrate: ModuleType) -> None:
    from trustgate.drafts import DEFAULT_RULES

    for path, floor in (
        (calibrate.HELDOUT, HELDOUT_FLOOR),
        (calibrate.HELDOUT_V2, HELDOUT_V2_FLOOR),
        (calibrate.CORPUS, INSAMPLE_FLOOR),
    ):
        scores = calibrate.score(calibrate.load_corpus(path), DEFAULT_RULES, "default")
        assert scores.causal_recall >= floor["causal"], path.name
        assert scores.hedged_recall >= floor["hedged"], path.name
        assert scores.plain_fp <= floor["plain_fp"], path.name


def test_figures_rule_false_positives_are_measured(calibrate: ModuleType) -> None:
    fp, recall = calibrate.figures_scores()
    assert fp <= 0.05
    assert recall >= 0.6


# Re-pinned once, by the licence audit (tests/corpus/SOURCES.md): a licence field on
# every row, and the 83 sentences quoted from write-ups that grant no licence removed.
# No label or text of a remaining row changed.
HELDOUT_SHA256 = "67bee30941283efd8ca51964bb9cdd1230de8cee4ec22bcc4da8fc94c3e8c5f6"


def test_heldout_set_is_frozen() -> None:
    """The held-out set is never edited: a changed hash means figures quoted from it
    are no longer comparable, and that tuning may have leaked into it."""
    import hashlib

    data = (ROOT / "tests" / "corpus" / "heldout_sentences.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == HELDOUT_SHA256
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    assert len(rows) >= 900
    real = [r for r in rows if r["origin"] == "real"]
    assert len(real) * 2 >= len(rows)
    assert len({r["org"] for r in real}) >= 3
    assert all(r["source"] for r in rows)


def test_heldout_and_tuning_sets_are_disjoint() -> None:
    def texts(name: str) -> set[str]:
        path = ROOT / "tests" / "corpus" / name
        return {json.loads(x)["text"] for x in path.read_text("utf-8").splitlines() if x.strip()}

    assert not texts("heldout_sentences.jsonl") & texts("draft_sentences.jsonl")


def test_wilson_interval(calibrate: ModuleType) -> None:
    lo, hi = calibrate.wilson(95, 100)
    assert 0.88 < lo < 0.89 and 0.97 < hi < 0.98
    assert calibrate.wilson(0, 0) == (0.0, 1.0)
    assert calibrate.wilson(0, 50)[0] == 0.0
