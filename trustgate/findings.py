"""The result of one check.

A :class:`Finding` is the only thing a verifier produces. Policies act on blocking
failures only; warnings travel in the report so a reviewer sees them without the
gate overriding anything.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Finding", "FindingStatus", "Severity"]

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
        return cls(
            verifier=verifier,
            status="pass",
            code=code,
            message=message,
            subject=subject,
            detail=dict(detail or {}),
        )

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
        return cls(
            verifier=verifier,
            status="fail",
            severity=severity,
            code=code,
            message=message,
            subject=subject,
            detail=dict(detail or {}),
        )

    def __str__(self) -> str:
        where = f" [{self.subject}]" if self.subject else ""
        return f"{self.status.upper()} {self.verifier}/{self.code}{where}: {self.message}"
