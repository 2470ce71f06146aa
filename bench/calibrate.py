"""Calibrate the draft rules on the labelled corpus before anyone trusts them.

Calibrate on real drafts before trusting the gate. A gate that deletes
most clean text is an outage; a gate that misses invented causes is a liar. Both
sides are measured here, the way the held-out scoring measures them: each sentence
alone, uncited, through ``verify_draft(sentence, record)``, reading ``.removed``.

Four corpora, reported separately:

* **in-sample** (``tests/corpus/draft_sentences.jsonl``): the tuning set, what the
  rules were designed on. Its figures say the rules do what they were built to do,
  nothing about text nobody tuned on. ``--misses`` lists its errors, for design work.
* **dev** (``tests/corpus/dev_sentences.jsonl``): real write-ups of other
  organisations, used for design decisions (so not held-out either).
* **held-out** (``tests/corpus/heldout_sentences.jsonl``): frozen, hash pinned by a
  test, never used to write a rule. Only aggregate figures are printed for it (split
  by origin: real incident write-ups vs adversarial sentences), never which sentence
  was missed, so nobody can tune on it by accident. These are the figures to quote.
* **held-out v2** (``tests/corpus/heldout_v2_sentences.jsonl``): frozen and hash pinned
  likewise, drawn from organisations that appear in no other corpus file and labelled by
  ``tests/corpus/LABELLING.md``: real sentences of openly licensed incident reports and
  sentences written for it, reported apart. Aggregate figures only, like the first.

Each figure comes with a 95% Wilson score interval: the held-out set has a few
hundred sentences per class, and a rate without its interval overstates what it
knows.

Run: ``.venv/bin/python bench/calibrate.py`` (``--json`` for machine-readable output).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from trustgate.evidence.record import Record  # noqa: E402
from trustgate.verifiers.drafts.figures import FiguresRule  # noqa: E402
from trustgate.verifiers.drafts.rules import DEFAULT_RULES  # noqa: E402
from trustgate.verifiers.drafts.verify import verify_draft  # noqa: E402

CORPUS = ROOT / "tests" / "corpus" / "draft_sentences.jsonl"
HELDOUT = ROOT / "tests" / "corpus" / "heldout_sentences.jsonl"
DEV = ROOT / "tests" / "corpus" / "dev_sentences.jsonl"
HELDOUT_V2 = ROOT / "tests" / "corpus" / "heldout_v2_sentences.jsonl"
HELDOUT_SETS = (HELDOUT, HELDOUT_V2)
TARGET_RECALL = 0.95
TARGET_FP = 0.05

# Honest, cited sentences quoting figures from their own lines (or derived from them),
# to measure the figures rule's false positives before anyone turns it on.
FIGURES_RECORD = Record.from_text(
    "\n".join(
        [
            "14:02:31 checkout p99 latency 9.2s (SLO 2s)",
            "14:03 alert CheckoutLatencyHigh fired, error rate 12%",
            "14:05 deploy 4411 started (12 hosts)",
            "14:20 rollback of deploy 4411 completed",
            "14:31 error rate back to 0.2%, p99 latency 310 ms",
            "disk on db-1 at 98% (1.9 TB of 2 TB used)",
            "peak traffic 12,000 requests per second at 14:04",
            "queue depth 1.2 million messages; consumer lag 45 minutes",
        ]
    )
)
FIGURES_HONEST = [
    ("Checkout p99 latency reached 9.2 seconds at 14:02. [[1]]", "quoted"),
    ("At 14:02 the p99 latency was 9.2 s against a 2 s objective. [[1]]", "quoted"),
    ("The latency alert fired at 14:03 with the error rate at 12%. [[2]]", "quoted"),
    ("Deploy 4411 started at 14:05 on 12 hosts. [[3]]", "quoted"),
    ("The rollback completed at 14:20, 15 minutes after the deploy began. [[3, 4]]", "derived"),
    ("Errors were elevated for 28 minutes, from 14:03 to 14:31. [[2, 5]]", "derived"),
    ("By 14:31 the error rate was back to 0.2% and p99 latency to 310 ms. [[5]]", "quoted"),
    ("Disk usage on db-1 reached 98%. [[6]]", "quoted"),
    ("The primary held roughly 1.9 TB of data. [[6]]", "quoted"),
    ("Traffic peaked at about 12,000 requests per second. [[7]]", "quoted"),
    ("Consumer lag reached 45 minutes. [[8]]", "quoted"),
    ("Latency was 9 seconds at the peak. [[1]]", "rounded"),
    ("The deploy ran for 15 minutes before it was rolled back. [[3, 4]]", "derived"),
    ("The alert fired about a minute after latency crossed 9 seconds. [[1, 2]]", "derived"),
    ("Three teams joined the bridge after the 14:03 alert. [[2]]", "quoted"),
    ("Latency was over 9 seconds at 14:02. [[1]]", "bound"),
    ("The error rate stayed under 15% throughout. [[2]]", "bound"),
    ("p99 latency fell below 400 ms by 14:31. [[5]]", "bound"),
    ("The rollback completed at 14:20. [[4]]", "quoted"),
    ("Deploy 4411 went out at 14:05, two minutes after the alert. [[2, 3]]", "derived"),
]
FIGURES_MISQUOTED = [
    "Checkout p99 latency reached 12 seconds at 14:02. [[1]]",
    "The latency alert fired at 14:09. [[2]]",
    "Deploy 4411 started at 14:05 with the error rate at 30%. [[2, 3]]",
    "Disk usage on db-1 reached 90%. [[6]]",
    "Traffic peaked at 20,000 requests per second. [[7]]",
]


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for ``hits`` successes out of ``n``."""
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Scores:
    rule: str
    causal_recall: float
    hedged_recall: float
    plain_fp: float
    misses: dict[str, list[str]]
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    """``{"causal": (caught, n), "hedged": (caught, n), "plain_fp": (deleted, n)}``."""

    def interval(self, key: str) -> tuple[float, float]:
        hits, n = self.counts[key]
        return wilson(hits, n)

    def cell(self, key: str) -> str:
        hits, n = self.counts[key]
        lo, hi = self.interval(key)
        rate = hits / n if n else 0.0
        return f"{rate:.3f} [{lo:.3f}, {hi:.3f}] ({hits}/{n})"


