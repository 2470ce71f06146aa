"""Halt: fail closed."""

from __future__ import annotations

from trustgate.policies._decision import CrossingView, Stop, reasons

__all__ = ["Halt"]


class Halt:
    """Fail closed: release nothing, keep the report, stop the run (``GateHalted``).

    Example:
        ```python
        TrustGate("manifest", reads="manifest", verifiers=[...], policy=Halt())
        ```
    """

    def decide(self, crossing: CrossingView) -> Stop | None:
        failed = crossing.unresolved
        return Stop(reasons(failed)) if failed else None

    def __repr__(self) -> str:
        return "Halt()"
