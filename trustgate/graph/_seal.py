"""What a gate holds while a person decides, sealed: unreadable, and refused when edited.

A gate whose policies may pause for a review runs the node call and its verifier runs
as LangGraph durable tasks, so that after the resume the person decides on the very
output they saw. A task's result is reported by the ``tasks``/``debug`` stream modes
and ``astream_events`` and kept in the checkpoint (after a reject too), all before
anyone decided on it. So the result is sealed: encrypted and authenticated under a key
kept outside the checkpoint, with only a label and the key's fingerprint in the clear.

**Construction** (standard library only): two subkeys are derived from the key with
HMAC-SHA256 under distinct labels; the key stream is HMAC-SHA256(encryption key,
nonce ‖ counter) for a random 16-byte nonce per seal (counter mode); the tag is
HMAC-SHA256(MAC key, version ‖ key id ‖ nonce ‖ ciphertext), encrypt-then-MAC. On
unseal the tag is checked (constant time) before anything is decrypted, and only then
is the plaintext handed to the checkpoint serializer: a tampered row is refused
(:class:`~trustgate.errors.ReviewSealTampered`), never decoded or unpickled.

**The key** is configured like the evidence ledger's: ``TRUSTGATE_REVIEW_KEY`` (the key
itself) or ``TRUSTGATE_REVIEW_KEY_FILE`` (a file holding it, readable by the gate's user
only), at least 16 bytes; ``python -c "import secrets; print(secrets.token_hex(32))"``
makes a good one. Every worker that may resume a review needs the same key. Without
one, a random key is made per process (and a warning logged once): a review paused and
resumed in the same process works, a resume in another process is refused with
:class:`~trustgate.errors.ReviewKeyMismatch` saying how to configure the key. Seals
carry the key's fingerprint (never the key), so a seal made under another key is told
apart from a tampered one.

**Threat model.** Protects what is waiting from anyone who can read the streams or the
checkpoints, and the decision from anyone who can write the checkpoints, as long as
they do not hold the key. Does not hide how large the held output is, and does not
protect against a holder of the key (keep it out of the agent's reach, e.g. not in an
environment a tool subprocess inherits).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import logging
import os
import secrets
import stat
import threading
from collections.abc import Mapping
from typing import Any

from trustgate.errors import ConfigurationError, ReviewKeyMismatch, ReviewSealTampered

__all__ = ["KEY_ENV", "KEY_FILE_ENV", "LABEL", "is_sealed", "open_sealed", "seal"]

logger = logging.getLogger(__name__)

KEY_ENV = "TRUSTGATE_REVIEW_KEY"
KEY_FILE_ENV = "TRUSTGATE_REVIEW_KEY_FILE"
LABEL = "held for review"
_VERSION = 1
_MIN_KEY_BYTES = 16
_NONCE_BYTES = 16
_BLOCK = hashlib.sha256().digest_size
_ENC_LABEL = b"trustgate-review-seal-encrypt-v1"
_MAC_LABEL = b"trustgate-review-seal-mac-v1"
_ID_LABEL = b"trustgate-review-key-id-v1"
_TAG_LABEL = b"trustgate-review-seal-v1\x00"

_random_key: bytes | None = None
_random_lock = threading.Lock()


class _Keys:
    """The subkeys of one key, its public fingerprint, and whether it is the random
    per-process key."""

    __slots__ = ("enc", "key_id", "mac", "random")

    def __init__(self, key: bytes, random: bool) -> None:
        self.enc = hmac.new(key, _ENC_LABEL, hashlib.sha256).digest()
        self.mac = hmac.new(key, _MAC_LABEL, hashlib.sha256).digest()
        self.key_id = hmac.new(key, _ID_LABEL, hashlib.sha256).hexdigest()[:16]
        self.random = random


_warned = False


def _process_key(quiet: bool = False) -> bytes:
    global _random_key, _warned
    with _random_lock:
        if _random_key is None:
            _random_key = secrets.token_bytes(32)
        if not quiet and not _warned:
            _warned = True
            logger.warning(
                "no review key is configured (%s or %s): what a Review gate holds while "
                "a person decides is sealed under a random key of this process, so a "
                "review cannot be resumed by another process or after a restart",
                KEY_ENV,
                KEY_FILE_ENV,
            )
        return _random_key


def _keys(quiet: bool = False) -> _Keys:
    """The configured key (the environment, then the key file), else this process's
    random key. Read on every seal, so a rotated environment takes effect."""
    raw: bytes | str
    if os.environ.get(KEY_ENV):
        raw, origin = os.environ[KEY_ENV], KEY_ENV
    elif os.environ.get(KEY_FILE_ENV):
        path = os.environ[KEY_FILE_ENV]
        try:
            with open(path, "rb") as fh:
                raw = fh.read().strip()
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise ConfigurationError(
                f"cannot read the review key file {path!r} ({KEY_FILE_ENV}): {exc.strerror or exc}"
            ) from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            logger.warning("review key file %s is readable by other users", path)
        origin = KEY_FILE_ENV
    else:
        return _Keys(_process_key(quiet), random=True)
    key = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    if len(key) < _MIN_KEY_BYTES:
        raise ConfigurationError(
            f"the review key ({origin}) must be at least {_MIN_KEY_BYTES} bytes, got {len(key)}"
        )
    return _Keys(key, random=False)


@functools.lru_cache(maxsize=8)
def _pads(key: bytes) -> tuple[Any, Any]:
    """HMAC-SHA256's inner and outer hashes for ``key``, primed once (RFC 2104)."""
    block = hashlib.sha256().block_size
    if len(key) > block:
        key = hashlib.sha256(key).digest()
    key = key.ljust(block, b"\0")
    return (
        hashlib.sha256(bytes(b ^ 0x36 for b in key)),
        hashlib.sha256(bytes(b ^ 0x5C for b in key)),
    )


