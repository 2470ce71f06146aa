"""The grammar's word classes are data, and every class proves itself.

The constructions of trustgate/verifiers/drafts/_grammar/ are written with word
classes (auxiliaries, determiners, the nouns that name a fault, what after "since"
makes it a date) that live in trustgate/verifiers/drafts/lexicon/grammar.txt, never in
Python. Each class carries a sentence it must get deleted and one that must survive
(an example holding ``{}`` is run once per member of its class); both run here through
``verify_draft``, uncited. A second test empties each class in turn and holds that
one of its examples then reads differently: the examples exercise the class, they do
not merely happen to pass.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from trustgate import ConfigurationError
from trustgate.drafts import Record, verify_draft
from trustgate.verifiers.drafts._grammar import (
    analyse,
    classes,
    parse_classes,
    reading,
    scan,
    spelling,
    trouble,
)
from trustgate.verifiers.drafts._grammar import words as W

PACKAGE = Path(W.__file__).parent
EXAMPLES = classes().expanded()

# Classes whose examples cannot show them changing a reading, and why.
NOT_ISOLATED = {
    # the pre-scan: they choose which sentences are read, never what a reading says
    "scan-extra": "pre-scan only",
    "clause-openers": "pre-scan only",
    "common": "pre-scan only",
    "key-common": "pre-scan only",
    # guards against constructions no English sentence takes ("the since ...",
    # "led to stops ...", "being crashing ..."), kept so no reading changes
    "clause-connective-so": "guard without a natural example",
    "to-cause": "guard without a natural example",
    "being": "guard without a natural example",
}


def test_every_class_has_both_examples_and_is_read_by_the_code() -> None:
    data = classes()
    names = set(data.words) | set(data.phrases)
    assert len(names) >= 100
    signs: dict[str, set[str]] = {}
    for name, sign, _ in data.examples:
        signs.setdefault(name, set()).add(sign)
    assert all(signs.get(n) == {"+", "-"} for n in names)
    assert names == W.READ, f"classes in the data nobody reads: {names - W.READ}"


@pytest.mark.parametrize(
    ("name", "positive"),
    [(n, s) for n, sign, s in EXAMPLES if sign == "+"],
    ids=lambda v: str(v)[:50],
)
def test_positive_example_is_deleted(name: str, positive: str) -> None:
    assert verify_draft(positive, Record()).removed, f"{name}: {positive!r} was kept"


@pytest.mark.parametrize(
    ("name", "negative"),
    [(n, s) for n, sign, s in EXAMPLES if sign == "-"],
    ids=lambda v: str(v)[:50],
)
def test_negative_example_is_kept(name: str, negative: str) -> None:
    verdict = verify_draft(negative, Record())
    assert not verdict.removed, f"{name}: {negative!r} was deleted: {verdict.removed}"


def _constants() -> dict[str, list[str]]:
    """class name -> the names in words.py built from it."""
    source = Path(W.__file__).read_text("utf-8")
    out: dict[str, list[str]] = {}
    for const, name in re.findall(r'^([A-Z_]+) = (?:get|phrases)\("([^"]+)"\)', source, re.M):
        out.setdefault(name, []).append(const)
    for const, names in {
        "SUBJECT_START": ("determiner", "subject-pronoun"),
        "CLEFT_AFTER": ("article", "cleft-after"),
        "BE_HAVE": ("be", "have"),
        "LOAD_COMPOUND": ("load-compound",),
        "SQUEEZE": ("squeeze",),
        "EFFECT_NOUN": ("effect-phrase",),
        "GAPPED_BY_VERB": ("gapped-attribution",),
        "FAULT_NOUNS": ("fault-noun",),
    }.items():
        for name in names:
            out.setdefault(name, []).append(const)
    return out


def _fires(sentence: str) -> bool:
    r = analyse(sentence)
    return bool(r.causal or r.hedge)


def _clear() -> None:
    for cached in (
        scan.trigger_tokens,
        scan.causal_tokens,
        scan.hedge_tokens,
        spelling.variants,
    ):
        cached.cache_clear()
    reading._last_side.clear()
    trouble._starts.clear()


def _empty(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    members = classes().words.get(name, frozenset())
    for const in _constants().get(name, []):
        value = getattr(W, const)
        if name in classes().phrases:
            monkeypatch.setattr(W, const, type(value)())
        elif isinstance(value, tuple):
            monkeypatch.setattr(W, const, tuple(x for x in value if x not in members))
        else:
            monkeypatch.setattr(W, const, value - members)
    if name in ("deontic-verb", "permitted-extra"):  # built from them: their participles
        monkeypatch.setattr(W, "PERMITTED", W.PERMITTED - W.participles(members))
    _clear()


@pytest.mark.parametrize(
    "name", sorted((set(classes().words) | set(classes().phrases)) - set(NOT_ISOLATED))
)
def test_emptying_a_class_changes_one_of_its_examples(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentences = [s for n, _, s in EXAMPLES if n == name]
    before = [_fires(s) for s in sentences]
    _empty(monkeypatch, name)
    try:
        after = [_fires(s) for s in sentences]
    finally:
        monkeypatch.undo()
        _clear()
    assert before != after, f"no example of {name!r} depends on it"


_FORM_TAGS = frozenset({"base", "s", "ed", "ing"})  # the verb form kinds of data.forms


def test_no_word_list_is_written_in_python() -> None:
    """A membership test against a literal list of words, or a set of words, in the
    grammar's code is vocabulary hiding from the data (punctuation is not words)."""
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "data.py":
            continue  # the data format's own keywords (entry kinds)
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            literal: list[ast.expr] = []
            if isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.In, ast.NotIn)) for op in node.ops
            ):
                literal = [c for c in node.comparators if isinstance(c, (ast.Tuple, ast.Set))]
            elif isinstance(node, ast.Set):
                literal = [node]
            for lit in literal:
                assert isinstance(lit, (ast.Tuple, ast.Set))
                words = [
                    e.value
                    for e in lit.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                if any(w.isalpha() and w not in _FORM_TAGS for w in words):
                    found.append(f"{path.name}:{lit.lineno} {words}")
    assert not found, found


@pytest.mark.parametrize(
    "text",
    [
        "class aux\n| is was\n+ A because B.\n",  # no negative example
        "class aux\n| is was\n- A because B.\n",  # no positive example
        "class aux\n+ a\n- b\n",  # no members
        "nonsense aux\n| is\n+ a\n- b\n",  # unknown entry
        "| is was\n",  # members before any class
        "class two words\n| is\n+ a\n- b\n",
        "class aux\n| is\n+ a\n- b\nclass aux\n| was\n+ a\n- b\n",  # defined twice
    ],
)
def test_class_format_errors_are_configuration_errors(text: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_classes(text, "t")


def test_placeholders_and_phrases_parse() -> None:
    parsed = parse_classes(
        "class after\n| . <end> <mask>\n+ a\n- b\nphrases p\n| came from, lay behind\n+ a\n- b\n"
    )
    assert parsed.words["after"] == frozenset({".", "", "zzmask"})
    assert parsed.phrases["p"] == frozenset({("came", "from"), ("lay", "behind")})
    with pytest.raises(ConfigurationError):
        parsed.get("missing")
