"""The pasted record a draft cites into: lines with ids a reader can open.

A postmortem's drafter cites ``[[12]]`` where 12 is a line of the record the person
pasted. The ids must be the ones a reader sees (line 12 is the twelfth line in their
editor), so :meth:`Record.from_text` numbers lines the way editors do: ``\\r\\n``,
``\\n`` and ``\\r`` all end a line, and a final terminator does not open an empty
line. Sources that carry their own ids (chat message ids, log offsets) build the
record from a mapping instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trustgate.errors import InputError

__all__ = ["Record"]

_LINE_END = re.compile(r"\r\n|\n|\r")


class Record(BaseModel):
    """The lines of evidence a draft may cite, keyed by id (ids are trimmed strings).

    Example:
        ```python
        from trustgate.drafts import Record

        record = Record.from_text("14:02 latency p99 9.2s\\n14:03 alert fired\\n")
        assert record.ids == frozenset({"1", "2"})
        assert record["2"] == "14:03 alert fired"
        custom = Record(lines={"msg-81": "deploy 4411 started"})
        ```
    """

    model_config = ConfigDict(frozen=True)

    lines: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        # Ids compare as exact strings after trimming, so trim once here; two ids that
        # trim to the same string would make a citation ambiguous, which is refused.
        if not isinstance(data, Mapping) or "lines" not in data:
            return data
        raw = data["lines"]
        if not isinstance(raw, Mapping):
            raise InputError(f"Record lines must be a mapping of id to text, not {type(raw)!r}")
        lines: dict[str, str] = {}
        for key, value in raw.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise InputError(f"record line id must be a string, not {type(key).__name__}")
            if not isinstance(value, str):
                raise InputError(f"record line {key!r} must be text, not {type(value).__name__}")
            ident = str(key).strip()
            if not ident:
                raise InputError("record line ids must not be empty")
            if "[" in ident or "]" in ident or "," in ident:
                raise InputError(f"record line id {ident!r} cannot be cited ([, ] or ,)")
            if ident in lines:
                raise InputError(f"record line id {ident!r} occurs twice")
            lines[ident] = value
        return {**data, "lines": lines}

    @classmethod
    def from_text(cls, text: str) -> Record:
        """Number the lines of ``text`` 1..n exactly as an editor shows them."""
        if not isinstance(text, str):
            raise InputError(f"record text must be str, not {type(text).__name__}")
        if not text:
            return cls(lines={})
        parts = _LINE_END.split(text)
        if parts and parts[-1] == "":
            parts.pop()
        return cls(lines={str(i): line for i, line in enumerate(parts, start=1)})

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Record:
        """Number an already split sequence of lines 1..n."""
        return cls(lines={str(i): line for i, line in enumerate(lines, start=1)})

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(self.lines)

    def __contains__(self, ident: object) -> bool:
        return isinstance(ident, str) and ident.strip() in self.lines

    def __getitem__(self, ident: str) -> str:
        try:
            return self.lines[ident.strip()]
        except KeyError:
            raise InputError(f"record has no line {ident!r}") from None

    def get(self, ident: str, default: str | None = None) -> str | None:
        return self.lines.get(ident.strip(), default)
