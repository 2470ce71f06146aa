"""Reports come only from gates: the seal a gate puts on every report it writes.

Why: ``trust_reports`` is an ordinary state key. Any node can return a value for it,
and when the schema declares it so can the caller's input (a deployed graph takes its
input from clients); the report log fills itself from what the checkpoints hold. A
report saying ``pass`` is worth something only if a gate wrote it. So the gate seals
each report it writes (an HMAC-SHA256 over the report's canonical JSON, under the
ledger key of :mod:`trustgate.evidence.keys`), and everything that takes reports in
checks the seal:

* the ``trust_reports`` channel refuses a write whose seal does not hold (a report from
  another node, from the input, from ``update_state``, an ``Overwrite`` of the log);
* :func:`trustgate.reports` returns only sealed reports and lists the others in its
  result's ``refused``;
* the report log records only sealed reports.

The key is the configured ledger key (``TRUSTGATE_LEDGER_KEY`` or
``TRUSTGATE_LEDGER_KEY_FILE``); else the key this process gave a database explicitly
(``connect(url, key=...)``: every worker that opens that database holds it, so it is
the key they share); else a random key of this process. A
random key cannot vouch for another process's reports: a thread read after a restart
or resumed by another worker needs the configured key, and the reports it cannot
verify are listed as refused (``unsealed``, "sealed under another key") with a
warning that says so, never shown as crossings.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from trustgate.evidence.keys import KEY_ENV, KEY_FILE_ENV, SealKey, resolve_key

__all__ = ["SEAL_FIELD", "SealStatus", "adopt", "check", "report_key", "seal"]

logger = logging.getLogger(__name__)

SEAL_FIELD = "seal"
_CONTEXT = b"trustgate-gate-report-v1\x00"

SealStatus: TypeAlias = Literal["sealed", "unsealed", "forged", "unreadable"]

_keys: dict[tuple[str | None, str | None], SealKey] = {}
_keys_lock = threading.Lock()
_adopted: list[SealKey] = []  # keys given to databases explicitly, first one first
_earlier: dict[str, SealKey] = {}  # the random key a process sealed under before it adopted


def adopt(key: SealKey) -> None:
    """``key`` was given to a database explicitly (``connect(url, key=...)``): with no
    ledger key in the environment, gates seal under it from now on, so the workers that
    share the database verify each other's reports. A second, different key given to
    another database does not replace the first (one process, one report key), and
    says so."""
    if key.origin != "argument":
        return
    with _keys_lock:
        if not _adopted:
            _adopted.append(key)
            earlier = _keys.pop((None, None), None)
            if earlier is not None and earlier.origin == "random":
                _earlier[earlier.key_id] = earlier
        elif _adopted[0].key_id != key.key_id:
            logger.warning(
                "a second database key was given in this process: reports stay sealed "
                "under the first (key id %s); set %s to choose one for every database",
                _adopted[0].key_id,
                KEY_ENV,
            )


_ENVIRON = os.environ
_RAW: Any = getattr(_ENVIRON, "_data", None)
_ENCODE: Any = getattr(_ENVIRON, "encodekey", None)
_DECODE: Any = getattr(_ENVIRON, "decodevalue", None)
_RAW_KEYS = {name: _ENCODE(name) for name in (KEY_ENV, KEY_FILE_ENV)} if _ENCODE is not None else {}


def _setting(name: str) -> str | None:
    """``os.environ.get(name)`` for the two key settings, read every time (a test or
    a supervisor may set them at any moment) without the two exceptions a missing
    name costs through the mapping: every report is sealed, and admitted, under it."""
    if os.environ is _ENVIRON and isinstance(_RAW, dict) and _DECODE is not None:
        raw = _RAW.get(_RAW_KEYS[name])
        return None if raw is None else str(_DECODE(raw))
    return os.environ.get(name)


def report_key() -> SealKey:
    """The key gates seal under: the configured ledger key, else one random key for
    this process (kept, so every gate and reader of the process agrees)."""
    where = (_setting(KEY_ENV) or None, _setting(KEY_FILE_ENV) or None)
    key = _keys.get(where)
    if key is None:
        with _keys_lock:
            key = _keys.get(where)
            if key is None:
                key = _adopted[0] if where == (None, None) and _adopted else resolve_key(None)
                if key.origin == "random":
                    logger.info(
                        "no ledger key configured: reports are sealed under a key of this "
                        "process only (set %s so other workers and restarts can verify them)",
                        KEY_ENV,
                    )
                _keys[where] = key
    return key


# json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr),
# with its encoder made once
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
# the same bytes, without the check for cycles: for forms the gate built itself (fresh,
# acyclic trees of plain JSON values, see trustgate._report_json)
_BUILT_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr, check_circular=False
)


def _canonical(body: Mapping[str, Any]) -> bytes:
    unsealed = {k: v for k, v in body.items() if k != SEAL_FIELD}
    return _ENCODER.encode(unsealed).encode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=16)
def key_id(key: SealKey) -> str:
    """``key.key_id``, computed once per key (an HMAC of its own)."""
    return key.key_id


@functools.lru_cache(maxsize=16)
def _pads(key: SealKey) -> tuple[hashlib._Hash, hashlib._Hash]:
    """The key's HMAC-SHA256 inner and outer hashes, primed once (RFC 2104): each MAC
    then copies them instead of setting up an HMAC from the key again."""
    secret = key.secret
    if len(secret) > hashlib.sha256().block_size:
        secret = hashlib.sha256(secret).digest()
    secret = secret.ljust(hashlib.sha256().block_size, b"\0")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in secret))
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in secret))
    inner.update(_CONTEXT)
    return inner, outer


def _mac(key: SealKey, payload: bytes) -> str:
    """``key.mac(_CONTEXT, payload)``: HMAC-SHA256 of the context and ``payload``."""
    inner, outer = _pads(key)
    h = inner.copy()
    h.update(payload)
    o = outer.copy()
    o.update(h.digest())
    return o.hexdigest()


def seal(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` (a report's JSON form) with the gate's seal set, in place."""
    key = report_key()
    body[SEAL_FIELD] = f"{key_id(key)}:{_mac(key, _canonical(body))}"
    return body


