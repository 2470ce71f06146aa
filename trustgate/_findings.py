"""The result of one check.

A :class:`Finding` is the only thing a verifier produces. Policies act on blocking
failures only; warnings travel in the report so a reviewer sees them without the
gate overriding anything.

A finding names what it judged: ``parts`` are the ids of the parts of the node's
output it is about (``messages[2].tool_calls[0]``, ``verdict``, ``draft@1``). A
verifier rarely knows them; the gate fills them in from the claims the verifier was
handed (a finding whose ``subject`` is a tool call's id judges that call; one with text
edits judges the writes its edits fall in; any other judges every part the gate read).
A failed finding is resolved only when every part it names was rewritten or removed
(or a person approved it), whatever a policy says it handled.

A verifier that knows how its failure is fixed proposes it, as typed values policies
act on, never on another module's codes: :class:`TextEdit` (replace a span of the
text the gate read: :class:`~trustgate.Redact` applies them), :class:`Cut` (text proven
false, which :class:`~trustgate.Caveat` cuts) and :class:`Strike` (a path into the
claims, as keys and indexes, to something that must not be released: a field nothing
grounds, one evidence entry that could not be acquired). A proposal refers to the text,
it never copies it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Cut", "Finding", "FindingStatus", "Proposal", "Severity", "Strike", "TextEdit"]

_setattr = object.__setattr__
_ALL_FIELDS = frozenset(
    {"verifier", "status", "severity", "code", "message", "subject", "detail", "parts", "proposals"}
)
# Shared by every fast-built Finding: a frozen model never adds to it, and pydantic copies
# it before updating (model_copy), so one set serves them all.
_FIELDS_SET = set(_ALL_FIELDS)

FindingStatus = Literal["pass", "fail"]
Severity = Literal["block", "warn"]


class TextEdit(BaseModel):
    """Replace ``text[start:end]`` of the text the gate read with ``text``.

    Offsets are into the claims as the verifier received them (for a key written in
    two sections, the sections joined by a newline); the gate maps each edit to the
    write it falls in."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["edit"] = "edit"
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = ""


class Cut(BaseModel):
    """Text a check proved false, as it appears in the claims: cut wherever it occurs."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["cut"] = "cut"
    text: str = Field(min_length=1)


class Strike(BaseModel):
    """A path into the claims (keys and indexes) to something that must not be released."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["strike"] = "strike"
    path: tuple[str | int, ...] = Field(min_length=1)


Proposal: TypeAlias = Annotated[TextEdit | Cut | Strike, Field(discriminator="kind")]
_PROPOSALS = (TextEdit, Cut, Strike)


class Finding(BaseModel):
    """One result of one check, with a stable ``code`` a program can branch on.

    Example:
        ```python
        from trustgate import Finding

        f = Finding.failed("citation_replay", "file_missing", "src/app.py does not exist")
        assert f.blocking
        ```
    """

    model_config = ConfigDict(frozen=True)

    verifier: str
    status: FindingStatus
    severity: Severity = "block"
    code: str
    message: str
    subject: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    parts: tuple[str, ...] = ()
    """The parts of the node's output this finding judged (filled in by the gate)."""
    proposals: tuple[Proposal, ...] = ()
    """How the failure is fixed, when the verifier knows (see the module docstring)."""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def blocking(self) -> bool:
        """True when this finding must trigger the gate's policy."""
        return self.status == "fail" and self.severity == "block"

    @classmethod
    def ok(
        cls,
        verifier: str,
        message: str = "ok",
        *,
        code: str = "ok",
        subject: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> Finding:
        return cls._fast(verifier, "pass", "block", code, message, subject, detail)

    @classmethod
    def failed(
        cls,
        verifier: str,
        code: str,
        message: str,
        *,
        severity: Severity = "block",
        subject: str | None = None,
        detail: dict[str, Any] | None = None,
        parts: Sequence[str] = (),
        proposals: Sequence[TextEdit | Cut | Strike] = (),
    ) -> Finding:
        return cls._fast(
            verifier, "fail", severity, code, message, subject, detail, parts, proposals
        )

    def with_parts(self, parts: Sequence[str]) -> Finding:
        """This finding, naming ``parts`` (what the gate found it judged)."""
        d = dict(self.__dict__)
        d["parts"] = tuple(parts)
        obj = type(self).__new__(type(self))
        _setattr(obj, "__dict__", d)
        _setattr(obj, "__pydantic_fields_set__", _FIELDS_SET)
        _setattr(obj, "__pydantic_extra__", None)
        _setattr(obj, "__pydantic_private__", None)
        return obj

    @classmethod
    def _fast(
        cls,
        verifier: str,
        status: FindingStatus,
        severity: Severity,
        code: str,
        message: str,
        subject: str | None,
        detail: dict[str, Any] | None,
        parts: Sequence[str] = (),
        proposals: Sequence[Any] = (),
    ) -> Finding:
        # Verifiers build thousands of findings per crossing and validation would cost
        # more than the check itself; the invariants are checked by hand, and the object
        # is assembled the way pydantic's model_construct does (a test pins equality).
        if not (isinstance(verifier, str) and isinstance(code, str) and isinstance(message, str)):
            raise TypeError("verifier, code and message must be strings")
        if severity not in ("block", "warn"):
            raise ValueError(f"severity must be 'block' or 'warn', not {severity!r}")
        if subject is not None and not isinstance(subject, str):
            raise TypeError("subject must be a string or None")
        if isinstance(parts, str) or not all(isinstance(p, str) for p in parts):
            raise TypeError("parts must be a sequence of part ids")
        if isinstance(proposals, (str, bytes)) or not all(
            isinstance(p, _PROPOSALS) for p in proposals
        ):
            raise TypeError("proposals must be TextEdit, Cut or Strike values")
        obj = cls.__new__(cls)
        _setattr(
            obj,
            "__dict__",
            {
                "verifier": verifier,
                "status": status,
                "severity": severity,
                "code": code,
                "message": message,
                "subject": subject,
                "detail": dict(detail) if detail else {},
                "parts": tuple(parts),
                "proposals": tuple(proposals),
            },
        )
        _setattr(obj, "__pydantic_fields_set__", _FIELDS_SET)
        _setattr(obj, "__pydantic_extra__", None)
        _setattr(obj, "__pydantic_private__", None)
        return obj

    def _repr_html_(self) -> str:
        from trustgate._render import finding_html

        return finding_html(self)

    def __str__(self) -> str:
        where = f" [{self.subject}]" if self.subject else ""
        return f"{self.status.upper()} {self.verifier}/{self.code}{where}: {self.message}"
