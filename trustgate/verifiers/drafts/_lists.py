"""The word lists the draft reader uses before any grammar, read from ``lexicon/text.txt``.

Telling another language from English, an abbreviation from a sentence end, shorthand
from a path, a quoted statement from a quoted word, a file name from prose, and a
content word from a function word all take lists of words. They live in
``trustgate/verifiers/drafts/lexicon/text.txt`` beside the grammar's classes, each
with examples of what it decides (``tests/test_draft_text_lists.py`` runs them), never
in Python. The file is read once, on first use (the segmenter's patterns are built
from it when the segmenter is imported).

The format is ``grammar.txt``'s class entry (``class <name>``, ``| <members>``, ``+`` and
``-`` examples, ``#`` comments) with what the examples show named after the class
name: ``class <name> <check>``; the checks are listed at the top of the file.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources

from trustgate.errors import ConfigurationError

__all__ = ["CHECKS", "TextLists", "get", "lists", "parse_lists"]

CHECKS = ("unsupported", "deleted", "one-sentence", "irrelevant")
"""What a class's examples show (see the top of ``text.txt``)."""


@dataclass
class TextLists:
    """The classes of ``text.txt``: each one's words, check and examples."""

    words: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """class -> its words, in the order written."""
    checks: dict[str, str] = field(default_factory=dict)
    """class -> what its examples show (one of :data:`CHECKS`)."""
    examples: list[tuple[str, str, str]] = field(default_factory=list)
    """(class, sign, example) for every example, ``\\n`` written as a line break."""


def parse_lists(text: str, name: str = "text") -> TextLists:
    """Parse the format documented at the top of ``text.txt``."""
    out = TextLists()
    current: str | None = None
    signs: set[str] = set()
    lines = text.splitlines()

    def close(line_no: int) -> None:
        if current is None:
            return
        if signs != {"+", "-"}:
            raise ConfigurationError(
                f"{name!r}: class {current!r} before line {line_no} needs a '+' and a '-' example"
            )
        if not out.words[current]:
            raise ConfigurationError(f"{name!r}: class {current!r} has no words")

    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line[0] in "+-|" and line[1:2] in (" ", ""):
            if current is None:
                raise ConfigurationError(f"{name!r} line {n}: {line[0]!r} before any class")
            body = line[2:].strip()
            if line[0] == "|":
                out.words[current] += tuple(body.split())
                continue
            if not body:
                raise ConfigurationError(f"{name!r} line {n}: an empty example")
            signs.add(line[0])
            out.examples.append((current, line[0], body.replace("\\n", "\n")))
            continue
        close(n)
        parts = line.split()
        if len(parts) != 3 or parts[0] != "class" or parts[2] not in CHECKS:
            raise ConfigurationError(f"{name!r} line {n}: unknown entry {line!r}")
        current = parts[1]
        if current in out.words:
            raise ConfigurationError(f"{name!r}: class {current!r} defined twice")
        out.words[current] = ()
        out.checks[current] = parts[2]
        signs = set()
    close(len(lines) + 1)
    return out


@functools.cache
def lists() -> TextLists:
    """The shipped lists (parsed once)."""
    try:
        text = (
            resources.files("trustgate.verifiers.drafts.lexicon")
            .joinpath("text.txt")
            .read_text("utf-8")
        )
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # pragma: no cover - packaging
        raise ConfigurationError(f"the draft text lists are missing: {exc}") from None
    return parse_lists(text)


def get(name: str) -> tuple[str, ...]:
    """The words of class ``name``; a missing class is a packaging error."""
    try:
        return lists().words[name]
    except KeyError:
        raise ConfigurationError(f"the draft text lists have no class {name!r}") from None
