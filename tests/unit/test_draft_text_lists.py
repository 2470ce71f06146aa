"""The draft reader's word lists are data, and every list proves itself.

Which language a sentence is in, which abbreviations a full stop does not end, which
slashes are shorthand, which name endings make a file name, which quoted words make a
statement and which words a citation's relevance ignores: each is a list in
``trustgate/verifiers/drafts/lexicon/text.txt``, never in Python. Each list carries an
example its check holds for and one it does not, run here; a second test empties each
list in turn and holds that one of its examples then comes out the other way (the
examples exercise the list, they do not merely happen to pass), and a third that the
code reads every list and writes none of its own.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from trustgate import ConfigurationError
from trustgate.drafts import Record, verify_draft
from trustgate.verifiers.drafts import _lists, _reading, _text, relevance, segment
from trustgate.verifiers.drafts._grammar import reading as grammar_reading
from trustgate.verifiers.drafts.relevance import CitationRelevanceRule

PACKAGE = Path(_lists.__file__).parent
LISTS = _lists.lists()
RELEVANCE_RECORD = Record.from_lines(["14:02 the pool was exhausted because of the deploy"])


def _forget() -> None:
    """The reader remembers its last sentence: forget it between readings."""
    grammar_reading._last.clear()
    grammar_reading._last_side.clear()


def holds(check: str, example: str) -> bool:
    _forget()
    if check == "unsupported":
        return bool(verify_draft(example, Record()).unsupported)
    if check == "deleted":
        return bool(verify_draft(example, Record()).removed)
    if check == "one-sentence":
        return len(segment.units(example, code=False)) == 1
    assert check == "irrelevant"
    rules = (CitationRelevanceRule(),)
    return bool(verify_draft(example, RELEVANCE_RECORD, rules=rules).removed)


@pytest.mark.parametrize(("name", "sign", "example"), LISTS.examples)
def test_every_example_holds(name: str, sign: str, example: str) -> None:
    assert holds(LISTS.checks[name], example) == (sign == "+"), (name, sign, example)


def test_every_list_has_both_examples() -> None:
    signs: dict[str, set[str]] = {}
    for name, sign, _ in LISTS.examples:
        signs.setdefault(name, set()).add(sign)
    assert set(signs) == set(LISTS.words)
    assert all(s == {"+", "-"} for s in signs.values())


# How each list is emptied: the module attributes built from it, rebuilt without it.
def _empty(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    never = re.compile("(?!)")
    patches: dict[str, list[tuple[object, str, object]]] = {
        "other-language": [
            (_text, "_FOREIGN", frozenset()),
            (_text, "_FOREIGN_WORD", never),
            (_reading, "_foreign_bytes", lambda: frozenset()),
        ],
        "english-function": [(_text, "_ENGLISH", frozenset())],
        "english-common": [(_text, "_COMMON_ENGLISH", ())],
        "clause-marker": [(_text, "_CLAUSE_MARKERS", frozenset())],
        "shorthand": [(_text, "_SHORTHAND", frozenset())],
        "slash-joined": [(_text, "_SLASH_SHORT", never)],
        "file-extension": [(_text, "_NOT_PROSE", _text.not_prose(()))],
        "never-end": [
            (segment, "_ABBREVIATION", segment._abbreviation(())),
            (segment, "_END_REGION", segment._end_region(())),
        ],
        "stop": [(relevance, "_STOP", frozenset())],
    }
    for module, attr, value in patches[name]:
        monkeypatch.setattr(module, attr, value)


@pytest.mark.parametrize("name", sorted(LISTS.words))
def test_each_list_decides_one_of_its_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = [(sign, ex) for n, sign, ex in LISTS.examples if n == name]
    check = LISTS.checks[name]
    before = [holds(check, ex) for _, ex in examples]
    with monkeypatch.context() as patched:
        _empty(name, patched)
        after = [holds(check, ex) for _, ex in examples]
    _forget()
    assert before != after, f"emptying {name!r} changes none of its examples"


def _read_by_the_code() -> Iterator[tuple[str, str]]:
    """(module, list name) for every ``_lists.get("...")`` in the draft package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "_lists"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                yield path.name, str(node.args[0].value)


def test_the_code_reads_every_list_and_only_lists_that_exist() -> None:
    read = {name for _, name in _read_by_the_code()}
    assert read == set(LISTS.words)


def _literal_word_sets() -> Iterator[tuple[str, int]]:
    """Sets, frozensets and lists of three or more lower-case words written in the
    draft package's Python (punctuation and markup classes are structure, not words)."""
    word = re.compile(r"[a-z][a-z'/.]*")
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        names = {  # a module's or class's own names are not words of the drafts
            id(a.value)
            for a in ast.walk(tree)
            if isinstance(a, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id in ("__all__", "__slots__") for t in a.targets)
        }
        for node in ast.walk(tree):
            if id(node) in names:
                continue
            items: list[ast.expr] = []
            if isinstance(node, (ast.Set, ast.List)):
                items = list(node.elts)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("frozenset", "set")
                and node.args
                and isinstance(node.args[0], (ast.Set, ast.List, ast.Tuple))
            ):
                items = list(node.args[0].elts)
            strings = [
                e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if len(strings) >= 3 and all(word.fullmatch(s) for s in strings):
                yield path.name, node.lineno


def test_no_word_list_is_written_in_python() -> None:
    assert list(_literal_word_sets()) == []


def test_a_class_without_both_examples_or_words_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="needs a"):
        _lists.parse_lists("class x deleted\n| a b\n+ A b.\n")
    with pytest.raises(ConfigurationError, match="no words"):
        _lists.parse_lists("class x deleted\n+ A b.\n- C d.\n")
    with pytest.raises(ConfigurationError, match="unknown entry"):
        _lists.parse_lists("class x sometimes\n| a\n+ A.\n- B.\n")
    with pytest.raises(ConfigurationError, match="twice"):
        _lists.parse_lists("class x deleted\n| a\n+ A.\n- B.\nclass x deleted\n| b\n+ A.\n- B.\n")
    with pytest.raises(ConfigurationError, match="no class"):
        _lists.get("no-such-list")


def test_the_lists_are_read_once() -> None:
    assert _lists.lists() is _lists.lists()
