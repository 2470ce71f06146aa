"""Where in a whole draft a reading could start: the words every construction needs.

Reading a sentence costs tens of microseconds; most sentences of an honest draft hold
no word any construction starts from. This module lists those words (from the
vocabulary and the word classes) and scans a whole draft for them once, so a rule
only reads the sentences that hold one. It is the document-level counterpart of
:mod:`trustgate.verifiers.drafts._triggers` (which answers the same question per
sentence, more precisely).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from trustgate.verifiers.drafts._grammar import spelling
from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.data import lexicon

__all__ = [
    "causal_tokens",
    "document_positions",
    "hedge_tokens",
    "trie",
    "trigger_tokens",
    "trigger_words",
]


def trigger_words() -> frozenset[str]:
    """Every word or phrase that can start a causal or hedge reading (for the document
    pre-scan). Phrases whose first word is a common one are kept whole."""
    lex = lexicon()
    out: set[str] = set(lex.verbs)
    for kind in ("connective", "label", "hedge"):
        for first, phrases in lex.phrases.get(kind, {}).items():
            if first in W.COMMON:
                out.update(" ".join(p) for p in phrases if len(p) > 1)
            else:
                out.add(first)
    for kind in ("belief", "outcome", "predicate", "should"):
        out.update(w.split()[0] for w in lex.words.get(kind, ()))
    out.update(W.SCAN_EXTRA)
    out.update(W.EFFECT_NOUN)
    out.update(W.GAPPED_BY_VERB)
    # a fault as the subject of any verb, and a cleft ("is what blocked")
    out.update(lex.words.get("adverse", ()))
    out.update(W.FAULT_NOUNS | W.FAULT_MODIFIER | W.CLEFT_WH)
    out.update(spelling.variants())  # "becuase" starts what "because" starts
    return frozenset(w for w in out if w and w not in W.CLAUSE_OPENERS)


@functools.cache
def trigger_tokens() -> frozenset[str]:
    """Single tokens that matter to any rule (the only ones worth name-masking)."""
    lex = lexicon()
    out: set[str] = set(lex.verbs)
    for kind in ("connective", "label", "hedge"):
        for phrases in lex.phrases.get(kind, {}).values():
            for p in phrases:
                out.update(p)
    for words in lex.words.values():
        out.update(words)
    out.update(W.CAUSE_NOUN | W.ROOT_FAULT_NOUN | W.HEDGE_MODAL)
    return frozenset(out)


@functools.cache
def causal_tokens() -> frozenset[str]:
    """Tokens a causal reading can start at."""
    lex = lexicon()
    return frozenset(
        W.ARROWS
        | W.CAUSE_NOUN
        | W.ROOT_FAULT_NOUN
        | set(lex.phrases["connective"])
        | set(lex.words.get("outcome", ()))
        | set(lex.words.get("predicate", ()))
        | W.EFFECT_NOUN
        | set(W.GAPPED_BY_VERB)
        | set(lex.verbs)
    )


@functools.cache
def hedge_tokens() -> frozenset[str]:
    """Tokens a hedge reading can start at."""
    lex = lexicon()
    return frozenset(W.HEDGE_MODAL | set(lex.phrases["hedge"]) | set(lex.words.get("belief", ())))


def trie(words: Iterable[str]) -> str:
    """One regex matching any of ``words`` (spaces match any whitespace), shaped as a
    trie so the engine rejects a position after a character or two."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
        alts = [
            (r"\s+" if ch == " " else re.escape(ch)) + emit(child)
            for ch, child in sorted(node.items())
            if ch
        ]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return "(?:" + body + ")?"
        return body

    return emit(root)


@functools.cache
def _document_scans() -> tuple[re.Pattern[str], ...]:
    """Three simple scans rather than one alternation: each starts with something the
    regex engine can skip to quickly (a word boundary into a trie, a non-ASCII
    character, a punctuation mark), so together they run at tens of MB/s."""
    words = [w for w in trigger_words() if w[:1].isalnum()]
    return (
        re.compile(r"\b" + trie(words) + r"\b"),
        re.compile(r"[^\x00-\x7f]|=>|->|\b[bdw]/[cto]\b"),
        re.compile(
            r"[,;]\s*(?:so|for|as)\b|\band\s+so\b"
            r"|(?:^|[.!?:]\s+|\n[ \t>#|*+-]*)(?:as|with|without|so)\b",
            re.MULTILINE,
        ),
    )


_last_document: list[tuple[str, list[int]]] = []


def document_positions(document: str) -> list[int]:
    """Offsets in a whole draft (lower-cased, see ``rules.document_form``) where a
    causal or hedge reading could start. A sentence holding none is never read.
    (Remembered for the last document: both rules ask for the same one.)"""
    if _last_document and _last_document[0][0] is document:
        return _last_document[0][1]
    found: list[int] = []
    for scan in _document_scans():
        found.extend(m.end() - 1 for m in scan.finditer(document))
    _last_document[:] = [(document, found)]
    return found
