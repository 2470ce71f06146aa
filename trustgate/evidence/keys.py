"""The key that seals stored rows (artifact ledger and report log), and where it comes from.

Why a key outside the database: whoever can write the database can edit a row and
recompute any hash, so a row is only vouched for when it carries an HMAC under a key
the database does not hold. Every process sharing a database must use the same key,
which is why a database other processes or a restart will read (PostgreSQL, any
SQLite *file*) refuses to run without a configured one: a key made up per process
would leave every other worker, and the next start, seeing each row as unverified.

Where the key comes from, in order:

1. the ``key=`` argument (bytes or text, at least 16 bytes), or :data:`EPHEMERAL_KEY`
   for a random key that lives as long as the object (one process, no restart);
2. ``TRUSTGATE_LEDGER_KEY``: the key itself;
3. ``TRUSTGATE_LEDGER_KEY_FILE``: a file holding it. The file must not be readable or
   writable by group or others (``chmod 600``); such a file is refused unless
   ``allow_readable_key_file=True`` or ``TRUSTGATE_LEDGER_KEY_FILE_ALLOW_READABLE=1``
   says that is intended (then it is used with a warning).

In-memory stores (``InMemoryLedger``, ``InMemoryReportHistory``, a ``:memory:`` SQLite
ledger) live no longer than their process, so without a key they take a random one.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Final, TypeAlias

from trustgate._base_errors import LedgerKeyError

__all__ = [
    "EPHEMERAL_KEY",
    "KEY_ENV",
    "KEY_FILE_ALLOW_READABLE_ENV",
    "KEY_FILE_ENV",
    "EphemeralKey",
    "KeyArg",
    "SealKey",
    "resolve_key",
]

logger = logging.getLogger(__name__)

KEY_ENV: Final = "TRUSTGATE_LEDGER_KEY"
KEY_FILE_ENV: Final = "TRUSTGATE_LEDGER_KEY_FILE"
KEY_FILE_ALLOW_READABLE_ENV: Final = "TRUSTGATE_LEDGER_KEY_FILE_ALLOW_READABLE"
MIN_KEY_BYTES: Final = 16
_MAX_KEY_FILE_BYTES = 64 * 1024
_KEY_ID_CONTEXT = b"trustgate-ledger-key-id-v1"
_GROUP_OTHER = stat.S_IRGRP | stat.S_IWGRP | stat.S_IROTH | stat.S_IWOTH
_MAKE_ONE = 'python -c "import secrets; print(secrets.token_hex(32))"'


class EphemeralKey:
    """The type of :data:`EPHEMERAL_KEY`: "seal under a random key for this object only"."""

    _instance: EphemeralKey | None = None

    def __new__(cls) -> EphemeralKey:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "EPHEMERAL_KEY"


EPHEMERAL_KEY: Final = EphemeralKey()
"""Pass as ``key=`` to seal under a random key that dies with the object: a single
process that is never restarted (a test, a notebook). Rows it sealed read as
unverified/unsealed everywhere else."""


@dataclass(frozen=True, slots=True)
class SealKey:
    """A resolved key: the secret, its public fingerprint, and where it came from."""

    secret: bytes
    origin: str

    @property
    def key_id(self) -> str:
        """A fingerprint of the key (never the key), stored beside each seal."""
        return hmac.new(self.secret, _KEY_ID_CONTEXT, hashlib.sha256).hexdigest()[:16]

    def mac(self, context: bytes, payload: bytes) -> str:
        return hmac.new(self.secret, context + payload, hashlib.sha256).hexdigest()

    def __repr__(self) -> str:  # never the secret
        return f"SealKey(key_id={self.key_id!r}, origin={self.origin!r})"


KeyArg: TypeAlias = bytes | str | EphemeralKey | SealKey | None
"""What a ``key=`` argument takes: the key, :data:`EPHEMERAL_KEY`, a resolved
:class:`SealKey`, or ``None`` (the environment)."""


def _how_to_set() -> str:
    return (
        f"set {KEY_ENV} to a secret of {MIN_KEY_BYTES}+ bytes, or {KEY_FILE_ENV} to a file "
        f"holding one (chmod 600), or pass key=...; every process sharing the database "
        f"needs the same key (make one with: {_MAKE_ONE})"
    )


def _flag_set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _read_key_file(path: str, allow_readable: bool) -> bytes:
    """The key in ``path``; refused when group or others may read or write the file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise LedgerKeyError(
            f"cannot read the ledger key file {path!r} ({KEY_FILE_ENV}): {exc.strerror or exc}"
        ) from None
    try:
        info = os.fstat(fd)  # the file actually opened, not whatever the path names later
        if not stat.S_ISREG(info.st_mode):
            raise LedgerKeyError(f"the ledger key file {path!r} ({KEY_FILE_ENV}) is not a file")
        mode = stat.S_IMODE(info.st_mode)
        if mode & _GROUP_OTHER:
            if not (allow_readable or _flag_set(KEY_FILE_ALLOW_READABLE_ENV)):
                raise LedgerKeyError(
                    f"the ledger key file {path!r} ({KEY_FILE_ENV}) is readable or writable "
                    f"by group or others (mode {mode:04o}): run `chmod 600 {path}`, or set "
                    f"{KEY_FILE_ALLOW_READABLE_ENV}=1 (allow_readable_key_file=True) if "
                    "that is intended"
                )
            logger.warning(
                "ledger key file %s is readable or writable by group or others (mode %04o); "
                "accepted because %s / allow_readable_key_file says so",
                path,
                mode,
                KEY_FILE_ALLOW_READABLE_ENV,
            )
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(_MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise LedgerKeyError(
            f"cannot read the ledger key file {path!r} ({KEY_FILE_ENV}): {exc.strerror or exc}"
        ) from None
    finally:
        os.close(fd)
    if len(data) > _MAX_KEY_FILE_BYTES:
        raise LedgerKeyError(f"the ledger key file {path!r} is larger than a key can be")
    return data.strip()


def resolve_key(
    key: KeyArg = None,
    *,
    required_for: str | None = None,
    allow_readable_key_file: bool = False,
) -> SealKey:
    """The key to seal under: the argument, else the environment, else (only when
    ``required_for`` is ``None``) a random one.

    ``required_for`` names the database that other processes or a restart will read
    (``"the SQLite database 'x.db'"``): without a configured key that is a
    :class:`~trustgate.errors.LedgerKeyError` saying how to set one.
    """
    if isinstance(key, SealKey):
        return key
    if isinstance(key, EphemeralKey):
        return SealKey(secrets.token_bytes(32), "ephemeral")
    origin = "argument"
    raw: bytes
    if key is not None:
        if not isinstance(key, (bytes, bytearray, memoryview, str)):
            raise LedgerKeyError(f"the ledger key must be bytes or text, not {type(key).__name__}")
        raw = key.encode("utf-8", "surrogateescape") if isinstance(key, str) else bytes(key)
    elif os.environ.get(KEY_ENV):
        raw, origin = os.environ[KEY_ENV].encode("utf-8", "surrogateescape"), KEY_ENV
    elif os.environ.get(KEY_FILE_ENV):
        raw = _read_key_file(os.environ[KEY_FILE_ENV], allow_readable_key_file)
        origin = KEY_FILE_ENV
    elif required_for is None:
        return SealKey(secrets.token_bytes(32), "random")
    else:
        raise LedgerKeyError(
            f"no ledger key configured for {required_for}, which other processes and "
            f"restarts read: {_how_to_set()}; for one short-lived process pass "
            "key=EPHEMERAL_KEY"
        )
    if len(raw) < MIN_KEY_BYTES:
        raise LedgerKeyError(
            f"the ledger key ({origin}) must be at least {MIN_KEY_BYTES} bytes, got {len(raw)}"
        )
    return SealKey(raw, origin)
