"""What of a crossing's content reaches telemetry: nothing, unless capture is on.

With capture off (the default) trustgate writes no model text, claim text, finding
message, reason or person's name anywhere: not in attributes, events, status
descriptions or exceptions. What it writes instead is content-free: counts, lengths,
kinds, field paths, verifier names and finding codes. A value's digest is written
only when a per-deployment key is configured (``TRUSTGATE_CONTENT_KEY``): an unkeyed
hash of a short value (``sha256("APPROVE")``) is recoverable by dictionary, a keyed
one is not without the key.

With capture on (``TRUSTGATE_CAPTURE_CONTENT=true`` or ``capture_content=True``) the
text goes in as well, truncated to ``TRUSTGATE_CONTENT_MAX_LENGTH`` characters; a
truncated JSON value is no longer JSON, so its mime type becomes ``text/plain``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "CONTENT_KEY_ENV",
    "CONTENT_MAX_LENGTH_ENV",
    "OVERRIDE_SPANS_ENV",
    "ContentPolicy",
    "content_policy",
    "env_flag",
]

logger = logging.getLogger(__name__)

CAPTURE_CONTENT_ENV = "TRUSTGATE_CAPTURE_CONTENT"
CONTENT_MAX_LENGTH_ENV = "TRUSTGATE_CONTENT_MAX_LENGTH"
CONTENT_KEY_ENV = "TRUSTGATE_CONTENT_KEY"
OVERRIDE_SPANS_ENV = "TRUSTGATE_OVERRIDE_SPANS"

DEFAULT_MAX_LENGTH = 4096
_TRUE = frozenset({"1", "true", "yes", "on"})
_MIN_KEY_BYTES = 16
_JSON = "application/json"
_TEXT = "text/plain"


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        logger.warning("%s=%r is not an integer; using %d", name, raw, default)
        return default
    return value if value > 0 else default


def serialise(value: Any) -> tuple[str, str]:
    """(text, mime type): strings as text, everything else as JSON."""
    if isinstance(value, str):
        return value, _TEXT
    try:
        return to_json(value, fallback=repr).decode("utf-8"), _JSON
    except Exception as exc:  # a value that cannot even be repr'd still gets a span
        logger.warning("telemetry could not serialise a %s: %s", type(value).__name__, exc)
        return f"<{type(value).__name__}>", _TEXT


@dataclass(frozen=True, slots=True)
class ContentPolicy:
    """Whether text is captured, how much, and the key for digests (``None``: none)."""

    capture: bool
    limit: int
    key: bytes | None

    def text(self, value: Any) -> tuple[str, str]:
        """Captured text and its mime type, truncated to the limit."""
        text, mime = serialise(value)
        if len(text) <= self.limit:
            return text, mime
        # a cut JSON document is not JSON any more
        return text[: self.limit] + f"…[truncated {len(text) - self.limit} chars]", _TEXT

    def digest(self, text: str) -> str | None:
        """``hmac-sha256:{key id}:{128-bit hex}``, or ``None`` without a key."""
        if self.key is None:
            return None
        mac = hmac.new(self.key, text.encode("utf-8", "surrogatepass"), hashlib.sha256)
        return f"hmac-sha256:{_key_id(self.key)}:{mac.hexdigest()[:32]}"

    def measure(self, value: Any) -> tuple[int, str | None, str | None]:
        """(length, keyed digest or None, captured text or None) of one value."""
        if value is None:
            return 0, None, None
        text, _mime = serialise(value)
        captured = self.text(value)[0] if self.capture else None
        return len(text), self.digest(text), captured


_key_ids: dict[bytes, str] = {}


def _key_id(key: bytes) -> str:
    """A short public fingerprint of the key, so digests made with another key are told
    apart (after a rotation); it reveals nothing about the key."""
    found = _key_ids.get(key)
    if found is None:
        found = hmac.new(key, b"trustgate content key id", hashlib.sha256).hexdigest()[:8]
        _key_ids[key] = found
    return found


def _env_key() -> bytes | None:
    raw = os.environ.get(CONTENT_KEY_ENV, "")
    if not raw:
        return None
    key = raw.encode("utf-8")
    if len(key) < _MIN_KEY_BYTES:
        logger.warning(
            "%s is shorter than %d bytes; digests stay off (use a random secret)",
            CONTENT_KEY_ENV,
            _MIN_KEY_BYTES,
        )
        return None
    return key


_policies: dict[tuple[Any, ...], ContentPolicy] = {}
_MAX_POLICIES = 64


def content_policy(
    capture: bool | None, limit: int | None, key: bytes | str | None = None
) -> ContentPolicy:
    """The policy for one crossing: arguments first, then the environment.

    The environment is read on every call (a change between two crossings applies to
    the second); what it says is parsed once per distinct set of values.
    """
    environ = os.environ
    raw_capture = environ.get(CAPTURE_CONTENT_ENV, "") if capture is None else None
    raw_key = environ.get(CONTENT_KEY_ENV, "") if key is None else None
    # the length is read only when content is captured (else it is not used)
    on = (raw_capture or "").strip().lower() in _TRUE if capture is None else bool(capture)
    raw_limit = environ.get(CONTENT_MAX_LENGTH_ENV, "") if limit is None and on else None
    held = bytes(key) if isinstance(key, (bytearray, memoryview)) else key  # hashable
    memo = (capture, limit, held, raw_capture, raw_limit, raw_key)
    found = _policies.get(memo)
    if found is not None:
        return found
    policy = _policy(capture, limit, key)
    if len(_policies) < _MAX_POLICIES:
        _policies[memo] = policy
    return policy


def _policy(capture: bool | None, limit: int | None, key: bytes | str | None) -> ContentPolicy:
    on = env_flag(CAPTURE_CONTENT_ENV) if capture is None else bool(capture)
    if limit is None:
        limit = _env_int(CONTENT_MAX_LENGTH_ENV, DEFAULT_MAX_LENGTH) if on else DEFAULT_MAX_LENGTH
    if key is None:
        k = _env_key()
    else:
        k = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        if len(k) < _MIN_KEY_BYTES:
            from trustgate._base_errors import ConfigurationError

            raise ConfigurationError(
                f"content_key must be at least {_MIN_KEY_BYTES} bytes (a random secret)"
            )
    return ContentPolicy(capture=on, limit=max(1, limit), key=k)