def seal_built(body: dict[str, Any]) -> dict[str, Any]:
    """:func:`seal` for a form the gate built by hand (:mod:`trustgate._report_json`:
    plain JSON values, no cycles) that has no seal field yet: the canonical bytes are
    the same (the seal field is left out of them either way); the seal goes last, where
    the model's dump puts it."""
    if SEAL_FIELD in body:
        return seal(body)
    key = report_key()
    payload = _BUILT_ENCODER.encode(body).encode("utf-8", "surrogatepass")
    body[SEAL_FIELD] = f"{key_id(key)}:{_mac(key, payload)}"
    return body


def check(body: Any) -> tuple[SealStatus, str | None]:
    """Whether a gate of this deployment wrote ``body`` (a report's JSON form), and if
    not, why not."""
    if not isinstance(body, Mapping):
        return "unreadable", f"a {type(body).__name__} where a report belongs"
    given = body.get(SEAL_FIELD)
    if not isinstance(given, str) or not given:
        return "unsealed", "it carries no gate seal: no gate wrote it"
    given_id, _, mac = given.partition(":")
    key = report_key()
    if given_id != key_id(key):  # this process's own, sealed before it adopted a key
        key = _earlier.get(given_id, key)
    if given_id != key_id(key):
        return "unsealed", (
            f"it is sealed under another key (key id {given_id!r}): written by a process "
            f"with another ledger key, or by none (configure {KEY_ENV} for every worker)"
        )
    try:
        payload = _canonical(body)
    except (TypeError, ValueError) as exc:
        return "unreadable", f"it cannot be read as a report: {exc}"
    if not hmac.compare_digest(mac, _mac(key, payload)):
        return "forged", "it does not match its seal: edited after a gate wrote it"
    return "sealed", None