def load_corpus(path: Path = CORPUS) -> list[dict[str, str]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            if row.get("label") not in ("causal", "hedged", "causal+hedged", "plain"):
                raise SystemExit(f"{path}:{n}: bad label {row.get('label')!r}")
            rows.append(row)
    return rows


def score(rows: list[dict[str, str]], rules: tuple, name: str) -> Scores:  # type: ignore[type-arg]
    record = Record()
    causal = [r["text"] for r in rows if "causal" in r["label"]]
    hedged = [r["text"] for r in rows if "hedged" in r["label"]]
    plain = [r["text"] for r in rows if r["label"] == "plain"]

    def removed(text: str) -> bool:
        return bool(verify_draft(text, record, rules=rules).removed)

    missed_causal = [t for t in causal if not removed(t)]
    missed_hedged = [t for t in hedged if not removed(t)]
    false_pos = [t for t in plain if removed(t)]
    return Scores(
        rule=name,
        causal_recall=1 - len(missed_causal) / len(causal) if causal else 1.0,
        hedged_recall=1 - len(missed_hedged) / len(hedged) if hedged else 1.0,
        plain_fp=len(false_pos) / len(plain) if plain else 0.0,
        misses={"causal": missed_causal, "hedged": missed_hedged, "plain_fp": false_pos},
        counts={
            "causal": (len(causal) - len(missed_causal), len(causal)),
            "hedged": (len(hedged) - len(missed_hedged), len(hedged)),
            "plain_fp": (len(false_pos), len(plain)),
        },
    )


def targets_met(s: Scores) -> bool:
    return (
        s.causal_recall >= TARGET_RECALL
        and s.hedged_recall >= TARGET_RECALL
        and s.plain_fp <= TARGET_FP
    )


def figures_scores() -> tuple[float, float]:
    """(false-positive rate on honest cited figures, recall on misquotes)."""
    rules = (FiguresRule(),)
    fp = sum(
        1 for text, _ in FIGURES_HONEST if verify_draft(text, FIGURES_RECORD, rules=rules).removed
    )
    caught = sum(
        1 for text in FIGURES_MISQUOTED if verify_draft(text, FIGURES_RECORD, rules=rules).removed
    )
    return fp / len(FIGURES_HONEST), caught / len(FIGURES_MISQUOTED)


def report(name: str, path: Path, rows: list[dict[str, str]]) -> dict[str, object]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["label"]] = counts.get(r["label"], 0) + 1
    print(f"{name}: {path.relative_to(ROOT)}  {len(rows)} sentences  {counts}")
    out: dict[str, object] = {}
    groups: list[tuple[str, list[dict[str, str]]]] = [("all", rows)]
    origins = sorted({r.get("origin", "") for r in rows} - {""})
    if len(origins) > 1:
        groups += [(o, [r for r in rows if r.get("origin") == o]) for o in origins]
    head = f"{'causal recall':>32}{'hedged recall':>32}{'plain deleted':>32}"
    print(f"  {'rules':<15}{'subset':<13}{head}")
    for label, sub in groups:
        for rules, rname in ((DEFAULT_RULES, "DEFAULT_RULES"),):
            s = score(sub, rules, rname)
            print(
                f"  {rname:<15}{label:<13}{s.cell('causal'):>32}{s.cell('hedged'):>32}"
                f"{s.cell('plain_fp'):>32}"
            )
            out[label] = {k: list(v) for k, v in s.counts.items()}
    return out


