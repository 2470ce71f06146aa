"""Skipping sentences is a speed-up only: every corpus sentence, in four variants and five
joinings, gets the verdict it gets when every rule sees every sentence.
"""

from __future__ import annotations

from trustgate.drafts import (
    DEFAULT_RULES,
    DraftSentence,
    Record,
    SentenceRule,
    verify_draft,
)


def test_skipping_sentences_never_changes_a_verdict() -> None:
    """The shipped rules' scan that skips sentences is a speed-up only: same answers as
    showing every sentence to every rule."""
    import json
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[1] / "corpus" / "draft_sentences.jsonl"
    texts = [json.loads(line)["text"] for line in corpus.read_text("utf-8").splitlines()]
    for text in texts:
        for variant in (text, text.upper(), "x " + text, text.replace(" ", " \n  ")):
            whole = verify_draft(variant, Record()).removed
            per_sentence = verify_draft(
                variant, Record(), rules=[_NoScan(r) for r in DEFAULT_RULES]
            ).removed
            assert [r.rule for r in whole] == [r.rule for r in per_sentence], variant
    for joiner in (" ", "\n", "\n\n- ", " \u00a0", "  "):
        draft = joiner.join(texts)
        fast = verify_draft(draft, Record())
        slow = verify_draft(draft, Record(), rules=[_NoScan(r) for r in DEFAULT_RULES])
        assert fast.text == slow.text
        assert [(r.start, r.rule) for r in fast.removed] == [
            (r.start, r.rule) for r in slow.removed
        ]


class _NoScan(SentenceRule):
    """Wraps a rule without its ``positions`` speed-up: every sentence is checked."""

    def __init__(self, inner: SentenceRule) -> None:
        self.inner = inner
        self.name = inner.name
        self.code = inner.code

    def check(self, sentence: DraftSentence) -> str | None:
        return self.inner.check(sentence)
