"""Readable views of what a gate did: terminal text and HTML tables for Jupyter.

A report nobody reads protects nobody. These renderers turn a
:class:`~trustgate.Report`, a :class:`~trustgate.Finding`, a
:class:`~trustgate.drafts.DraftVerdict` and an
:class:`~trustgate.files.Artifact` into:

* plain text for a terminal (``to_text``), with ANSI colour only when asked
  (``colour=True``; the CLI asks only when stdout is a terminal);
* an HTML table (``to_html``), which is what the classes' ``_repr_html_`` return so a
  notebook shows a table instead of a wall of pydantic repr.

Every value is escaped; nothing here reads a clock, a file or the network.

Example:
    ```python
    from trustgate import Finding
    from trustgate.render import to_html, to_text

    f = Finding.failed("citation_replay", "file_missing", "app/limits.py does not exist")
    assert "file_missing" in to_text(f)
    assert to_html(f).startswith("<table")
    ```
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "DECISION_COLOURS",
    "artifact_html",
    "artifact_text",
    "draft_verdict_html",
    "draft_verdict_text",
    "finding_html",
    "finding_text",
    "findings_html",
    "paint",
    "report_html",
    "report_text",
    "reports_html",
    "short",
    "to_html",
    "to_text",
]

_RESET = "\033[0m"
_CODES = {
    "red": "\033[31m",
    "green": "\033[32m",
    "yellow": "\033[33m",
    "blue": "\033[34m",
    "magenta": "\033[35m",
    "cyan": "\033[36m",
    "dim": "\033[2m",
    "bold": "\033[1m",
}

DECISION_COLOURS = {
    "pass": "green",
    "modified": "yellow",
    "blocked": "yellow",
    "rerendered": "cyan",
    "caveated": "magenta",
    "reviewed": "blue",
    "halted": "red",
}
"""The colour of each gate decision, in the terminal and (as CSS) in HTML."""

_CSS = {
    "green": "#1a7f37",
    "yellow": "#9a6700",
    "cyan": "#0969da",
    "magenta": "#8250df",
    "blue": "#0550ae",
    "red": "#cf222e",
    "dim": "#57606a",
}


def paint(text: str, colour: str, on: bool) -> str:
    """``text`` in ANSI ``colour`` when ``on`` (a terminal), else unchanged."""
    code = _CODES.get(colour)
    return f"{code}{text}{_RESET}" if on and code else text


def short(value: Any, limit: int = 80) -> str:
    """One line, at most ``limit`` characters (JSON for structures)."""
    if value is None:
        return "—"
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _e(value: Any, limit: int = 160) -> str:
    return html.escape(short(value, limit))


# --- findings ------------------------------------------------------------------------


def _mark(f: Any) -> tuple[str, str]:
    if f.status == "pass":
        return "PASS", "green"
    if f.severity != "block":
        return "WARN", "yellow"
    return "FAIL", "red"


def finding_text(f: Any, *, colour: bool = False, width: int = 110) -> str:
    """One line: mark, verifier/code, subject, message (at least 60 characters of it)."""
    mark, c = _mark(f)
    head = f"{paint(mark, c, colour)}  {f.verifier}/{f.code}"
    subject = f"  [{short(f.subject, 48)}]" if f.subject else ""
    rest = max(60, width - len(f.verifier) - len(f.code) - len(subject) - 10)
    return f"{head}{subject}  {short(f.message, rest)}"


def _finding_row(f: Any) -> str:
    mark, c = _mark(f)
    return (
        f'<tr><td style="color:{_CSS[c]};font-weight:600">{mark}</td>'
        f"<td><code>{_e(f.verifier)}/{_e(f.code)}</code></td>"
        f"<td>{_e(f.subject)}</td><td>{_e(f.message, 240)}</td></tr>"
    )


_TABLE = '<table style="border-collapse:collapse;text-align:left">'
_TH = "<tr>" + "".join(f"<th>{h}</th>" for h in ("", "check", "subject", "message")) + "</tr>"


def finding_html(f: Any) -> str:
    """A one-row table for one finding."""
    return f"{_TABLE}{_TH}{_finding_row(f)}</table>"


def findings_html(findings: Iterable[Any]) -> str:
    rows = "".join(_finding_row(f) for f in findings)
    return f"{_TABLE}{_TH}{rows}</table>"


# --- reports -------------------------------------------------------------------------


def _checked(report: Any) -> list[str]:
    by: dict[str, list[int]] = {}
    for f in report.findings:
        counts = by.setdefault(f.verifier, [0, 0])
        counts[0] += 1
        counts[1] += 1 if f.blocking else 0
    return [f"{v}: {n} check(s), {bad} failed" for v, (n, bad) in by.items()]


def report_text(
    report: Any,
    *,
    colour: bool = False,
    width: int = 110,
    claimed: str | None = None,
    passes: bool = False,
) -> str:
    """A crossing as a small table: claimed, checked, failed, overridden, released.

    ``claimed`` replaces the generic one-line summary of the claims; ``passes`` also
    lists the passing findings.
    """
    c = DECISION_COLOURS.get(report.decision, "dim")
    head = (
        f"{paint(report.decision.upper(), c, colour)}  gate {report.gate} "
        f"(guards {report.node}, attempt {report.attempt})"
        f"{'' if report.released else paint('  NOT RELEASED', 'red', colour)}"
    )
    label = "  {:<11}"
    lines = [head]
    what = claimed if claimed is not None else short(report.claims, width - 16)
    lines.append(label.format("claimed") + what)
    for i, item in enumerate(_checked(report)):
        lines.append(label.format("checked" if i == 0 else "") + item)
    shown = [f for f in report.findings if passes or not f.passed]
    for f in shown:
        lines.append(label.format("") + finding_text(f, colour=colour, width=width - 14))
    for o in report.overrides:
        arrow = f"{short(o.before, 48)} → {short(o.after, 48)}"
        lines.append(
            label.format("overridden")
            + f"{paint(o.kind, 'yellow', colour)} {o.target}: {arrow}"
            + paint(f"  ({short(o.reason, 80)})", "dim", colour)
        )
    if report.approval is not None:
        a = report.approval
        lines.append(
            label.format("approval")
            + f"{a.decision} by {a.who or 'unknown'} (testimony, not evidence)"
            + (f": {short(a.message, 60)}" if a.message else "")
        )
    if report.error:
        lines.append(label.format("error") + paint(short(report.error, width - 16), "red", colour))
    return "\n".join(lines)


def report_html(report: Any) -> str:
    """A crossing as an HTML table (what ``Report._repr_html_`` should return)."""
    c = _CSS[DECISION_COLOURS.get(report.decision, "dim")]
    head = (
        f'<div><b style="color:{c}">{_e(report.decision.upper())}</b> '
        f"gate <code>{_e(report.gate)}</code> guards <code>{_e(report.node)}</code>, "
        f"attempt {report.attempt}, released: {'yes' if report.released else '<b>no</b>'}</div>"
    )
    overrides = "".join(
        f"<tr><td><code>{_e(o.kind)}</code></td><td>{_e(o.target)}</td>"
        f"<td>{_e(o.before)}</td><td>{_e(o.after)}</td><td>{_e(o.reason)}</td></tr>"
        for o in report.overrides
    )
    otable = (
        f"{_TABLE}<tr><th>override</th><th>target</th><th>before</th><th>after</th>"
        f"<th>reason</th></tr>{overrides}</table>"
        if overrides
        else ""
    )
    approval = ""
    if report.approval is not None:
        a = report.approval
        approval = (
            f"<div>{_e(a.decision)} by <b>{_e(a.who or 'unknown')}</b> "
            f"(testimony, not evidence){': ' + _e(a.message) if a.message else ''}</div>"
        )
    error = f'<div style="color:{_CSS["red"]}">{_e(report.error)}</div>' if report.error else ""
    return f"<div>{head}{findings_html(report.findings)}{otable}{approval}{error}</div>"


def reports_html(reports: Sequence[Any]) -> str:
    return "".join(report_html(r) for r in reports)


# --- drafts and artifacts ---------------------------------------------------------------


def draft_verdict_text(verdict: Any, *, colour: bool = False) -> str:
    """The redacted draft, then what was removed and why, then the open gaps."""
    lines = [verdict.text.rstrip(), ""]
    for r in verdict.removed:
        lines.append(
            f"{paint('DELETED', 'red', colour)} ({r.rule}) {short(r.sentence, 90)}"
            + paint(f"  — {short(r.reason, 60)}", "dim", colour)
        )
    for c in verdict.invalid_citations:
        lines.append(f"{paint('DROPPED', 'yellow', colour)} {c.marker}  (not a line of the record)")
    for g in verdict.gaps:
        lines.append(f"{paint('GAP', 'cyan', colour)} {g.id}: {g.question}")
    return "\n".join(lines).rstrip()


def draft_verdict_html(verdict: Any) -> str:
    """What ``DraftVerdict._repr_html_`` should return."""
    removed = "".join(
        f"<tr><td><code>{_e(r.rule)}</code></td><td>{_e(r.sentence, 240)}</td>"
        f"<td>{_e(r.reason)}</td><td>{_e(r.gap_id)}</td></tr>"
        for r in verdict.removed
    )
    invalid = "".join(
        f"<tr><td><code>invalid_citation</code></td><td>{_e(c.marker)}</td>"
        f"<td>not a line of the record</td><td></td></tr>"
        for c in verdict.invalid_citations
    )
    gaps = "".join(f"<li><b>{_e(g.id)}</b>: {_e(g.question, 240)}</li>" for g in verdict.gaps)
    table = (
        f"{_TABLE}<tr><th>rule</th><th>deleted</th><th>why</th><th>gap</th></tr>"
        f"{removed}{invalid}</table>"
        if removed or invalid
        else "<div>clean: nothing deleted</div>"
    )
    text = html.escape(verdict.text)
    return (
        f"<div>{table}{'<ul>' + gaps + '</ul>' if gaps else ''}"
        f'<pre style="white-space:pre-wrap">{text}</pre></div>'
    )


def artifact_text(artifact: Any) -> str:
    return (
        f"{artifact.uri}  [{artifact.verification}]  sha256:{(artifact.content_hash or '-')[:12]}"
        f"  id:{artifact.id[:12]}  acquired {artifact.acquired_at:%Y-%m-%d %H:%M:%S}"
    )


def artifact_html(artifact: Any) -> str:
    """What ``Artifact._repr_html_`` should return."""
    rows = [
        ("id", artifact.id),
        ("uri", artifact.uri),
        ("source", artifact.source),
        ("revision", artifact.revision),
        ("content_hash", artifact.content_hash),
        ("verification", artifact.verification),
        ("acquired_at", str(artifact.acquired_at)),
    ]
    body = "".join(f"<tr><th>{k}</th><td><code>{_e(v)}</code></td></tr>" for k, v in rows)
    excerpt = (
        f'<pre style="white-space:pre-wrap">{html.escape(artifact.excerpt)}</pre>'
        if artifact.excerpt is not None
        else "<div>(no excerpt: unverified external locator)</div>"
    )
    return f"<div>{_TABLE}{body}</table>{excerpt}</div>"


# --- dispatch --------------------------------------------------------------------------


def _kind(obj: Any) -> str:
    names = {type(obj).__name__} | {t.__name__ for t in type(obj).__mro__}
    for name in ("Report", "DraftVerdict", "Artifact", "Finding"):
        if name in names:
            return name
    if isinstance(obj, (list, tuple)) and obj:
        return "list:" + _kind(obj[0])
    raise TypeError(f"nothing renders a {type(obj).__name__}")


def to_text(obj: Any, *, colour: bool = False) -> str:
    """Terminal text for a Report, Finding, DraftVerdict, Artifact or a list of them."""
    kind = _kind(obj)
    if kind.startswith("list:"):
        return "\n\n".join(to_text(o, colour=colour) for o in obj)
    if kind == "Report":
        return report_text(obj, colour=colour)
    if kind == "DraftVerdict":
        return draft_verdict_text(obj, colour=colour)
    if kind == "Artifact":
        return artifact_text(obj)
    return finding_text(obj, colour=colour)


def to_html(obj: Any) -> str:
    """HTML for a Report, Finding, DraftVerdict, Artifact or a list of them."""
    kind = _kind(obj)
    if kind == "list:Finding":
        return findings_html(obj)
    if kind.startswith("list:"):
        return "".join(to_html(o) for o in obj)
    if kind == "Report":
        return report_html(obj)
    if kind == "DraftVerdict":
        return draft_verdict_html(obj)
    if kind == "Artifact":
        return artifact_html(obj)
    return finding_html(obj)