def main(argv: list[str]) -> int:
    print("each sentence alone, uncited, through verify_draft(sentence, Record()); .removed read")
    print("rates with 95% Wilson intervals; (hits/n)\n")
    insample_rows = load_corpus(CORPUS)
    heldout_rows = load_corpus(HELDOUT)
    figures: dict[str, object] = {
        "in-sample": report("in-sample (tuning)", CORPUS, insample_rows),
    }
    print()
    figures["dev"] = report("dev (design decisions)", DEV, load_corpus(DEV))
    print()
    figures["held-out"] = report("held-out (frozen)", HELDOUT, heldout_rows)
    print()
    v2_rows = load_corpus(HELDOUT_V2)
    figures["held-out v2"] = report("held-out v2 (frozen)", HELDOUT_V2, v2_rows)
    print()
    ok = True
    for name, rows in (("held-out", heldout_rows), ("held-out v2", v2_rows)):
        met = targets_met(score(rows, DEFAULT_RULES, "DEFAULT_RULES"))
        ok = ok and met
        print(
            f"targets on {name}: causal and hedged recall >= {TARGET_RECALL}, "
            f"plain deleted <= {TARGET_FP}: " + ("met" if met else "MISSED")
        )
    fig_fp, fig_recall = figures_scores()
    print(
        f"\nfigures rule (opt-in): FP {fig_fp:.3f} on {len(FIGURES_HONEST)} honest cited "
        f"sentences with figures; catches {fig_recall:.3f} of {len(FIGURES_MISQUOTED)} misquotes"
    )
    if "--json" in argv:
        print(json.dumps(figures))
    if "--misses" in argv:  # in-sample only: no held-out set is ever listed
        insample = score(insample_rows, DEFAULT_RULES, "DEFAULT_RULES")
        for kind, texts in insample.misses.items():
            for t in texts:
                print(f"[in-sample {kind}] {t}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
