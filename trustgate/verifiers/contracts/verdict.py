"""Strict parsing of a model verifier's verdict.

The verdict is the one machine-readable thing a model verifier produces, and the one
place a model's word could open a gate. So it is read as strictly as a protocol
message: exactly one JSON object ``{"pass": <bool>, "issues": [...]}`` with
``pass`` true exactly when ``issues`` is empty. Anything else raises
:class:`~trustgate.errors.VerdictError`; nothing that fails to parse is ever a pass
("a verdict that cannot be parsed throws, never passes").

Decisions, each on the side of failing closed:

* Only whitespace may surround the object. A verdict inside a ```json fence, or
  after a sentence of prose, is refused: the model was told to answer with the
  object alone, and a model that wraps it has not followed the protocol (the gate's
  policy decides whether to retry; the parser never guesses).
* Unknown top-level keys are refused (``"reasoning"``, ``"passed"``, ``"verdict"``...):
  a second, possibly contradictory signal is not silently dropped.
* Duplicate keys are refused (``{"pass": true, "pass": false}`` has no meaning), as
  are ``NaN``/``Infinity``, non-``bool`` ``pass`` (``"true"``, ``1``) and a
  non-list ``issues``.
* ``pass: false`` with no issues is refused too: a fail must say what to fix, or the
  re-render has nothing to work with.
* An issue is a non-blank string or an object with a non-blank ``"message"``
  (other fields kept as ``detail``, a string ``"code"`` lifted out); both are
  normalised to :class:`VerdictIssue`. In a ``pass: false`` verdict an object
  without a usable ``"message"`` (or with a non-string ``"code"``) still counts: the
  model said fail, failing is the safe reading, and the whole object is kept as the
  issue (its compact JSON as the message, the object as ``detail``). A pass stays
  strict: it must list no issues at all.
* Input must be ``str`` of at most :data:`MAX_VERDICT_CHARS` characters.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustgate._findings import Finding
from trustgate.errors import VerdictError

__all__ = ["MAX_VERDICT_CHARS", "Verdict", "VerdictIssue", "parse_verdict", "read_object"]

MAX_VERDICT_CHARS = 1_000_000
"""A verdict is a short object; a megabyte of it is a runaway model, not a verdict."""

_WS = " \t\r\n"  # JSON whitespace only: a stray BOM or NBSP is not "around" the object


class VerdictIssue(BaseModel):
    """One issue a model verifier raised, normalised from a string or an object."""

    model_config = ConfigDict(frozen=True)

    message: str
    code: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class Verdict(BaseModel):
    """A parsed, self-consistent verdict: ``passed`` is true exactly when ``issues`` is empty.

    Construct it with :func:`parse_verdict`; building one by hand is validated the same
    way (a pass with issues, or a fail without, is refused).
    """

    model_config = ConfigDict(frozen=True)

    passed: bool
    issues: tuple[VerdictIssue, ...] = ()

    @field_validator("issues", mode="before")
    @classmethod
    def _strings_are_messages(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [VerdictIssue(message=v) if isinstance(v, str) else v for v in value]
        return value

    @property
    def messages(self) -> list[str]:
        """The issue messages alone, e.g. for the re-render prompt."""
        return [issue.message for issue in self.issues]

    def model_post_init(self, context: Any, /) -> None:
        if self.passed == bool(self.issues):
            _fail(
                "verdict disagrees with itself: pass is "
                f"{str(self.passed).lower()} but there are {len(self.issues)} issue(s)"
            )

    def findings(self, verifier: str = "model_verifier") -> list[Finding]:
        """The verdict as findings: one pass, or one ``verdict_issue`` failure per issue."""
        if self.passed:
            return [Finding.ok(verifier, "model verifier found no contract violation")]
        return [
            Finding.failed(
                verifier,
                "verdict_issue",
                issue.message,
                detail={"code": issue.code, **issue.detail} if issue.code else dict(issue.detail),
            )
            for issue in self.issues
        ]


def _fail(message: str) -> NoReturn:
    raise VerdictError(message)


def _preview(text: str, limit: int = 60) -> str:
    one_line = " ".join(text.split())
    return repr(one_line[:limit] + ("..." if len(one_line) > limit else ""))


def _no_duplicates(what: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                _fail(f"{what} repeats the key {key!r}; a duplicated key has no single meaning")
            obj[key] = value
        return obj

    return hook


def _no_constants(what: str) -> Any:
    def hook(name: str) -> NoReturn:
        _fail(f"{what} contains {name}, which is not JSON")

    return hook


def _finite_float(what: str) -> Any:
    def hook(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            _fail(f"{what} contains the number {text}, which overflows")
        return value

    return hook


@functools.cache
def _decoder(what: str) -> json.JSONDecoder:
    return json.JSONDecoder(
        object_pairs_hook=_no_duplicates(what),
        parse_constant=_no_constants(what),
        parse_float=_finite_float(what),
    )


def read_object(
    raw: Any, *, what: str = "verdict", limit: int = MAX_VERDICT_CHARS
) -> dict[str, Any]:
    """Read ``raw`` as exactly one JSON object, with only whitespace around it.

    The protocol envelope every model answer trustgate acts on shares (the model
    verifier's verdict, the sentence judge's answer): text of at most ``limit``
    characters, no code fence, no prose before or after, no second value, no
    duplicate key, no ``NaN``/``Infinity``, no number that overflows. Anything else
    raises :class:`~trustgate.errors.VerdictError`, naming ``what`` was read.
    """
    if not isinstance(raw, str):
        _fail(f"{what} must be text (str), got {type(raw).__name__}")
    if len(raw) > limit:
        _fail(f"{what} is {len(raw)} characters; the limit is {limit}")
    text = raw.strip(_WS)
    if not text:
        _fail(f"{what} is empty")
    if text.startswith("```") or text.startswith("~~~"):
        _fail(f"{what} is wrapped in a code fence; the reply must be the bare JSON object")
    if not text.startswith("{"):
        _fail(f"{what} does not start with a JSON object (starts {_preview(text)})")
    try:
        obj, end = _decoder(what).raw_decode(text)
    except VerdictError:
        raise
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text) or exc.msg.startswith("Unterminated")
        kind = "truncated" if cut else "malformed"
        _fail(f"{what} is not valid JSON ({kind}: {exc.msg} at char {exc.pos})")
    except RecursionError:
        _fail(f"{what} nests too deeply to be read")
    except (ValueError, OverflowError) as exc:
        _fail(f"{what} is not valid JSON ({exc})")
    rest = text[end:].strip(_WS)
    if rest:
        kind = "a second JSON value" if rest[:1] in "{[" else "trailing text"
        _fail(f"{what} has {kind} after the object (starts {_preview(rest)})")
    if not isinstance(obj, dict):  # pragma: no cover - text starts with "{"
        _fail(f"{what} is not a JSON object")
    return obj


_ISSUE_PREVIEW = 500


def _object_issue(raw: dict[str, Any]) -> VerdictIssue:
    """An issue object the model shaped its own way, kept whole (fail is safe)."""
    text = json.dumps(raw, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    if len(text) > _ISSUE_PREVIEW:
        text = text[: _ISSUE_PREVIEW - 1] + "…"
    return VerdictIssue(message=text, detail=dict(raw))


def _issue(index: int, raw: Any, failing: bool = False) -> VerdictIssue:
    if isinstance(raw, str):
        if not raw.strip():
            _fail(f"issue {index} is blank")
        return VerdictIssue(message=raw.strip())
    if isinstance(raw, dict):
        message = raw.get("message")
        code = raw.get("code")
        if not isinstance(message, str) or not message.strip():
            if failing and raw:
                return _object_issue(raw)
            _fail(f'issue {index} is an object without a non-blank string "message"')
        if code is not None and not isinstance(code, str):
            if failing:
                return _object_issue(raw)
            _fail(f'issue {index} has a non-string "code"')
        detail = {k: v for k, v in raw.items() if k not in ("message", "code")}
        return VerdictIssue(message=message.strip(), code=code, detail=detail)
    _fail(f"issue {index} is {type(raw).__name__}; an issue is a string or an object")


def parse_verdict(raw: str) -> Verdict:
    """Parse a model verifier's reply into a :class:`Verdict`, or raise ``VerdictError``.

    Never returns a pass for anything but exactly ``{"pass": true, "issues": []}``
    (whitespace and key order aside).

    Example:
        ```python
        from trustgate.errors import VerdictError
        from trustgate.contracts import parse_verdict

        assert parse_verdict('{"pass": false, "issues": ["cites clause 9.2"]}').passed is False
        try:
            parse_verdict('Looks good! {"pass": true, "issues": []}')
        except VerdictError as exc:
            print(exc)  # prose around the object is refused
        ```
    """
    obj = read_object(raw)
    keys = set(obj)
    missing = {"pass", "issues"} - keys
    if missing:
        _fail(f"verdict lacks {', '.join(repr(k) for k in sorted(missing))}")
    extra = keys - {"pass", "issues"}
    if extra:
        _fail(f"verdict has unknown key(s) {', '.join(repr(k) for k in sorted(extra))}")
    passed = obj["pass"]
    if not isinstance(passed, bool):
        _fail(f'"pass" must be true or false, got {type(passed).__name__} {passed!r}')
    issues_raw = obj["issues"]
    if not isinstance(issues_raw, list):
        _fail(f'"issues" must be a list, got {type(issues_raw).__name__}')
    issues = tuple(_issue(i, item, failing=not passed) for i, item in enumerate(issues_raw))
    if passed and issues:
        _fail(f"verdict says pass but lists {len(issues)} issue(s); a pass must have none")
    if not passed and not issues:
        _fail("verdict says fail but lists no issues; a fail must say what is wrong")
    return Verdict(passed=passed, issues=issues)
