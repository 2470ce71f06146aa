"""What agents assert, as typed claims that carry something checkable.

A claim is never evidence. ``FileCitation.content`` is what the agent *says* a line
contains; trustgate reads the line itself. A ``Locator`` carries no content at all:
the agent points, trustgate reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trustgate import _limits
from trustgate.errors import ClaimParseError

__all__ = [
    "ChangeClaim",
    "ChangesManifest",
    "FileCitation",
    "HashClaim",
    "Locator",
    "SelfReport",
    "parse_manifest",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


if TYPE_CHECKING:
    from pydantic._internal._model_construction import ModelMetaclass
else:
    ModelMetaclass = type(BaseModel)


class _ClaimMeta(ModelMetaclass):
    """Building a claim by hand (``Locator(end_line=3)``) with bad fields raises
    :class:`~trustgate.errors.ClaimParseError`, never pydantic's ``ValidationError``
    (a ``ValueError`` a caller's ``except ValueError`` would swallow).

    Only the constructor call goes through here: ``model_validate`` (how verifiers
    read model output, nested claims included) keeps pydantic's error with every field
    problem listed, which verifiers turn into a ``malformed_claim`` finding.
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except ValidationError as exc:
            detail = _short(exc).removeprefix("(item): ")
            raise ClaimParseError(f"{cls.__name__}: {detail}") from None


class _Claim(BaseModel, metaclass=_ClaimMeta):
    """Base of the claim models (see :class:`_ClaimMeta`)."""


class FileCitation(_Claim):
    """``{file, line, content}``: the file says *content* at *line*.

    ``line`` is 1-based. Out-of-range values are accepted here and fail in replay, so a
    model's bad line number becomes a finding rather than a crash.
    """

    model_config = _FROZEN

    file: str
    line: int
    content: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


ItemStatus = Literal["changed", "already_correct", "not_applicable"]


class SelfReport(_Claim):
    """One item of a changes manifest: what the agent says it did about a review item.

    Every status is checkable, so no item escapes by choosing its status: ``changed``
    names files that must appear in the real diff; ``already_correct`` and
    ``not_applicable`` (no diff exists to check them) must carry citations.

    Example:
        ```python
        from trustgate.files import FileCitation, SelfReport

        item = SelfReport(item="validate input", status="already_correct",
                          evidence=[FileCitation(file="app.py", line=3, content="if not x:")])
        ```
    """

    model_config = _FROZEN

    item: str
    status: ItemStatus
    files: list[str] = Field(default_factory=list)
    evidence: list[FileCitation] = Field(default_factory=list)

    @property
    def needs_citations(self) -> bool:
        return self.status != "changed"


class ChangesManifest(_Claim):
    """A builder's whole self-report for one round (structured output target)."""

    model_config = _FROZEN

    items: list[SelfReport] = Field(default_factory=list)
    summary: str = ""


class Locator(_Claim):
    """Where evidence lives, never what it says: ``{path, start_line?, end_line?, revision?}``.

    ``start_line`` alone means that one line; no range means the whole file.

    Example:
        ```python
        from trustgate.files import Locator

        assert Locator.parse("src/app.py:10-12") == Locator(path="src/app.py", start_line=10,
                                                            end_line=12)
        ```
    """

    model_config = _FROZEN

    path: str
    start_line: int | None = None
    end_line: int | None = None
    revision: str | None = None

    @model_validator(mode="after")
    def _range_shape(self) -> Locator:
        if self.end_line is not None and self.start_line is None:
            raise ValueError("end_line given without start_line")
        return self

    @property
    def first(self) -> int | None:
        return self.start_line

    @property
    def last(self) -> int | None:
        if self.start_line is None:
            return None
        return self.end_line if self.end_line is not None else self.start_line

    @classmethod
    def parse(cls, spec: str, revision: str | None = None) -> Locator:
        """Parse ``PATH[:START[-END]]`` (the CLI's form); a bad range is a ClaimParseError.

        What follows the last ``:`` is read as a line range when it could only be one
        (letters, digits and ``-``; no ``.`` or ``/``), and must then be ``START`` or
        ``START-END`` with ``1 <= START <= END``: ``app.py:abc``, ``app.py:`` and
        ``app.py:5-3`` are refused, never read as a file of that name. ``dir:x/a.txt``
        and ``a:b.txt`` are paths.
        """
        path, colon, tail = spec.rpartition(":")
        if not colon or not _RANGE_ATTEMPT.fullmatch(tail):
            return cls(path=spec, revision=revision)
        m = _RANGE.fullmatch(tail)
        start = int(m["start"]) if m else 0
        end = int(m["end"]) if m and m["end"] is not None else None
        if not path or m is None or start < 1 or (end is not None and end < start):
            raise ClaimParseError(
                f"bad locator {spec!r}: after ':' comes a line range START or START-END "
                f"(1-based, START <= END), not {tail!r}"
            )
        return cls(path=path, start_line=start, end_line=end, revision=revision)

    def __str__(self) -> str:
        where = self.path
        if self.start_line is not None:
            where += f":{self.start_line}"
            if self.end_line is not None and self.end_line != self.start_line:
                where += f"-{self.end_line}"
        return f"{self.revision}:{where}" if self.revision else where


_RANGE_ATTEMPT = re.compile(r"[A-Za-z0-9_-]*")
_RANGE = re.compile(r"(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?")


class ChangeClaim(_Claim):
    """ "I changed these files since *base*": checked against the real git diff."""

    model_config = _FROZEN

    files: list[str]
    base: str = "HEAD"


class HashClaim(_Claim):
    """ "The file at *path* (at *revision*) has this sha256": recomputed, never trusted."""

    model_config = _FROZEN

    path: str
    sha256: str
    revision: str | None = None


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "(item)"
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    more = exc.error_count() - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_manifest(raw: Any) -> tuple[list[SelfReport], list[tuple[int, str]]]:
    """Read manifest items from whatever the model produced, item by item.

    Accepts a ``ChangesManifest``, a list of items (models or dicts), a dict with an
    ``items`` key, or JSON text/bytes of any of those. Returns the items that parsed and
    ``(index, error)`` for each that did not: one malformed item must not hide the
    others, and must not vanish either. Raises ``ClaimParseError`` only when the whole
    input is unusable (bad JSON, not a list of items at all), and its subclass
    ``ClaimTooLarge`` when the input is past a cap of :mod:`trustgate._limits` (size,
    nesting, items, citations): counted before any item is validated, so a manifest
    of a million citations costs milliseconds, not minutes.
    """
    if isinstance(raw, ChangesManifest):
        _count(raw.items)
        return list(raw.items), []
    if isinstance(raw, (str, bytes, bytearray)):
        raw = _limits.loads_json(raw, "manifest")
    if isinstance(raw, Mapping):
        if "items" not in raw:
            raise ClaimParseError("manifest object has no 'items' list")
        raw = raw["items"]
    if isinstance(raw, SelfReport):
        raw = [raw]
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ClaimParseError(f"manifest must be a list of items, got {type(raw).__name__}")
    if _reports_within_caps(raw):
        return list(raw), []  # validated already, and within every cap
    _count(raw)
    _limits.check_claim(raw, "manifest")
    items: list[SelfReport] = []
    errors: list[tuple[int, str]] = []
    for i, entry in enumerate(raw):
        if isinstance(entry, SelfReport):
            items.append(entry)
            continue
        try:
            items.append(SelfReport.model_validate(entry))
        except ValidationError as exc:
            errors.append((i, _short(exc)))
    return items, errors


def _reports_within_caps(items: Sequence[Any]) -> bool:
    """True when ``items`` are all plain ``SelfReport`` s whose totals are within the caps
    ``_count`` and ``_limits.check_claim`` hold them to; ``False`` sends them to those.

    The shape of a validated report is known (a list of reports, each of four fields,
    each citation of three), so the counts the generic walk would make (values,
    containers, characters of strings, depth) are summed here directly, at a tenth of
    its cost. Anything else (a subclass, a list that was mutated after validation to
    hold something that is not a citation or a path) is left to the walk, as is any
    total past a cap, so the error raised is exactly the walk's.
    """
    if _limits.MAX_JSON_DEPTH < 4 or len(items) > _limits.MAX_MANIFEST_ITEMS:
        return False  # (list > report > evidence list > citation is 4 deep)
    values = containers = 1  # the list itself
    chars = citations = 0
    for entry in items:
        if type(entry) is not SelfReport:
            return False
        d = entry.__dict__
        if len(d) != 4 or entry.__pydantic_extra__:
            return False
        try:
            name, status, files, evidence = d["item"], d["status"], d["files"], d["evidence"]
        except KeyError:
            return False
        if not (type(name) is str and type(status) is str):
            return False
        if type(files) is not list or type(evidence) is not list:
            return False
        citations += len(evidence)
        if citations > _limits.MAX_CITATIONS:
            return False  # refused by _count, before anything is walked
        chars += len(name) + len(status)
        for path in files:
            if type(path) is not str:
                return False
            chars += len(path)
        for c in evidence:
            if type(c) is not FileCitation:
                return False
            cd = c.__dict__
            if len(cd) != 3 or c.__pydantic_extra__:
                return False
            try:
                file, line, content = cd["file"], cd["line"], cd["content"]
            except KeyError:
                return False
            if not (type(file) is str and type(content) is str and type(line) is int):
                return False
            chars += len(file) + len(content)
        # the report, its four fields, each path, and each citation with its three
        values += 5 + len(files) + 4 * len(evidence)
        containers += 3 + len(evidence)
    return (
        values <= _limits.MAX_JSON_VALUES
        and containers <= _limits.MAX_JSON_CONTAINERS
        and chars <= _limits.MAX_CLAIM_BYTES
    )


def _count(items: Sequence[Any]) -> None:
    """Items and citations against their caps, from the raw shape (nothing validated)."""
    _limits.check_manifest_size(len(items), 0)
    citations = 0
    for entry in items:
        evidence = (
            entry.evidence
            if isinstance(entry, SelfReport)
            else entry.get("evidence")
            if isinstance(entry, Mapping)
            else None
        )
        if isinstance(evidence, Sequence) and not isinstance(evidence, (str, bytes)):
            citations += len(evidence)
    _limits.check_manifest_size(len(items), citations)
