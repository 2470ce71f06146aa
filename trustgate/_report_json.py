"""A report's JSON form, built by hand for the reports gates build.

Why: every crossing seals its report over the report's JSON form
(``Report.model_dump(mode="json", fallback=repr)``). Inside a graph that dump runs
cold (the serializer's code and tables were evicted by everything LangGraph ran since
the last crossing) and costs several times what it costs in a loop. The reports a gate
builds have a fixed shape: strings, numbers, UTC timestamps, findings without
proposals and plain JSON values in ``claims``, ``detail`` and the overrides. For those,
:func:`json_form` builds the very same dict in plain Python; for anything else (a
proposal, a subclass, a float that is not finite, a key that is not a string, a value
of another type) it returns ``None`` and the caller dumps the model as before. A test
pins the two forms equal over reports of every shape.
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from trustgate._findings import Finding

__all__ = ["FORM_FIELDS", "bind", "json_form"]

logger = logging.getLogger(__name__)

_MAX_DEPTH = 64


class _Slow(Exception):
    """The value is not of the shape built by hand: dump it with pydantic."""


def _plain(value: Any, depth: int = 0) -> Any:
    """A copy of a plain JSON value (what ``mode="json"`` makes of it), or ``_Slow``."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _Slow
    if depth > _MAX_DEPTH:
        raise _Slow
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _Slow
            out[k] = _plain(v, depth + 1)
        return out
    if kind is list or kind is tuple:
        return [_plain(v, depth + 1) for v in value]
    raise _Slow


def _when(value: Any) -> str:
    if type(value) is not datetime or value.tzinfo is not UTC:
        raise _Slow
    text = value.isoformat()
    if not text.endswith("+00:00"):
        raise _Slow
    return text[:-6] + "Z"


def _text(value: Any) -> Any:
    if value is None or type(value) is str:
        return value
    raise _Slow


def _number(value: Any) -> Any:
    if value is None or type(value) is int:
        return value
    raise _Slow


def _finding(f: Any) -> dict[str, Any]:
    if type(f) is not Finding or f.proposals or f.__pydantic_extra__:
        raise _Slow
    d = f.__dict__
    parts = d["parts"]
    if type(parts) is not tuple or not all(type(p) is str for p in parts):
        raise _Slow
    return {
        "verifier": _text(d["verifier"]),
        "status": _text(d["status"]),
        "severity": _text(d["severity"]),
        "code": _text(d["code"]),
        "message": _text(d["message"]),
        "subject": _text(d["subject"]),
        "detail": _plain(d["detail"]) if type(d["detail"]) is dict else _slow(),
        "parts": list(parts),
        "proposals": [],
    }


def _slow() -> Any:
    raise _Slow


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise _Slow
    return value


# The fields each hand-built form writes. A model that gains a field the form does not
# know would be sealed without it: :func:`json_form` checks these against the models
# once and, if they differ, always hands the report back to pydantic (and says so).
FORM_FIELDS: dict[str, frozenset[str]] = {
    "Report": frozenset(
        [
            "id",
            "gate",
            "node",
            "claims",
            "findings",
            "decision",
            "overrides",
            "released",
            "error",
            "approval",
            "attempt",
            "accounting",
            "thread_id",
            "run_id",
            "step",
            "checkpoint_ns",
            "task_id",
            "crossing",
            "deliveries",
            "started_at",
            "finished_at",
            "seal",
        ]
    ),
    "Finding": frozenset(
        [
            "verifier",
            "status",
            "severity",
            "code",
            "message",
            "subject",
            "detail",
            "parts",
            "proposals",
        ]
    ),
    "OverrideRecord": frozenset(
        ["kind", "target", "before", "after", "reason", "verifier", "configured"]
    ),
    "Approval": frozenset(["decision", "who", "when", "what", "message"]),
}
_fields_agree: bool | None = None
# The report models, handed over by :mod:`trustgate._report` when it defines them (it
# imports this module; this module never imports it back).
_models: dict[str, type[BaseModel]] = {}


def bind(report: type[BaseModel], override: type[BaseModel], approval: type[BaseModel]) -> None:
    """Take the report models the forms are built for (called once by ``_report``)."""
    _models.update(Report=report, OverrideRecord=override, Approval=approval)


def _forms_match_models() -> bool:
    """Whether every model's fields are the ones its hand-built form writes."""
    global _fields_agree
    if _fields_agree is None:
        models: dict[str, type[BaseModel]] = {
            "Report": _models["Report"],
            "Finding": Finding,
            "OverrideRecord": _models["OverrideRecord"],
            "Approval": _models["Approval"],
        }
        differ = [n for n, m in models.items() if set(m.model_fields) != FORM_FIELDS[n]]
        if differ:
            logger.warning(
                "report forms are dumped by pydantic: the hand-built forms of %s do not "
                "list the models' fields",
                ", ".join(differ),
            )
        _fields_agree = not differ
    return _fields_agree


def _override(o: Any) -> dict[str, Any]:
    if type(o) is not _models["OverrideRecord"] or o.__pydantic_extra__:
        raise _Slow
    d = o.__dict__
    return {
        "kind": _text(d["kind"]),
        "target": _text(d["target"]),
        "before": _plain(d["before"]),
        "after": _plain(d["after"]),
        "reason": _text(d["reason"]),
        "verifier": _text(d["verifier"]),
        "configured": _flag(d["configured"]),
    }


def _approval(a: Any) -> Any:
    if a is None:
        return None
    if type(a) is not _models["Approval"] or a.__pydantic_extra__:
        raise _Slow
    d = a.__dict__
    return {
        "decision": _text(d["decision"]),
        "who": _text(d["who"]),
        "when": _when(d["when"]),
        "what": _text(d["what"]),
        "message": _text(d["message"]),
    }


def json_form(report: Any) -> dict[str, Any] | None:
    """``report.model_dump(mode="json", fallback=repr)`` for a report of the shape
    gates build, without the seal (``exclude={"seal"}``); ``None`` for any other."""
    if (
        type(report) is not _models.get("Report")
        or report.__pydantic_extra__
        or not _forms_match_models()
    ):
        return None
    d = report.__dict__
    try:
        accounting = d["accounting"]
        if type(accounting) is not dict:
            raise _Slow
        released = d["released"]
        if type(released) is not bool:
            raise _Slow
        return {
            "id": _text(d["id"]),
            "gate": _text(d["gate"]),
            "node": _text(d["node"]),
            "claims": [_plain(c) for c in d["claims"]] if type(d["claims"]) is list else _slow(),
            "findings": [_finding(f) for f in d["findings"]],
            "decision": _text(d["decision"]),
            "overrides": [_override(o) for o in d["overrides"]],
            "released": released,
            "error": _text(d["error"]),
            "approval": _approval(d["approval"]),
            "attempt": _number(d["attempt"]),
            "accounting": _plain(accounting),
            "thread_id": _text(d["thread_id"]),
            "run_id": _text(d["run_id"]),
            "step": _number(d["step"]),
            "checkpoint_ns": _text(d["checkpoint_ns"]),
            "task_id": _text(d["task_id"]),
            "crossing": _text(d["crossing"]),
            "deliveries": _number(d["deliveries"]),
            "started_at": _when(d["started_at"]),
            "finished_at": _when(d["finished_at"]),
        }
    except (_Slow, KeyError, TypeError):
        return None
