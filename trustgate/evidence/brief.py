"""The closed lists a blind verifier may judge against: a brief and an evidence set.

A blind verifier sees two documents, the brief and the draft. The brief's
citations are the *closed list*: a citation in the draft that the list does not hold
is invented, whether or not it exists in the real standard. The evidence set plays
the same role for URLs and prices on runs that did web research. Both are plain data
a planner (or a person) writes as JSON; nothing here reads a source or a clock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trustgate.errors import InputError

__all__ = ["ApprovedCitation", "ApprovedPrice", "Brief", "EvidenceSet"]


def _short_validation_error(exc: ValidationError) -> str:
    """One line per problem, with the JSON path, instead of pydantic's long dump."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


_KINDS = {str: "a string", list: "an array", int: "a number", float: "a number", bool: "a boolean"}


def _load(cls: type[BaseModel], data: Any, what: str) -> Any:
    from trustgate import _limits

    if isinstance(data, (str, bytes, bytearray)):
        data = _limits.loads_json(data, what)  # bounded; ClaimParseError is an InputError
    else:
        _limits.check_claim(data, what)
    if not isinstance(data, dict):
        kind = "null" if data is None else _KINDS.get(type(data), type(data).__name__)
        raise InputError(f"{what} must be a JSON object, got {kind}")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{what} has the wrong shape: {_short_validation_error(exc)}") from None


def _read_file(path: str | Path, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {str(path)!r} is not valid UTF-8 ({exc.reason})") from None


class ApprovedCitation(BaseModel):
    """One entry of the brief's closed citation list.

    ``id`` is the citation as the brief writes it ("ISO/IEC 27001:2022 clause 5.9",
    "A.5.9", "GDPR Article 32(1)", "45 CFR § 164.312", "[C-12]"); the contract checker
    canonicalises it with the same patterns it applies to the draft. ``text`` is the
    approved requirement wording, when the brief gives one: a draft that quotes the
    citation with other words has altered it.

    Example:
        ```python
        from trustgate.evidence.brief import ApprovedCitation

        c = ApprovedCitation("ISO/IEC 27001:2022 clause 5.9", text="Inventory of information")
        assert c.id.startswith("ISO")
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str | None = None

    def __init__(self, id: str | None = None, /, **data: Any) -> None:
        if id is not None:
            if "id" in data:
                raise TypeError("ApprovedCitation got id both positionally and by keyword")
            data["id"] = id
        super().__init__(**data)

    @field_validator("id")
    @classmethod
    def _id_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("citation id is blank")
        return value.strip()

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            return None
        return value


class Brief(BaseModel):
    """The planner's reasoning brief, as far as a source-blind verifier may judge it.

    ``citations`` is the closed list; ``judgments`` are the decided bullets a model
    verifier checks contradictions against (meaning needs a reader, so no
    deterministic check uses them). In JSON a citation may be a bare string (an id
    without approved wording) or ``{"id": ..., "text": ...}``. Unknown keys are
    refused: a typo such as ``"citation"`` would otherwise silently empty the list.

    Example:
        ```python
        from trustgate.evidence.brief import Brief

        brief = Brief.from_json('{"citations": ["ISO/IEC 27001:2022 clause 5.9"]}')
        assert brief.citations[0].text is None
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    citations: tuple[ApprovedCitation, ...] = ()
    judgments: tuple[str, ...] = ()

    @field_validator("citations", mode="before")
    @classmethod
    def _strings_are_ids(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [{"id": v} if isinstance(v, str) else v for v in value]
        return value

    @classmethod
    def from_json(cls, data: str | bytes | dict[str, Any]) -> Self:
        """Build a brief from JSON text or an already-decoded object; ``InputError`` if unusable."""
        result: Self = _load(cls, data, "brief")
        return result

    @classmethod
    def from_file(cls, path: str | Path) -> Self:
        """Read a brief JSON file; ``InputError`` (one line) when missing, bad JSON or bad shape."""
        return cls.from_json(_read_file(path, "brief"))


class ApprovedPrice(BaseModel):
    """A price in structured form: ``{"currency": "USD", "amount": "1200"}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: str = Field(pattern=r"^[A-Za-z]{3}$")
    amount: str = Field(pattern=r"^[0-9]+(\.[0-9]+)?$")


class EvidenceSet(BaseModel):
    """The approved URLs and prices of a run that did web research.

    URLs and prices are kept as written; the integrity check normalises both sides
    the same way ("$1,200.00" and "USD 1200" are one price). A price may be a string
    in any form the draft scanner understands, or an :class:`ApprovedPrice`.

    Example:
        ```python
        from trustgate.evidence.brief import EvidenceSet

        ev = EvidenceSet(urls=["https://example.com/pricing"], prices=["$1,200.00"])
        assert ev.prices == ("$1,200.00",)
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    urls: tuple[str, ...] = ()
    prices: tuple[str | ApprovedPrice, ...] = ()

    @classmethod
    def from_json(cls, data: str | bytes | dict[str, Any]) -> Self:
        """Build an evidence set from JSON text or a decoded object; ``InputError`` if unusable."""
        result: Self = _load(cls, data, "evidence set")
        return result

    @classmethod
    def from_file(cls, path: str | Path) -> Self:
        """Read an evidence-set JSON file; ``InputError`` (one line) when unusable."""
        return cls.from_json(_read_file(path, "evidence set"))