def _stream(key: bytes, nonce: bytes, size: int) -> bytes:
    """HMAC-SHA256(key, nonce ‖ counter) for counter 0, 1, ...: the same blocks
    ``hmac.new`` gives, each from copies of the primed hashes (an HMAC set up from the
    key for every 32 bytes cost about 1.6 µs a block, 50 µs per KB sealed)."""
    inner, outer = _pads(key)
    inner = inner.copy()
    inner.update(nonce)
    out = []
    for i in range((size + _BLOCK - 1) // _BLOCK):
        h = inner.copy()
        h.update(i.to_bytes(8, "big"))
        o = outer.copy()
        o.update(h.digest())
        out.append(o.digest())
    return b"".join(out)[:size]


@functools.lru_cache(maxsize=8)
def _given(key: bytes) -> _Keys:
    """The subkeys of a key a caller gave (derived once per key, not per seal)."""
    return _Keys(key, random=False)


def _xor(data: bytes, stream: bytes) -> bytes:
    if not data:
        return b""
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def _tag(keys: _Keys, nonce: bytes, ciphertext: bytes) -> bytes:
    head = _TAG_LABEL + _VERSION.to_bytes(2, "big") + keys.key_id.encode("ascii")
    return hmac.new(keys.mac, head + nonce + ciphertext, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def seal(
    kind: str, data: bytes, *, quiet: bool = False, key: bytes | None = None
) -> dict[str, Any]:
    """A serialized value (``kind``, ``data``: what ``dumps_typed`` returns) sealed.
    ``quiet``: no warning about the random per-process key. ``key``: seal under this
    key instead of the review key (a release kept beside its task for a delivery after
    a crash is sealed under a key derived from the ledger key the gate seals its reports
    under)."""
    keys = _keys(quiet) if key is None else _given(key)
    nonce = secrets.token_bytes(_NONCE_BYTES)
    plain = kind.encode("utf-8") + b"\x00" + data
    ciphertext = _xor(plain, _stream(keys.enc, nonce, len(plain)))
    return {
        "trustgate": LABEL,
        "v": _VERSION,
        "key_id": keys.key_id,
        "random_key": keys.random,
        "nonce": _b64(nonce),
        "sealed": _b64(ciphertext),
        "tag": _b64(_tag(keys, nonce, ciphertext)),
    }


def is_sealed(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("trustgate") == LABEL


def _field(sealed: Mapping[str, Any], name: str) -> bytes:
    raw = sealed.get(name)
    if not isinstance(raw, str):
        raise ReviewSealTampered(f"the value held for review has no {name!r}: it was not sealed")
    try:
        return base64.b64decode(raw.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ReviewSealTampered(
            f"the {name!r} of the value held for review is not base64: the checkpoint was edited"
        ) from None


def open_sealed(
    sealed: Any, node: str, *, quiet: bool = False, key: bytes | None = None
) -> tuple[str, bytes]:
    """``(kind, data)`` of a sealed value, after its tag was checked (``key``: as for
    :func:`seal`).

    Raises :class:`~trustgate.errors.ReviewKeyMismatch` for a value sealed under another
    key and :class:`~trustgate.errors.ReviewSealTampered` for anything that does not fit
    its tag."""
    if not is_sealed(sealed):
        raise ReviewSealTampered(
            f"the output node {node!r} held for review is not a sealed value "
            "(the checkpoint was edited, or written by a version that did not seal it)"
        )
    if sealed.get("v") != _VERSION:
        raise ReviewSealTampered(
            f"the output node {node!r} held for review has seal version "
            f"{sealed.get('v')!r}; this version opens {_VERSION}"
        )
    keys = _keys(quiet) if key is None else _given(key)
    key_id = sealed.get("key_id")
    if key_id != keys.key_id:
        if key is not None:
            raise ReviewKeyMismatch(
                f"what node {node!r} released was recorded under another key (key id "
                f"{key_id}, this process has {keys.key_id}): every worker sharing the "
                "database needs the same ledger key (TRUSTGATE_LEDGER_KEY or "
                "TRUSTGATE_LEDGER_KEY_FILE)"
            )
        raise ReviewKeyMismatch(_mismatch(node, sealed, keys))
    nonce, ciphertext = _field(sealed, "nonce"), _field(sealed, "sealed")
    tag = _field(sealed, "tag")
    if not hmac.compare_digest(tag, _tag(keys, nonce, ciphertext)):
        raise ReviewSealTampered(
            f"the output node {node!r} held for review does not match its seal: the "
            "checkpoint was edited; it is refused, not decoded"
        )
    plain = _xor(ciphertext, _stream(keys.enc, nonce, len(ciphertext)))
    kind, sep, data = plain.partition(b"\x00")
    if not sep:
        raise ReviewSealTampered(f"the output node {node!r} held for review is malformed")
    return kind.decode("utf-8"), data


def _mismatch(node: str, sealed: Mapping[str, Any], keys: _Keys) -> str:
    fix = (
        f"give every worker that may resume a review the same key ({KEY_ENV}, or "
        f"{KEY_FILE_ENV} naming a file that holds it; at least {_MIN_KEY_BYTES} bytes)"
    )
    if sealed.get("random_key"):
        return (
            f"the output node {node!r} held for review was sealed by another process under "
            f"its random key (no review key was configured there): {fix}"
        )
    if keys.random:
        return (
            f"the output node {node!r} held for review was sealed under a configured key "
            f"(key id {sealed.get('key_id')}), and this process has none: {fix}"
        )
    return (
        f"the output node {node!r} held for review was sealed under another key (key id "
        f"{sealed.get('key_id')}, this process has {keys.key_id}): {fix}"
    )
