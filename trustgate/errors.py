"""Typed errors, and the one outcome that is raised.

Two roots, kept apart on purpose. :class:`TrustgateError` is a *usage* error: the
library was set up wrongly or handed input it cannot use; fix the call.
:class:`TrustgateOutcome` is a *decision*: :class:`GateHalted` means a gate worked and
stopped a run; the code that called it was right. A handler written for one must not
catch the other (``except TrustgateError`` around a graph must never swallow a halt),
and the CLI reports them with different exit codes (2 and 4).

Nothing here derives from ``OSError``/``ValueError``: a caller's broad ``except
OSError`` around file handling must never swallow a refused citation or a halted gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trustgate._base_errors import (
    ConfigurationError,
    LedgerKeyError,
    TrustgateError,
    TrustgateOutcome,
)

if TYPE_CHECKING:
    from trustgate._findings import Finding
    from trustgate._report import Report

__all__ = [
    "ArtifactIntegrityError",
    "ClaimParseError",
    "ClaimTooLarge",
    "ConfigurationError",
    "DatabaseUnavailable",
    "EvidenceRefused",
    "GateHalted",
    "GitError",
    "InputError",
    "JudgeError",
    "LangGraphCompatibilityError",
    "LedgerConflict",
    "LedgerKeyError",
    "LedgerTampered",
    "NodeErrorWithheld",
    "ReviewKeyMismatch",
    "ReviewSealError",
    "ReviewSealTampered",
    "TrustgateError",
    "TrustgateOutcome",
    "VerdictError",
]


class DatabaseUnavailable(TrustgateError):
    """The database did not answer within its limit, or the connection to it broke.

    Raised by trustgate's PostgreSQL persistence (checkpointer, store, artifact ledger,
    report log) instead of waiting for ever on a server that is frozen, unreachable,
    overloaded past its ``statement_timeout`` or gone: the operation did not complete,
    and what was stored before it stays stored. Resume the thread (or retry) once the
    database answers. The limits are ``connect(..., connect_timeout=, statement_timeout=,
    pool_timeout=)``; see the persistence guide. The errors actually raised are also
    the psycopg error they stand for (``OperationalError``, ``QueryCanceled``,
    ``psycopg_pool.PoolTimeout``), so a handler written for psycopg still catches them.
    """


class InputError(TrustgateError):
    """Input handed to trustgate cannot be used at all (unreadable file, bad JSON)."""


class ClaimParseError(InputError):
    """Model output that should carry claims does not have the expected shape.

    Verifiers turn this into a failed finding (``malformed_claim``) rather than
    letting it escape: a malformed claim is a failed inspection, never a pass.
    """


class ClaimTooLarge(ClaimParseError):
    """A claim is past one of the caps in :mod:`trustgate._limits` (size, nesting,
    citations per manifest, draft length): refused unread, finding code
    ``claim_too_large``, never a pass."""

    code = "claim_too_large"


class EvidenceRefused(TrustgateError):
    """A source read was refused by a guard (path escape, scope, size, encoding...).

    Carries the stable finding ``code`` so callers that are not verifiers (the CLI,
    ``Workspace.acquire``) can report exactly what a verifier would have.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        path: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.path = path
        self.detail = dict(detail or {})

    def to_finding(self, verifier: str, subject: str | None = None) -> Finding:
        from trustgate._findings import Finding

        return Finding.failed(
            verifier,
            self.code,
            self.message,
            subject=subject if subject is not None else self.path,
            detail=self.detail,
        )


class GitError(TrustgateError):
    """git could not answer (not a repository, unknown revision, git missing)."""


class LedgerConflict(TrustgateError):
    """Different content was offered under an artifact id the ledger already holds."""


class ArtifactIntegrityError(TrustgateError):
    """An artifact's id or content hash does not match its own fields."""


class LedgerTampered(ArtifactIntegrityError):
    """A stored artifact row does not match its own integrity data (its excerpt, id or
    seal): someone edited the database. Finding code ``ledger_tampered``."""

    def __init__(self, message: str) -> None:
        super().__init__(f"ledger_tampered: {message}")
        self.reason = message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason,))


class VerdictError(TrustgateError):
    """A model verifier's verdict is not exactly one well-formed, agreeing object."""


