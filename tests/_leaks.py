"""What counts as content in a report, and a search for it in exported telemetry."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trustgate._report import Report
from trustgate.pipelines._common import load_json

__all__ = ["content_of", "leaks", "people"]

# Shorter strings are words the telemetry itself uses (a decision, a kind, a field
# name); a claim string of this length or more found anywhere is a leak.
_MIN_LENGTH = 5


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def content_of(report: Report) -> set[str]:
    """Everything in a report that came from a model or a person (a value an override
    set from the gate's configuration, ``configured``, came from neither)."""
    found = set(_strings(report.claims))
    for o in report.overrides:
        found |= set(_strings(o.before)) | {o.reason}
        if not o.configured:
            found |= set(_strings(o.after))
    found |= {f.message for f in report.findings if f.message != "ok"}
    if report.approval is not None:
        found |= {report.approval.who or "", report.approval.message or ""}
    if report.error:
        found.add(report.error)
    # identifiers the gate itself writes (a reason that is just a finding code) are
    # content-free by construction
    vocabulary = {f.code for f in report.findings} | {f.verifier for f in report.findings}
    vocabulary |= {f"{f.verifier}/{f.code}" for f in report.findings}
    return {s.strip() for s in found if len(s.strip()) >= _MIN_LENGTH} - vocabulary


def leaks(secrets: set[str], text: str) -> list[str]:
    """Secrets found in ``text`` as whole tokens (``verified`` inside the finding code
    ``unverified_evidence`` is not a leak; ``APPROVE`` anywhere on its own is)."""
    return sorted(s for s in secrets if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text))


def people() -> set[str]:
    names = {load_json("investigation", "review.json")["by"]}
    names.add(load_json("postmortem", "answers.json")["by"])
    return names
