"""Misspelled triggers: ``becuase`` is still ``because``.

A draft is typed in a hurry, and a cause spelt wrong is still a cause: a rule that
only knows ``because`` lets ``becuase the disk was full`` through. The words most
worth the care (``because``, ``caused``, ``therefore``, ``probably``...; the class
``typo-prone`` of ``grammar.txt``) are matched through the slips typing makes most:
two neighbouring letters swapped (``becuase``, ``casued``) and, in words of eight
letters or more, one letter dropped (``trigered``, ``probaly``). The first letter is
never touched nor the last dropped (``attributed`` would become ``attribute``), and a
variant that is itself a word the grammar knows (another form of the same verb,
another trigger) is left alone, so correcting never invents a word the writer did
not nearly type. Substitutions are not matched: they turn ``caused`` into ``paused``.
"""

from __future__ import annotations

import functools

from trustgate.verifiers.drafts._grammar import words as W
from trustgate.verifiers.drafts._grammar.data import classes, lexicon

__all__ = ["correct", "variants"]

_MIN_SWAP = 6
_MIN_DROP = 8


def _slips(word: str) -> set[str]:
    out: set[str] = set()
    if len(word) >= _MIN_SWAP:
        for k in range(1, len(word) - 1):
            if word[k] != word[k + 1]:
                out.add(word[:k] + word[k + 1] + word[k] + word[k + 2 :])
    if len(word) >= _MIN_DROP:
        for k in range(1, len(word) - 1):  # never the last: "attributed" -> "attribute"
            out.add(word[:k] + word[k + 1 :])
    out.discard(word)
    return out


@functools.cache
def variants() -> dict[str, str]:
    """Misspelling -> the trigger word it stands for."""
    lex = lexicon()
    known: set[str] = set(lex.verbs)
    for table in lex.phrases.values():
        for phrases in table.values():
            for p in phrases:
                known.update(p)
    for words in lex.words.values():
        known.update(words)
    for members in classes().words.values():
        known.update(members)
    out: dict[str, str] = {}
    clashes: set[str] = set()
    for word in sorted(W.TYPO_PRONE):
        for slip in _slips(word):
            if slip in known:
                continue
            if slip in out and out[slip] != word:
                clashes.add(slip)  # two triggers one slip apart: neither is meant
            out[slip] = word
    for slip in clashes:
        del out[slip]
    return out


def correct(tokens: list[str]) -> None:
    """Replace, in place, each misspelled trigger by the word it stands for."""
    table = variants()
    if table.keys().isdisjoint(tokens):
        return  # nearly every sentence: one set test in C
    for i, w in enumerate(tokens):
        fixed = table.get(w)
        if fixed is not None:
            tokens[i] = fixed
