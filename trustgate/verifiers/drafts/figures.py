"""The figures rule (opt-in): a cited sentence must not misquote its own cited lines.

An opt-in rule. A drafter that cites line 3 for "latency rose to 12 seconds at
14:02" when line 3 says 9.2 seconds has attached real evidence to a wrong number,
which a reader will trust *because* it is cited. The rule compares only like with
like: times of day with times of day, and values whose units share a dimension
(durations, sizes, percentages, rates). It stays quiet when it cannot prove a
contradiction (as in compliance drafting: absence from a reference the producer may legitimately
exceed is never a violation):

* a figure whose dimension the cited lines never mention is not checked;
* a derived figure (the gap between two cited times, the difference or sum of two
  cited values, a rounded value) is accepted;
* times introduced by "before", "after", "by", "until", "between" ... state a
  relation, not a reading, and are not checked; "about"/"roughly" widen the match.

It is off by default: turn it on after reading its false-positive rate in
``bench/calibrate.py``.

Example:
    ```python
    from trustgate.drafts import DEFAULT_RULES, FiguresRule, Record, verify_draft

    record = Record.from_text("14:02 checkout p99 latency 9.2 seconds\\n")
    verdict = verify_draft("Latency hit 12 seconds at 14:02. [[1]]", record,
                           rules=(*DEFAULT_RULES, FiguresRule()))
    assert verdict.removed[0].code == "misquoted_figure"
    ```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations

from trustgate.verifiers.drafts.rules import DraftSentence, SentenceRule

__all__ = ["Figure", "FiguresRule", "extract_figures"]

_UNITS: dict[str, tuple[str, float]] = {}


def _unit(dimension: str, factor: float, *names: str) -> None:
    for name in names:
        _UNITS[name] = (dimension, factor)


_unit("duration", 0.001, "ms", "msec", "msecs", "millisecond", "milliseconds")
_unit("duration", 0.000001, "µs", "us", "microsecond", "microseconds")
_unit("duration", 1.0, "s", "sec", "secs", "second", "seconds")
_unit("duration", 60.0, "min", "mins", "minute", "minutes")
_unit("duration", 3600.0, "h", "hr", "hrs", "hour", "hours")
_unit("duration", 86400.0, "day", "days")
_unit("percent", 1.0, "%", "percent", "pct", "per cent")
_unit("size", 1.0, "byte", "bytes")
_unit("size", 1e3, "kb", "kilobyte", "kilobytes")
_unit("size", 1e6, "mb", "megabyte", "megabytes")
_unit("size", 1e9, "gb", "gigabyte", "gigabytes")
_unit("size", 1e12, "tb", "terabyte", "terabytes")
_unit("size", 1024.0, "kib")
_unit("size", 1024.0**2, "mib")
_unit("size", 1024.0**3, "gib")
_unit("size", 1024.0**4, "tib")
_unit("bandwidth", 1e3, "kbps", "kbit/s", "kb/s")
_unit("bandwidth", 1e6, "mbps", "mbit/s", "mb/s")
_unit("bandwidth", 1e9, "gbps", "gbit/s", "gb/s")
_unit("rate", 1.0, "rps", "qps", "req/s", "reqs/s", "requests/s", "requests per second")
_unit("rate", 1.0, "queries per second", "ops/s", "tps", "transactions per second")
_unit("rate", 1 / 60, "rpm", "req/min", "requests per minute")
_unit("multiple", 1.0, "x", "×")

_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_NUMBER = r"(?<![\w.,:/-])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
_QUANTITY = re.compile(_NUMBER + r"\s?(" + _UNIT_ALT + r")(?![\w/])", re.IGNORECASE)
_CLOCK = re.compile(
    r"(?<![\w.:])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?:\s?([ap])\.?m\b\.?)?(?![\d:])"
    r"|(?<![\w.:])(1[0-2]|0?[1-9])\s?([ap])\.?m\b\.?",
    re.IGNORECASE,
)
_APPROX = re.compile(
    r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|some|~|≈|circa|ca\.)\s*\Z",
    re.IGNORECASE,
)
_LOWER_BOUND = re.compile(
    r"(?:over|above|more than|at least|exceeding|exceeded|beyond|upwards of|>|≥)\s*\Z",
    re.IGNORECASE,
)
_UPPER_BOUND = re.compile(r"(?:under|below|less than|at most|up to|within|<|≤)\s*\Z", re.IGNORECASE)
_DELTA_BEFORE = re.compile(r"(?:by|of|an extra|an additional|another|\+|-)\s*\Z", re.IGNORECASE)
_DELTA_AFTER = re.compile(
    r"\s*(?:(?:increase|decrease|rise|drop|jump|growth|reduction|improvement|regression|"
    r"more|less|fewer|higher|lower|faster|slower|longer|shorter|larger|smaller|over|"
    r"above|below|per|of|each|apiece|later|earlier|after|before)\b)",
    re.IGNORECASE,
)
_RELATION = re.compile(
    r"(?:before|after|by|until|till|since|from|between|and|to|through|past|around|about|"
    r"approximately|roughly|~|shortly|circa|no later than|no earlier than|-|–)\s*\Z",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Figure:
    """A number with a dimension: a time of day (seconds after midnight) or a quantity."""

    dimension: str
    value: float
    text: str
    precision: float
    """Half a unit of the last digit written: 9.2 s is 9.15..9.25 s."""
    qualifier: str = ""
    """``approx``, ``lower`` (stated value is a floor), ``upper``, ``relation`` or ``""``."""


def _qualifier(text: str, start: int, clock: bool, end: int = -1) -> str:
    head = text[max(0, start - 24) : start]
    if not clock and (_DELTA_BEFORE.search(head) or _DELTA_AFTER.match(text, end)):
        return "relation"  # a change, an offset or a rate per item: derived, not a reading
    if _APPROX.search(head):
        return "approx"
    if _LOWER_BOUND.search(head):
        return "lower"
    if _UPPER_BOUND.search(head):
        return "upper"
    if clock and _RELATION.search(head):
        return "relation"
    return ""


def extract_figures(text: str) -> list[Figure]:
    """Times of day and unit-bearing values in ``text``, in order."""
    out: list[Figure] = []
    for m in _CLOCK.finditer(text):
        if m.group(1) is not None:
            hour, minute = int(m.group(1)), int(m.group(2))
            second = int(m.group(3)) if m.group(3) else 0
            meridiem = (m.group(4) or "").lower()
            precision = 0.5 if m.group(3) else 30.0
        else:
            hour, minute, second = int(m.group(5)), 0, 0
            meridiem = m.group(6).lower()
            precision = 1800.0
        if meridiem == "p" and hour < 12:
            hour += 12
        elif meridiem == "a" and hour == 12:
            hour = 0
        value = hour * 3600 + minute * 60 + second
        out.append(
            Figure("clock", float(value), m.group(), precision, _qualifier(text, m.start(), True))
        )
    for m in _QUANTITY.finditer(text):
        whole, frac, unit = m.group(1), m.group(2), m.group(3).lower()
        dimension, factor = _UNITS[unit]
        number = float(whole.replace(",", "") + ("." + frac if frac else ""))
        step = 10.0 ** -(len(frac) if frac else 0)
        out.append(
            Figure(
                dimension,
                number * factor,
                m.group(),
                step * factor / 2,
                _qualifier(text, m.start(), False, m.end()),
            )
        )
    return out


def _close(stated: Figure, value: float) -> bool:
    if stated.dimension == "clock" and stated.precision == 30.0 and not stated.qualifier:
        return int(stated.value // 60) == int(value // 60)  # 14:02 quotes 14:02:31
    tolerance = stated.precision + 1e-9 * max(1.0, abs(value))
    if stated.qualifier == "approx":
        tolerance = max(tolerance, 0.15 * abs(value))
    if stated.qualifier == "lower":
        return stated.value - tolerance <= value
    if stated.qualifier == "upper":
        return value <= stated.value + tolerance
    return abs(stated.value - value) <= tolerance


class FiguresRule(SentenceRule):
    """Delete a cited sentence whose figure contradicts every figure of its cited lines."""

    name = "figures"
    code = "misquoted_figure"

    def check(self, sentence: DraftSentence) -> str | None:
        if not sentence.cited:
            return None
        stated = extract_figures(sentence.plain)
        if not stated:
            return None
        cited_lines = [sentence.record.lines[i] for i in sentence.cited]
        found: list[Figure] = []
        for line in cited_lines:
            found.extend(extract_figures(line))
        for fig in stated:
            if fig.qualifier == "relation":
                continue
            same = [f.value for f in found if f.dimension == fig.dimension]
            if not same:
                continue  # absent from the cited lines: not a contradiction
            if any(_close(fig, v) for v in same):
                continue
            derived = [abs(a - b) for a, b in combinations(same, 2)]
            derived += [a + b for a, b in combinations(same, 2)]
            if fig.dimension == "duration":
                clocks = [f.value for f in found if f.dimension == "clock"]
                derived += [abs(a - b) for a, b in combinations(clocks, 2)]
            if fig.dimension == "multiple":
                continue  # a ratio of cited values is a derivation this rule does not judge
            if any(_close(fig, v) for v in derived):
                continue
            cited = ", ".join(f.text for f in found if f.dimension == fig.dimension)
            return f"states {fig.text!r} but its cited lines say {cited}"
        return None
