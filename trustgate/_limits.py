"""Caps on the work one claim or one draft may cause, and the bounded readers that keep them.

Why caps at all: what a gate reads is written by a model, and a model (or whoever
steers it) can write a manifest with a million citations, JSON nested ten thousand
levels deep, or a draft of fifty megabytes. Without caps such input costs minutes and
gigabytes, or a ``RecursionError`` escapes from deep inside the parser. With them it is
refused at the door, in time linear in its size, as a clear blocking finding
(``claim_too_large``) or a :class:`~trustgate.errors.ClaimParseError` with a one-line
message. Every walk here is iterative: nothing recurses on the input's structure.

The numbers are chosen far above what an honest claim needs and low enough that the
largest accepted input is checked in about a second and some tens of MB (measured by
``bench/limits.py``; the figures are in the README):

* :data:`MAX_CLAIM_BYTES` (8 MiB): JSON text of one claim, or the characters of the
  strings in an already parsed one. The largest workspace file read is 8 MiB too.
* :data:`MAX_JSON_DEPTH` (64): nesting of arrays/objects. A changes manifest is 5 deep.
* :data:`MAX_JSON_CONTAINERS` (100,000) and :data:`MAX_JSON_VALUES` (500,000):
  arrays/objects and all values in one claim. Containers are what make parsed JSON
  large (an empty dict costs 64 bytes for its 3 bytes of text), so they are capped
  before the text is parsed.
* :data:`MAX_MANIFEST_ITEMS` and :data:`MAX_CITATIONS` (10,000 each): items, and
  citations over all items, of one changes manifest. Replay costs about 20 µs per
  citation once the files are read.
* :data:`MAX_DRAFT_CHARS` (1,000,000): a draft checked by the closed-list contract and
  URL/price integrity checks (about 300 pages).
* :data:`MAX_LINK_OPENERS` (20,000): ``[`` and ``<`` in a draft whose links are read
  with a CommonMark parser; the parser costs tens of microseconds per opener, so a
  draft made of brackets would otherwise take a minute per megabyte.
* :data:`MAX_DRAFT_ITEMS` (20,000): citations, URLs or prices found in one draft; each
  costs a few objects, so this bounds memory (about 35 MB at the cap) where the length
  cap alone would allow a quarter of a gigabyte for a draft made of ``A.5.9, ``.
* :data:`GIT_TIMEOUT` (30 s): one git subprocess.

The constants are read at call time, so a deployment can raise or lower them
(``trustgate._limits.MAX_CITATIONS = 50_000``); the functions also take the cap as an
argument where a caller has its own.

API for readers (used by :mod:`trustgate._claims` and the CLI, meant for
:mod:`trustgate.readers` too):

* :func:`loads_json` ``(text, what)`` -> parsed value: bounded ``json.loads`` that
  raises ``ClaimTooLarge`` / ``ClaimParseError`` (never ``RecursionError``,
  ``ValueError`` or ``MemoryError``), for model output that is JSON text or bytes;
* :func:`check_claim` ``(value, what)`` -> ``None``: the same caps for an object a
  node returned already parsed (dicts, lists, pydantic models), walked iteratively;
* :func:`check_draft` ``(text, what)`` -> ``None``: the draft length cap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from trustgate.errors import ClaimParseError, ClaimTooLarge

__all__ = [
    "GIT_TIMEOUT",
    "MAX_CITATIONS",
    "MAX_CLAIM_BYTES",
    "MAX_DRAFT_CHARS",
    "MAX_DRAFT_ITEMS",
    "MAX_JSON_CONTAINERS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_VALUES",
    "MAX_LINK_OPENERS",
    "MAX_MANIFEST_ITEMS",
    "check_claim",
    "check_draft",
    "check_link_openers",
    "check_manifest_size",
    "loads_json",
]

MAX_CLAIM_BYTES = 8 * 1024 * 1024
MAX_JSON_DEPTH = 64
MAX_JSON_CONTAINERS = 100_000
MAX_JSON_VALUES = 500_000
MAX_MANIFEST_ITEMS = 10_000
MAX_CITATIONS = 10_000
MAX_DRAFT_CHARS = 1_000_000
MAX_LINK_OPENERS = 20_000
MAX_DRAFT_ITEMS = 20_000
GIT_TIMEOUT = 30.0

# a JSON string (escapes included) or one structural character
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _count_containers(text: str) -> int:
    """Arrays and objects in JSON text, not counting brackets inside strings."""
    rough = text.count("{") + text.count("[")
    if rough <= MAX_JSON_CONTAINERS:
        return rough  # an over-estimate already under the cap
    return sum(1 for m in _TOKEN.finditer(text) if m.group()[0] in "[{")


def loads_json(text: str | bytes | bytearray, what: str = "claim") -> Any:
    """Parse JSON text from a model within the caps; the value, or a typed error.

    Raises ``ClaimTooLarge`` past a cap and ``ClaimParseError`` for text that is not
    UTF-8 or not JSON. Size and container caps are checked before parsing, so a
    hostile document never costs more than a linear scan of its text.
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_CLAIM_BYTES:
            raise _too_large(what, f"is {len(text):,} bytes", f"{MAX_CLAIM_BYTES:,}-byte")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ClaimParseError(
                f"{what} is not valid UTF-8: {exc.reason} at byte {exc.start}"
            ) from None
    if not isinstance(text, str):
        raise ClaimParseError(f"{what} must be JSON text, got {type(text).__name__}")
    if len(text) > MAX_CLAIM_BYTES:
        raise _too_large(what, f"is {len(text):,} characters", f"{MAX_CLAIM_BYTES:,}-character")
    containers = _count_containers(text)
    if containers > MAX_JSON_CONTAINERS:
        raise _too_large(
            what, f"holds {containers:,} arrays/objects", f"{MAX_JSON_CONTAINERS:,}-container"
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClaimParseError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise _too_deep(what) from None
    check_claim(value, what)
    return value


def check_claim(value: Any, what: str = "claim") -> None:
    """Hold an already parsed claim to the caps; ``ClaimTooLarge`` when it is past one.

    Walks dicts, lists, tuples, sets and pydantic models iteratively (a cycle counts as
    too deep), counting values, containers, nesting and the characters of strings and
    bytes. Stops at the first cap passed, so the cost is bounded by the caps, not by
    the input.
    """
    values = containers = chars = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        values += 1
        if values > MAX_JSON_VALUES:
            raise _too_large(what, "holds more values than allowed", f"{MAX_JSON_VALUES:,}-value")
        if isinstance(node, (str, bytes, bytearray)):
            chars += len(node)
            if chars > MAX_CLAIM_BYTES:
                raise _too_large(
                    what, "holds more text than allowed", f"{MAX_CLAIM_BYTES:,}-character"
                )
            continue
        children: Any
        if isinstance(node, Mapping):
            children = [*node.keys(), *node.values()]
        elif isinstance(node, (list, tuple, set, frozenset)):
            children = node
        elif isinstance(node, BaseModel):
            children = list(node.__dict__.values())
            if node.__pydantic_extra__:
                children += list(node.__pydantic_extra__.values())
        else:
            continue
        containers += 1
        if containers > MAX_JSON_CONTAINERS:
            raise _too_large(
                what, "holds more arrays/objects than allowed", f"{MAX_JSON_CONTAINERS:,}-container"
            )
        if depth > MAX_JSON_DEPTH:
            raise _too_deep(what)
        if len(children) > MAX_JSON_VALUES:
            raise _too_large(what, "holds more values than allowed", f"{MAX_JSON_VALUES:,}-value")
        stack.extend((child, depth + 1) for child in children)


def check_draft(text: str, what: str = "draft") -> None:
    """``ClaimTooLarge`` when a draft is longer than :data:`MAX_DRAFT_CHARS`."""
    if len(text) > MAX_DRAFT_CHARS:
        raise _too_large(what, f"is {len(text):,} characters", f"{MAX_DRAFT_CHARS:,}-character")


def check_link_openers(text: str, what: str = "draft") -> None:
    """``ClaimTooLarge`` when a draft has more ``[`` and ``<`` than links are read for."""
    openers = text.count("[") + text.count("<")
    if openers > MAX_LINK_OPENERS:
        raise _too_large(what, f"has {openers:,} '[' and '<'", f"{MAX_LINK_OPENERS:,}-link-opener")


def check_manifest_size(items: int, citations: int, what: str = "manifest") -> None:
    """``ClaimTooLarge`` when a changes manifest has too many items or citations."""
    if items > MAX_MANIFEST_ITEMS:
        raise _too_large(what, f"has {items:,} items", f"{MAX_MANIFEST_ITEMS:,}-item")
    if citations > MAX_CITATIONS:
        raise _too_large(what, f"has {citations:,} citations", f"{MAX_CITATIONS:,}-citation")


def _too_large(what: str, has: str, cap: str) -> ClaimTooLarge:
    return ClaimTooLarge(f"{what} {has}, over the {cap} cap; nothing in it was checked")


def _too_deep(what: str) -> ClaimTooLarge:
    return ClaimTooLarge(
        f"{what} is nested deeper than {MAX_JSON_DEPTH} levels (or refers to itself); "
        "nothing in it was checked"
    )
