"""The result of one check.

A :class:`Finding` is the only thing a verifier produces. Policies act on blocking
failures only; warnings travel in the report so a reviewer sees them without the
gate overriding anything.

A verifier that knows how its failure is fixed says so in ``detail``, and policies act
on that, never on another module's codes: ``fix_text`` (the whole text with the
failure cut out, which :class:`~trustgate.Redact` applies), ``remove`` (text proven
false, which :class:`~trustgate.Caveat` cuts), ``strike`` (a path into the claims, as
a list of keys and indexes, to the part that must not be released: a field nothing
grounds, one evidence entry that could not be acquired).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Finding", "FindingStatus", "Severity"]

_setattr = object.__setattr__
_ALL_FIELDS = frozenset({"verifier", "status", "severity", "code", "message", "subject", "detail"})
# Shared by every fast-built Finding: a frozen model never adds to it, and pydantic copies
# it before updating (model_copy), so one set serves them all.
_FIELDS_SET = set(_ALL_FIELDS)

FindingStatus = Literal["pass", "fail"]
Severity = Literal["block", "warn"]


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
    ) -> Finding:
        return cls._fast(verifier, "fail", severity, code, message, subject, detail)

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
