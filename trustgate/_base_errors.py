"""The base of the error tree: its two roots, and the configuration errors that the
modules under the report raise (the seal key, the telemetry content policy).

They sit below everything, :class:`~trustgate.Report` included, so that the key a
report is sealed with can fail with a typed error while :mod:`trustgate.errors`,
where users import every error, still names the report a halt carries.
"""

from __future__ import annotations

__all__ = ["ConfigurationError", "LedgerKeyError", "TrustgateError", "TrustgateOutcome"]


class TrustgateError(Exception):
    """Root of every usage error trustgate raises deliberately (bad setup, bad input),
    and of :class:`~trustgate.errors.DatabaseUnavailable` (a dependency that did not
    answer in time).

    A halt is not one of them: see :class:`TrustgateOutcome`.
    """


class TrustgateOutcome(Exception):
    """Root of what a gate *decided* and raises: :class:`~trustgate.errors.GateHalted`,
    and :class:`~trustgate.errors.NodeErrorWithheld` in place of a guarded node's error
    it could not scrub.

    Deliberately not a :class:`TrustgateError`: catching usage errors must never
    swallow a halt, and a halt is never reported as bad input.
    """


class ConfigurationError(TrustgateError):
    """The library was set up wrongly (bad argument, missing evidence source)."""


class LedgerKeyError(ConfigurationError):
    """No usable key to seal or verify stored rows: none configured for a database other
    processes read, a key file others can read, a key too short. The message says how
    to set one (``TRUSTGATE_LEDGER_KEY``, ``TRUSTGATE_LEDGER_KEY_FILE`` or ``key=``)."""
