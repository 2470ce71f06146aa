"""Rerender: send the producer back once with every issue, then decide again."""

from __future__ import annotations

from collections.abc import Sequence

from trustgate._findings import Finding
from trustgate._report import OverrideRecord
from trustgate.errors import ConfigurationError
from trustgate.policies._decision import (
    CrossingView,
    DecisionValue,
    Policy,
    reasons,
)
from trustgate.policies._decision import (
    Rerender as RerenderDecision,
)
from trustgate.policies.caveat import Caveat

__all__ = ["Rerender"]


class Rerender:
    """Run the guarded node again, in the same step, with every issue in its input.

    The issues go into the node's input under ``issues_key`` (the node reads them from
    its state) and, with ``as_message``, as a human message appended to
    ``messages_key``, so the producer's next model input contains every issue. The
    second answer is verified like the first; after ``max_attempts`` re-renders the
    next failure goes to ``then`` (default :class:`Caveat`). Nothing of a failed
    attempt is released: not its state writes, not its streamed tokens.

    ``to`` is accepted for older code and must name the guarded node itself.

    Example:
        ```python
        Rerender(max_attempts=1, then=Caveat(field="draft"))
        ```
    """

    def __init__(
        self,
        to: str | None = None,
        *,
        max_attempts: int = 1,
        then: Policy | None = None,
        issues_key: str | None = "trust_issues",
        as_message: bool = False,
        messages_key: str = "messages",
    ) -> None:
        from trustgate import _validate

        _validate.count("Rerender", "max_attempts", max_attempts)
        if to is not None:
            _validate.text("Rerender", "to", to)
        if issues_key is not None:
            _validate.text("Rerender", "issues_key", issues_key)
        _validate.text("Rerender", "messages_key", messages_key)
        if not isinstance(as_message, bool):
            raise ConfigurationError("Rerender: as_message must be True or False")
        if then is not None:
            _validate.not_a_class("Rerender", "then", then, "a policy")
            if not callable(getattr(then, "decide", None)):
                raise ConfigurationError(f"Rerender: then must be a policy, not {then!r}")
        if issues_key is None and not as_message:
            raise ConfigurationError(
                "Rerender needs issues_key or as_message, or the producer never sees the issues"
            )
        self.to = to
        self.max_attempts = max_attempts
        self.then: Policy = then if then is not None else Caveat()
        self.issues_key = issues_key
        self.as_message = as_message
        self.messages_key = messages_key

    @staticmethod
    def issues(findings: Sequence[Finding]) -> list[str]:
        return [
            f"{f.verifier}/{f.code}: {f.message}" + (f" [{f.subject}]" if f.subject else "")
            for f in findings
        ]

    def decide(self, crossing: CrossingView) -> DecisionValue | None:
        failed = crossing.unresolved
        if not failed:
            return None
        if crossing.attempt > self.max_attempts:
            return self.then.decide(crossing)
        issues = tuple(self.issues(failed))
        record = OverrideRecord(
            kind="rerender",
            target=crossing.node,
            after=list(issues),
            reason=reasons(failed),
        )
        return RerenderDecision(
            issues,
            issues_key=self.issues_key,
            as_message=self.as_message,
            messages_key=self.messages_key,
            records=(record,),
        )

    def __repr__(self) -> str:
        return f"Rerender(max_attempts={self.max_attempts}, then={self.then!r})"
