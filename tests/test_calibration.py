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

ROOT = Path(__file__).resolve().parents[1]


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


def test_rules_meet_targets(calibrate: ModuleType) -> None:
    from trustgate import DEFAULT_RULES, CausalRule, HedgeRule

    rows = calibrate.load_corpus()
    causal = calibrate.score(rows, (CausalRule(),), "causal")
    hedge = calibrate.score(rows, (HedgeRule(),), "hedge")
    default = calibrate.score(rows, DEFAULT_RULES, "default")
    assert causal.causal_recall >= 0.95, causal.misses["causal"]
    assert hedge.hedged_recall >= 0.95, hedge.misses["hedged"]
    assert default.causal_recall >= 0.95 and default.hedged_recall >= 0.95
    assert default.plain_fp <= 0.05, default.misses["plain_fp"]


def test_figures_rule_false_positives_are_measured(calibrate: ModuleType) -> None:
    fp, recall = calibrate.figures_scores()
    assert fp <= 0.05
    assert recall >= 0.6


HELDOUT_SHA256 = "8c90eff5dbefa7483e0a3e4819130897a26a45d69417a3a3f638446aaff1bc4c"


def test_heldout_set_is_frozen() -> None:
    """The held-out set is never edited: a changed hash means figures quoted from it
    are no longer comparable, and that tuning may have leaked into it."""
    import hashlib

    data = (ROOT / "tests" / "corpus" / "heldout_sentences.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == HELDOUT_SHA256
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    assert len(rows) >= 1000
    real = [r for r in rows if r["origin"] == "real"]
    assert len(real) * 2 >= len(rows)
    assert len({r["org"] for r in real}) >= 10
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