class JudgeError(VerdictError):
    """A sentence judge failed twice on one batch: no answer (it raised, or timed out)
    or an answer that is not exactly the strict JSON asked for.

    A draft check that meets it halts the crossing, finding code ``judge_failed``: a
    judge that cannot be read is an inspection that did not happen, never a pass.
    ``judge`` names the judge, ``calls`` counts the calls made in the check so far.
    """

    finding_code = "judge_failed"

    def __init__(self, message: str, judge: str = "", calls: int = 0) -> None:
        super().__init__(message)
        self.judge = judge
        self.calls = calls

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.judge, self.calls))


class ReviewSealError(TrustgateError):
    """What a gate sealed while a person decided (the node's held output, its verifier
    results) cannot be opened; it is never decoded or unpickled. One of the two below."""


class ReviewSealTampered(ReviewSealError):
    """The sealed value's tag does not fit it: the checkpoint row was edited, forged or
    truncated (or written by a version of trustgate that did not seal it)."""


class ReviewKeyMismatch(ReviewSealError, ConfigurationError):
    """The value was sealed under another key: by another process under its random
    per-process key (no key configured), or by a worker with a different key. Every
    worker that may resume a review needs the same ``TRUSTGATE_REVIEW_KEY`` (or
    ``TRUSTGATE_REVIEW_KEY_FILE``)."""


class LangGraphCompatibilityError(TrustgateError):
    """LangGraph internals trustgate relies on are not what this version expects."""


def _declaration(part: str) -> str:
    """``messages[2].text`` → ``messages.text``; ``messages[2].tool_calls[0]`` →
    ``messages.tool_calls``; ``notes@1`` → ``notes``; ``send[0]`` → ``send``."""
    key, sep, rest = part.partition("[")
    if not sep:
        head, dot, facet = part.partition(".")
        base = head.partition("@")[0]
        return f"{base}.{facet.partition('@')[0]}" if dot else base
    facet = rest.partition("]")[2].lstrip(".").partition("[")[0]
    return f"{key}.{facet}" if facet and key != "send" else key


class GateHalted(TrustgateOutcome):
    """A trust gate stopped the run: nothing it had not cleared was released.

    Carries the :class:`~trustgate.Report` of the halted crossing, which was
    persisted (state, stream) before the run stopped. The message names the failed
    checks by verifier and code only: it ends up in logs and in the error status of
    tracing backends, and finding messages may quote what the model claimed (they are
    in ``.report``).
    """

    def __init__(self, report: Report, message: str | None = None) -> None:
        codes = dict.fromkeys(f"{f.verifier}/{f.code}" for f in report.failed)
        reasons = "; ".join(codes) or ("verifier error" if report.error else "halted")
        # parts nobody verified are named with the one-line fix: a part name is where
        # the node wrote, never what it wrote
        held = sorted(
            {f.subject for f in report.failed if f.code == "unverified_output" and f.subject}
        )
        if held:
            fixes = sorted({_declaration(p) for p in held})
            reasons += (
                f" ({', '.join(held)}: read them in a gate or declare them: "
                f"TrustGate(..., passthrough={fixes!r}))"
            )
            if any(".tool_calls[" in p for p in held):
                reasons += (
                    "; to let calls of named tools through and verify the others: "
                    "ToolCallArgs(tools=[...], passthrough=['tool_name', ...])"
                )
        super().__init__(message or f"gate {report.gate!r} on {report.node!r} halted: {reasons}")
        self.report = report

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.report, str(self)))


class NodeErrorWithheld(TrustgateOutcome):
    """A guarded node raised an error whose text cannot be scrubbed, raised in its place.

    A node's error is output too (a parse failure quotes the raw model output), so a gate
    withholds its message, notes and chain unless it declares ``passthrough=["error"]``.
    Most errors keep their type with the text taken out; an error whose ``str()`` is
    computed from data it keeps inside (pydantic's ``ValidationError`` carries each
    ``input_value``, ``UnicodeDecodeError`` the undecodable bytes) cannot be emptied, so
    the node raises this instead, chained from nothing. ``error_type`` names the original
    type (``module.QualifiedName``), ``node`` the guarded node.
    """

    def __init__(self, node: str, error_type: str, message: str | None = None) -> None:
        super().__init__(
            message
            or f"{error_type} in guarded node {node!r}: message withheld, it may quote "
            "unverified model output (declare passthrough=['error'] to keep it)"
        )
        self.node = node
        self.error_type = error_type

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.node, self.error_type, str(self)))
