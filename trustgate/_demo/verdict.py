"""The one line that ends each pipeline of the demo: what the model claimed, what was
checked, what was done.

A reader new to trustgate scrolls past the per-crossing detail; this line is what they
keep. It is computed from the run (its reports, the person's steps, the artefact), never
written per scenario in advance, so an honest run and an inventing run each get the line
that is true of them. A halt reads as the outcome it is (the run stopped so that nothing
unchecked went out), not as a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from trustgate._report import Report


class DemoRun(Protocol):
    """What a verdict reads of a pipeline's run (the runner's ``DemoRun``)."""

    @property
    def pipeline(self) -> str: ...
    @property
    def reports(self) -> list[Report]: ...
    @property
    def artefact(self) -> str: ...
    @property
    def artefact_data(self) -> Any: ...


__all__ = ["INTRO", "INTRO_HONEST", "verdict"]

INTRO = """\
trustgate demo: four small agent pipelines, run on bundled sample data with scripted
models that make things up the way real ones do: a line of code that is not there, a
config value no file holds, a cause the incident record never shows, a standard the
brief never listed. For each pipeline you see what the model claimed, what was checked
against the real source, and what was done about it: a verdict overruled, a value
dropped, a sentence deleted, the model asked again, or the run stopped before anything
unchecked went out. No paid model is called; it takes a few seconds."""

INTRO_HONEST = """\
trustgate demo, honest models: the same four pipelines, with models that only claim
what their sources show. Everything is checked the same way, and nothing the models
said is changed; the one file the investigation edits during its pause is still
caught, because the world changed, not the model."""


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _failed(reports: list[Report]) -> int:
    return sum(len(r.failed) for r in reports)


def _code_review(run: DemoRun) -> str:
    rounds = (run.artefact_data or {}).get("rounds") or []
    first = run.reports[0] if run.reports else None
    cited = 0
    if first is not None and first.claims and isinstance(first.claims[0], Mapping):
        items = first.claims[0].get("items") or []
        cited = sum(len(i.get("evidence") or []) for i in items)
    said = f"the reviewing model said APPROVE, citing {_n(cited, 'line')} of code as proof"
    overruled = [o for r in run.reports for o in r.overrides if o.target.endswith("review.verdict")]
    final = (run.artefact_data or {}).get("review", {}).get("verdict")
    if not overruled:
        return (
            f"{said}; every citation was replayed against the repository and matched, "
            f"so its {final} stood"
        )
    o = overruled[0]
    return (
        f"{said}; replaying the citations against the repository, "
        f"{_n(_failed(run.reports[:1]), 'check')} failed, so its verdict was overruled "
        f"({o.before} → {o.after}); after {_n(len(rounds), 'round')} the citations matched "
        f"and {final} stood"
    )


def _field(target: str) -> str:
    return target.rsplit(".", 1)[-1]


def _investigation(run: DemoRun) -> str:
    first = run.reports[0] if run.reports else None
    claims = first.claims[0] if first is not None and first.claims else {}
    proposed = len(claims) if isinstance(claims, Mapping) else 0
    said = f"the model filled in {_n(proposed, 'case-file value')}, each citing a config line"
    dropped = [
        _field(o.target) for o in (first.overrides if first else []) if o.kind == "field_override"
    ]
    parts = []
    if dropped:
        parts.append(
            f"{_n(len(dropped), 'value')} had no source that checks out and "
            f"{'was' if len(dropped) == 1 else 'were'} dropped ({', '.join(dropped)})"
        )
    if first is not None and first.approval is not None:
        parts.append(f"{first.approval.who} vouched for the rest (testimony, marked as such)")
    later = [
        _field(o.target) for r in run.reports[1:] for o in r.overrides if o.kind == "field_override"
    ]
    if later:
        parts.append(
            f"the file behind {', '.join(later)} changed before use, so "
            f"{'it was' if len(later) == 1 else 'they were'} dropped at the re-check"
        )
    kept = len((run.artefact_data or {}).get("case") or {})
    if not parts:
        parts.append("every value was found at the line it cites")
    return f"{said}; " + "; ".join(parts) + f": the case file keeps {_n(kept, 'value')}"


def _postmortem(run: DemoRun) -> str:
    kinds = [o.kind for r in run.reports for o in r.overrides]
    deleted, dropped = kinds.count("sentence_delete"), kinds.count("citation_drop")
    said = "the model drafted the incident report from the incident record"
    if not deleted and not dropped:
        return (
            f"{said}; every cause and citation was found in the record, and it went out as written"
        )
    parts = []
    if deleted:
        parts.append(
            f"{_n(deleted, 'sentence')} asserting what the record does not show "
            f"{'was' if deleted == 1 else 'were'} deleted, each left as an open question"
        )
    if dropped:
        parts.append(f"{_n(dropped, 'citation')} to a record line that does not exist removed")
    testimony = (run.artefact_data or {}).get("testimony") or []
    who = sorted({t.get("by", "a person") for t in testimony if isinstance(t, Mapping)})
    answered = len(testimony)
    open_ = run.artefact.count("**Open question:**")
    tail = (
        f"; {', '.join(who)} answered {_n(answered, 'question')} (kept, marked as testimony)"
        if answered
        else ""
    )
    if open_:
        tail += f"; {_n(open_, 'question')} still open in the published report"
    return f"{said}; " + "; ".join(parts) + tail


def _sections(run: DemoRun) -> list[list[Report]]:
    """The compliance crossings, one list per section (a new section starts at attempt 1)."""
    out: list[list[Report]] = []
    for r in run.reports:
        if r.attempt == 1 or not out:
            out.append([])
        out[-1].append(r)
    return out


def _why_halted(report: Report) -> str:
    if report.error and "model_verifier" in report.error:
        return (
            "the second model asked to check it answered in prose, not with a verdict, and "
            "a check that gives no verdict counts as failed"
        )
    codes = sorted({f.code for f in report.failed}) or ["its checks failed"]
    return "its checks failed (" + ", ".join(codes) + ")"


def _compliance(run: DemoRun) -> str:
    data = run.artefact_data or {}
    titles = [p.get("title", "?") for p in data.get("plan") or []]
    said = (
        f"the model drafted {_n(len(titles) or len(_sections(run)), 'section')}, "
        "citing standards and prices"
    )
    parts = []
    stopped = ""
    for i, crossings in enumerate(_sections(run)):
        title = titles[i] if i < len(titles) else f"section {i + 1}"
        last = crossings[-1]
        again = " after one rewrite" if len(crossings) > 1 else ""
        if last.decision == "halted":
            stopped = (
                f"; “{title}” was not released: {_why_halted(last)}, so the run stopped "
                "there by design"
            )
        elif last.decision == "caveated":
            parts.append(f"“{title}” went out{again} with a caveat naming what is still unproven")
        elif last.decision == "pass":
            parts.append(f"“{title}” checked out{again}")
        else:
            parts.append(f"“{title}”: {last.decision}{again}")
    caught = len(
        {
            (f.code, f.subject)
            for r in run.reports
            for f in r.failed
            if f.verifier != "model_verifier"
        }
    )
    checked = (
        f"{_n(caught, 'citation, price or link', 'citations, prices and links')} "
        "not on the brief's approved list caught"
    )
    if not caught:
        checked = "every citation and price was on the approved list"
    return f"{said}; {checked}; " + "; ".join(parts) + stopped


_BY_PIPELINE: dict[str, Callable[[DemoRun], str]] = {
    "code-review": _code_review,
    "investigation": _investigation,
    "postmortem": _postmortem,
    "compliance": _compliance,
}


def verdict(run: DemoRun) -> str:
    """The pipeline's outcome in one line, starting with a capital letter."""
    line = _BY_PIPELINE[run.pipeline](run)
    return line[:1].upper() + line[1:] + "."
