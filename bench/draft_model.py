"""Would a statistical model beat the draft rules? Measured on the dev set, not held-out.

The causal rules miss implicit causation on real write-ups (held-out real: 0.653). This
trains a deterministic linear model (logistic regression over the masked words and
word pairs of each sentence, the trigger keys it holds and the forms of its causative
verbs) and combines it with the rules two ways:

* **add**: a sentence the rules keep is also deleted when it holds a causal trigger
  key (so the model never reads a sentence the pre-scan skips) and the model's
  probability is at least a threshold;
* **veto**: a causal deletion by the rules stands only when the model agrees.

Two training regimes, each scored on ``tests/corpus/dev_sentences.jsonl`` (real
write-ups of other organisations): trained on the tuning corpus alone; and 5-fold
cross-validation in which the tuning corpus plus four fifths of the dev set train a
model scored on the remaining fifth. The frozen held-out set is not read here: a
combination is worth a held-out look only if it beats the rules on dev without
raising plain deletions, and none did (see the README's calibration section).

Needs scikit-learn (``pip install 'langgraph-trustgate[calibration]'``); nothing at run time
does. Run: ``.venv/bin/python bench/draft_model.py``.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from trustgate.evidence.record import Record  # noqa: E402
from trustgate.verifiers.drafts import _grammar, _triggers  # noqa: E402
from trustgate.verifiers.drafts._text import read  # noqa: E402
from trustgate.verifiers.drafts.verify import verify_draft  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
THRESHOLDS = (0.7, 0.8, 0.9, 0.95)


def load(name: str) -> list[dict[str, str]]:
    path = CORPUS / name
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def features(text: str) -> dict[str, int]:
    """Masked words and word pairs, trigger keys, causative verb forms."""
    lex = _grammar.lexicon()
    toks = [t for t in read(text).tokens if t != _grammar.MASK]
    out = {f"w:{t}": 1 for t in toks}
    out.update({f"b:{a} {b}": 1 for a, b in itertools.pairwise(toks)})
    form = _triggers.scan_form(text) or text.lower()
    out.update({f"k:{k}": 1 for k in _triggers.causal().keys.intersection(_triggers.words(form))})
    out.update({f"v:{lex.verbs[t][1]}": 1 for t in toks if t in lex.verbs})
    return out


def candidate(text: str) -> bool:
    form = _triggers.scan_form(text)
    if form is None or _triggers.unstable(form):
        return True
    return bool(_triggers.causal().keys.intersection(_triggers.words(form)))


def rules(text: str) -> tuple[bool, bool]:
    """(deleted as causal, deleted at all) by DEFAULT_RULES, alone and uncited."""
    removed = verify_draft(text, Record()).removed
    return any(r.rule == "causal" for r in removed), bool(removed)


def score(rows: list[dict[str, str]], deleted: list[bool]) -> tuple[float, float]:
    causal = [d for r, d in zip(rows, deleted, strict=True) if "causal" in r["label"]]
    plain = [d for r, d in zip(rows, deleted, strict=True) if r["label"] == "plain"]
    return sum(causal) / len(causal), sum(plain) / len(plain)


def main() -> int:
    try:
        import numpy as np
        from scipy.sparse import vstack
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        print("needs scikit-learn: pip install 'langgraph-trustgate[calibration]'")
        return 2

    tune, dev = load("draft_sentences.jsonl"), load("dev_sentences.jsonl")
    vec = DictVectorizer()
    a_tune = vec.fit_transform([features(r["text"]) for r in tune])
    a_dev = vec.transform([features(r["text"]) for r in dev])
    y_tune = np.array([int("causal" in r["label"]) for r in tune])
    y_dev = np.array([int("causal" in r["label"]) for r in dev])
    by_rules = [rules(r["text"]) for r in dev]
    keyed = [candidate(r["text"]) for r in dev]
    base = score(dev, [d for _, d in by_rules])
    print(f"dev: {len(dev)} sentences; features: {len(vec.vocabulary_)}")
    print(f"rules alone: causal recall {base[0]:.3f}, plain deleted {base[1]:.3f}\n")

    def model(c: float = 0.3) -> Any:
        return LogisticRegression(C=c, max_iter=3000, class_weight="balanced")

    p_tuned = model().fit(a_tune, y_tune).predict_proba(a_dev)[:, 1]
    folds = np.random.RandomState(13).randint(0, 5, len(dev))
    p_cv = np.zeros(len(dev))
    for f in range(5):
        train = [i for i in range(len(dev)) if folds[i] != f]
        test = [i for i in range(len(dev)) if folds[i] == f]
        weights = np.concatenate([np.ones(len(tune)), np.full(len(train), 5.0)])
        fitted = model().fit(
            vstack([a_tune, a_dev[train]]),
            np.concatenate([y_tune, y_dev[train]]),
            sample_weight=weights,
        )
        p_cv[test] = fitted.predict_proba(a_dev[test])[:, 1]
    print(f"{'regime':<34}{'threshold':>10}{'causal recall':>15}{'plain deleted':>15}")
    for name, probs in (
        ("add, trained on tuning", p_tuned),
        ("add, tuning + dev (5-fold CV)", p_cv),
    ):
        for th in THRESHOLDS:
            deleted = [
                d or (k and p >= th) for (_, d), k, p in zip(by_rules, keyed, probs, strict=True)
            ]
            rec, fp = score(dev, deleted)
            print(f"{name:<34}{th:>10}{rec:>15.3f}{fp:>15.3f}")
    for th in (0.1, 0.2, 0.3):
        deleted = [d and not (c and p < th) for (c, d), p in zip(by_rules, p_cv, strict=True)]
        rec, fp = score(dev, deleted)
        print(f"{'veto, tuning + dev (5-fold CV)':<34}{th:>10}{rec:>15.3f}{fp:>15.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
