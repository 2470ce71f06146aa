"""The postmortem verifier: delete what the record cannot back, leave a gap.

A drafting model is asked to cite every claim to a line of the pasted record with
markers like ``[[12]]``, ``[[12, 14]]`` or ``[[12]][[14]]``. Asking is a request;
this module is the control. It runs after the model has spoken, sentence by
sentence, and applies the draft rules (:mod:`trustgate.verifiers.drafts.rules`):

* a causal sentence without a valid citation is **deleted**;
* a hedged sentence is **deleted even when cited** (a hedge is a guess wearing a hat);
* a citation to an id the record does not have is **removed** and reported: an id no
  reader can open is indistinguishable from no evidence;
* plain descriptions survive uncited: a description is not a cause;
* a sentence the rules cannot read (another language, mostly symbols) is reported
  ``unsupported_text``; with ``strict=True`` it is deleted as unverifiable.

Deleted, not flagged: a warning does not travel with a copy-paste. Where sentences
were deleted, a visually distinct gap block stands in the hole, with a question that
cannot suggest the answer (:mod:`trustgate.verifiers.drafts.gaps`). A person's answer goes
back in with :func:`answer_gap` as attributed testimony, never as a cited fact.

The rules are deterministic: no clock, no network, no model. What they cannot read
(a cause a sentence only implies) an optional sentence judge may be asked about
(:mod:`trustgate.verifiers.drafts.judge`): it is shown only the sentences the rules
kept, so it can add deletions and never undo one.
"""

from __future__ import annotations

import functools
import gc
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, field_serializer

from trustgate._findings import Finding
from trustgate.errors import ConfigurationError, InputError
from trustgate.evidence.record import Record
from trustgate.verifiers.drafts import _judging, _markers, _reading
from trustgate.verifiers.drafts import judge as _judge
from trustgate.verifiers.drafts._reading import Reading
from trustgate.verifiers.drafts.gaps import GAP_LABEL, gap_question, testimony_text
from trustgate.verifiers.drafts.judge import JudgeSummary, SentenceJudge
from trustgate.verifiers.drafts.rules import DEFAULT_RULES, DraftSentence, SentenceRule
from trustgate.verifiers.drafts.segment import Unit

__all__ = [
    "MAX_DRAFT_CHARS",
    "DraftVerdict",
    "Gap",
    "InvalidCitation",
    "KeptSentence",
    "Removal",
    "Testimony",
    "UnsupportedText",
    "answer_gap",
    "averify_draft",
    "verify_draft",
]

VERIFIER = "draft"
MAX_DRAFT_CHARS = 32 * 1024 * 1024
"""Drafts longer than this (in characters) are refused rather than half-checked."""

_MARKER = _markers.MARKER
_EXHAUSTIVE = False
"""Read every sentence with the shipped rules, skipping none (tests compare the two)."""


_SET = object.__setattr__


@dataclass(frozen=True, slots=True)
class KeptSentence:
    """A sentence (or heading, list item, table row) that stands in the output.

    A plain frozen dataclass rather than a model: a long draft keeps tens of
    thousands of them, and they are built by the verifier, never parsed from input.
    """

    text: str
    """As it reads in the output (invalid markers already removed)."""
    start: int
    """Offset of the sentence in the original draft."""
    end: int
    kind: str
    cited: tuple[str, ...] = ()
    """Valid record ids it cites."""

    def __init__(
        self, text: str, start: int, end: int, kind: str, cited: tuple[str, ...] = ()
    ) -> None:
        # the __init__ dataclass writes, less its attribute look-ups: a long draft
        # keeps tens of thousands of these
        _SET(self, "text", text)
        _SET(self, "start", start)
        _SET(self, "end", end)
        _SET(self, "kind", kind)
        _SET(self, "cited", cited)


class Removal(BaseModel):
    """A sentence the verifier deleted, the rule that deleted it, and why."""

    model_config = ConfigDict(frozen=True)

    sentence: str
    rule: str
    """Name of the first rule (in the order given) that deleted the sentence."""
    code: str
    """The finding code of that rule (``uncited_causal``, ``hedged``, ...)."""
    reason: str
    rules: tuple[str, ...]
    """Every rule that would have deleted it."""
    cited: tuple[str, ...] = ()
    """Valid record ids it cited (a hedge is deleted even when cited)."""
    start: int
    end: int
    gap_id: str
    words: str | None = None
    """For a deletion by the sentence judge (rule ``judge``), the words of the
    sentence it named as carrying the cause or the guess; ``None`` for a rule's."""


class Gap(BaseModel):
    """An open question standing where deleted sentences were.

    ``block`` is the exact text inserted at ``position`` of the verdict's ``text``;
    ``replaced`` is the span of the original draft it stands in for (the deleted
    sentences and the spaces between them, nothing else).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    position: int
    anchor: str | None = None
    """The kept sentence or heading the question is built from, if any."""
    anchor_ids: tuple[str, ...] = ()
    """Record ids the anchor cites: where a person starts looking."""
    block: str
    replaced: tuple[int, int]


class InvalidCitation(BaseModel):
    """A citation marker that is not evidence: an unknown id or a malformed marker."""

    model_config = ConfigDict(frozen=True)

    id: str
    marker: str
    sentence: str
    start: int
    """Offset of the marker in the original draft."""
    malformed: bool = False
    """True for an unclosed ``[[``: left in the text, reported, never evidence."""
    fix: tuple[int, int, str] | None = None
    """The edit that drops it from a kept sentence: the span of the original draft and
    what replaces it (the marker with its valid ids, or nothing). ``None`` for a
    malformed marker, which stays as written."""


class UnsupportedText(BaseModel):
    """A sentence the rules cannot read: another language, or mostly symbols.

    The rules neither cleared nor caught it, so it is reported; ``strict=True``
    deletes it instead, as unverifiable."""

    model_config = ConfigDict(frozen=True)

    sentence: str
    start: int
    end: int


class Testimony(BaseModel):
    """A person's answer to a gap, in the text as attributed testimony."""

    model_config = ConfigDict(frozen=True)

    gap_id: str
    author: str
    answer: str
    text: str
    position: int


class DraftVerdict(BaseModel):
    """The redacted draft and an account of every change made to it.

    Example:
        ```python
        from trustgate.drafts import Record, verify_draft

        record = Record.from_text("14:02 checkout p99 9.2s\\n14:05 deploy 4411 rolled back\\n")
        verdict = verify_draft(
            "Checkout latency rose to 9.2 seconds at 14:02. [[1]] "
            "The deploy exhausted the connection pool.",
            record,
        )
        assert "exhausted" not in verdict.text
        assert verdict.removed[0].rule == "causal"
        assert "Open question" in verdict.text
        ```
    """

    model_config = ConfigDict(frozen=True)

    text: str
    kept: tuple[KeptSentence, ...] = ()
    removed: tuple[Removal, ...] = ()
    gaps: tuple[Gap, ...] = ()
    """Open gaps (a gap answered with :func:`answer_gap` moves to ``testimony``)."""
    invalid_citations: tuple[InvalidCitation, ...] = ()
    testimony: tuple[Testimony, ...] = ()
    unsupported: tuple[UnsupportedText, ...] = ()
    """Sentences the rules cannot read, kept (without ``strict``) and reported."""
    judge: JudgeSummary | None = None
    """What the sentence judge did, when one was asked (``verify_draft(judge=...)``)."""

    @field_serializer("kept", mode="wrap")
    def _kept_as_tuple(self, value: Any, handler: SerializerFunctionWrapHandler) -> Any:
        return handler(value.value() if type(value) is _LazyKept else value)

    def _repr_html_(self) -> str:
        from trustgate._render import draft_verdict_html

        return draft_verdict_html(self)

    @property
    def clean(self) -> bool:
        """Nothing was deleted and every marker named a line of the record."""
        return not self.removed and not self.invalid_citations

    @property
    def findings(self) -> list[Finding]:
        """One blocking finding per deletion and per invalid marker; none when clean."""
        out: list[Finding] = []
        for r in self.removed:
            out.append(
                Finding.failed(
                    VERIFIER,
                    r.code,
                    f"deleted by rule {r.rule!r}: {r.reason}",
                    subject=_excerpt(r.sentence),
                    detail={
                        "rule": r.rule,
                        "rules": list(r.rules),
                        "sentence": r.sentence,
                        "cited": list(r.cited),
                        "gap": r.gap_id,
                        **({"words": r.words} if r.words is not None else {}),
                    },
                )
            )
        for u in self.unsupported:
            out.append(
                Finding.failed(
                    VERIFIER,
                    "unsupported_text",
                    "the draft rules cannot read this sentence (another language or mostly "
                    "symbols): it was not checked",
                    subject=_excerpt(u.sentence),
                    severity="warn",
                    detail={"sentence": u.sentence, "start": u.start, "end": u.end},
                )
            )
        for c in self.invalid_citations:
            if c.malformed:
                code, msg = "malformed_citation", f"unclosed citation marker {c.marker!r}"
            else:
                code = "invalid_citation"
                msg = f"[[{c.id}]] names no line of the record: removed, never evidence"
            out.append(
                Finding.failed(
                    VERIFIER,
                    code,
                    msg,
                    subject=c.id or c.marker,
                    detail={"marker": c.marker, "sentence": c.sentence},
                )
            )
        return out


class _LazyKept:
    """A verdict's kept sentences while they are still spans of the draft.

    A 1 MB draft keeps about 16,000 sentences, and building a :class:`KeptSentence`
    for each cost as much as reading them, while a gate never looks at them (it
    reads the text, the removals and the invalid markers). So a verdict holds this
    until ``verdict.kept`` is read: :class:`_KeptOnRead` then builds the tuple once
    and puts it in the verdict's place. Whatever reads the verdict's fields without
    ``verdict.kept`` (serialising, comparing, hashing, copying, pickling) sees this
    instead, and it answers as the tuple would.
    """

    __slots__ = ("_build", "_value")

    def __init__(self, build: Callable[[], tuple[KeptSentence, ...]]) -> None:
        self._build: Callable[[], tuple[KeptSentence, ...]] | None = build
        self._value: tuple[KeptSentence, ...] | None = None

    def value(self) -> tuple[KeptSentence, ...]:
        if self._value is None:
            build = self._build
            assert build is not None
            self._value = _gcless(build)
            self._build = None  # let the draft's spans go
        return self._value

    def __iter__(self) -> Iterator[KeptSentence]:
        return iter(self.value())

    def __len__(self) -> int:
        return len(self.value())

    def __getitem__(self, index: Any) -> Any:
        return self.value()[index]

    def __eq__(self, other: object) -> bool:
        return self.value() == (other.value() if isinstance(other, _LazyKept) else other)

    def __hash__(self) -> int:
        return hash(self.value())

    def __repr__(self) -> str:
        return repr(self.value())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.value(),))  # a pickle or a deep copy holds the tuple


class _KeptOnRead:
    """``DraftVerdict.kept``: the tuple, built from :class:`_LazyKept` on first read."""

    def __get__(self, obj: DraftVerdict | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__["kept"]
        if type(value) is _LazyKept:
            value = obj.__dict__["kept"] = value.value()
        return value

    def __set__(self, obj: DraftVerdict, value: Any) -> None:
        obj.__dict__["kept"] = value  # a frozen model refuses before this is reached


# A data descriptor outranks the instance's __dict__, where pydantic keeps the field
# (the field stays declared as a tuple for validation, schema and serialisation).
setattr(DraftVerdict, "kept", _KeptOnRead())  # noqa: B010 (mypy: the field's type)


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _as_record(record: Any) -> Record:
    if isinstance(record, Record):
        return record
    if isinstance(record, Mapping):
        return Record(lines=dict(record))
    raise InputError(f"record must be a trustgate Record, not {type(record).__name__}")


def _check_rules(rules: Any) -> tuple[SentenceRule, ...]:
    if isinstance(rules, SentenceRule):
        return (rules,)
    if not isinstance(rules, Iterable) or isinstance(rules, (str, bytes)):
        raise ConfigurationError("rules must be a sequence of SentenceRule")
    out = tuple(rules)
    for rule in out:
        if not isinstance(rule, SentenceRule):
            raise ConfigurationError(f"not a SentenceRule: {rule!r}")
    return out


def _gap_block(draft: str, start: int, end: int, kind: str, question: str) -> tuple[int, int, str]:
    """Where the gap goes and what it reads, so it renders as its own block.

    Returns the span of the draft it replaces (the deleted sentences plus the
    horizontal spaces that only separated them from a neighbour) and the block.
    """
    if kind != "sentence":  # list item, heading, table row: stay inside the structure
        return start, end, f"{GAP_LABEL} {question}"
    line_start = draft.rfind("\n", 0, start) + 1
    nl = draft.find("\n", end)
    line_end = len(draft) if nl < 0 else nl
    prefix = suffix = ""
    if draft[line_start:start].strip():
        while start > line_start and draft[start - 1] in " \t":
            start -= 1
        prefix = "\n\n"
    elif line_start > 0:
        prev_start = draft.rfind("\n", 0, line_start - 1) + 1
        if draft[prev_start : line_start - 1].strip():
            prefix = "\n"
    if draft[end:line_end].strip():
        while end < line_end and draft[end] in " \t":
            end += 1
        suffix = "\n\n"
    elif nl >= 0:
        nxt = draft.find("\n", nl + 1)
        if draft[nl + 1 : len(draft) if nxt < 0 else nxt].strip():
            suffix = "\n"
    return start, end, f"{prefix}> {GAP_LABEL} {question}{suffix}"


def verify_draft(
    draft: str,
    record: Record | Mapping[str, str],
    rules: Sequence[SentenceRule] = DEFAULT_RULES,
    *,
    max_chars: int = MAX_DRAFT_CHARS,
    strict: bool = False,
    judge: SentenceJudge | Callable[[Mapping[str, str]], Any] | None = None,
) -> DraftVerdict:
    """Check ``draft`` against ``record``: delete, discard, and leave gaps.

    ``rules`` run in order on every sentence outside fenced code; the first that
    objects names the removal (``Removal.rules`` lists all that objected). An empty
    draft is returned as it is, clean. A sentence the rules cannot read (another
    language, mostly symbols) is reported in ``.unsupported`` with a warning finding;
    ``strict=True`` deletes it instead (rule ``unsupported``, code
    ``unsupported_text``).

    ``judge`` (a :class:`~trustgate.drafts.ModelJudge`, a
    :class:`~trustgate.drafts.FunctionJudge` or a plain function) is then asked
    about the sentences the rules kept, and may delete more (rule ``judge``, codes
    ``judge_causal`` and ``judge_hedged``), never fewer; a judge that fails twice on
    one batch raises :class:`~trustgate.errors.JudgeError`
    (:mod:`trustgate.verifiers.drafts.judge`).

    Example:
        ```python
        from trustgate.drafts import FiguresRule, DEFAULT_RULES, Record, verify_draft

        record = Record.from_text("14:02 checkout p99 latency 9.2 seconds\\n")
        verdict = verify_draft(
            "Latency rose to 12 seconds at 14:02. [[1]] It was probably the cache. [[7]]",
            record,
            rules=(*DEFAULT_RULES, FiguresRule()),
        )
        assert [r.rule for r in verdict.removed] == ["figures", "hedge"]
        assert [c.id for c in verdict.invalid_citations] == ["7"]
        ```
    """
    rec, ruleset, who = _prepare(draft, record, rules, max_chars, judge)
    if who is None:
        return _gcless(lambda: _verify(draft, rec, ruleset, strict))
    reading = _gcless(lambda: _read(draft, rec, ruleset, strict))
    where, texts = _to_judge(reading)
    outcome = _judging.run(who, texts)
    return _gcless(lambda: _assemble(reading, *_judged(reading, where, outcome)))


async def averify_draft(
    draft: str,
    record: Record | Mapping[str, str],
    rules: Sequence[SentenceRule] = DEFAULT_RULES,
    *,
    max_chars: int = MAX_DRAFT_CHARS,
    strict: bool = False,
    judge: SentenceJudge | Callable[[Mapping[str, str]], Any] | None = None,
) -> DraftVerdict:
    """:func:`verify_draft` in a coroutine: the judge's calls are awaited (a model's
    ``ainvoke``), the rules run on trustgate's threads so the event loop stays free.

    Example:
        ```python
        from trustgate.drafts import Record, averify_draft

        verdict = await averify_draft("The deploy caused it.", Record())
        assert [r.rule for r in verdict.removed] == ["causal"]
        ```
    """
    from trustgate import _executor

    rec, ruleset, who = _prepare(draft, record, rules, max_chars, judge)
    if who is None:
        verdict: DraftVerdict = await _executor.run_async(
            lambda: _gcless(lambda: _verify(draft, rec, ruleset, strict)), _RULES_LIMIT
        )
        return verdict
    reading: Reading = await _executor.run_async(
        lambda: _gcless(lambda: _read(draft, rec, ruleset, strict)), _RULES_LIMIT
    )
    where, texts = _to_judge(reading)
    outcome = await _judging.arun(who, texts)
    done: DraftVerdict = await _executor.run_async(
        lambda: _gcless(lambda: _assemble(reading, *_judged(reading, where, outcome))),
        _RULES_LIMIT,
    )
    return done


_RULES_LIMIT = 3600.0
"""Seconds the rules may take on trustgate's threads in :func:`averify_draft`. Their
work is bounded by ``max_chars``; this only keeps a wedged thread from being awaited
forever (a gate bounds the whole check by the check's own, shorter, time limit)."""


def _prepare(
    draft: Any, record: Any, rules: Any, max_chars: int, judge: Any
) -> tuple[Record, tuple[SentenceRule, ...], SentenceJudge | None]:
    if not isinstance(draft, str):
        raise InputError(f"draft must be str, not {type(draft).__name__}")
    if len(draft) > max_chars:
        raise InputError(f"draft is {len(draft)} characters; the limit is {max_chars}")
    rec = _as_record(record)
    ruleset = _check_rules(rules)
    return rec, ruleset, None if judge is None else _judge.as_judge(judge)


T = TypeVar("T")


def _gcless(fn: Callable[[], T]) -> T:
    """Run ``fn`` with the cyclic collector off (when it was on).

    A long draft builds tens of thousands of small acyclic objects (sentences, spans,
    kept units); the cyclic collector walking them over and over cost a third of the
    time. It runs as usual once the verdict is built, and while a judge is called.
    """
    if not gc.isenabled():
        return fn()
    gc.disable()
    try:
        return fn()
    finally:
        gc.enable()


class _JudgeRule(SentenceRule):
    """Names a deletion the sentence judge made (it never runs as a rule)."""

    name = "judge"

    def __init__(self, code: str) -> None:
        self.code = code

    def check(self, sentence: DraftSentence) -> str | None:
        del sentence
        return None


_JUDGE_CAUSAL = _JudgeRule("judge_causal")
_JUDGE_HEDGED = _JudgeRule("judge_hedged")


def _to_judge(reading: Reading) -> tuple[list[int], list[str]]:
    """The units the rules kept that hold a word, and each as the judge is shown it
    (citation markers stripped: the judge never sees the record)."""
    where: list[int] = []
    texts: list[str] = []
    reasons = reading.reasons
    for i in range(len(reading.units)):
        if i in reasons:
            continue
        raw = reading.text(i)
        plain = _MARKER.sub("", raw) if "[[" in raw else raw
        text = _judge.sentence_text(plain)
        if any(ch.isalnum() for ch in text):
            where.append(i)
            texts.append(text)
    return where, texts


def _judged(
    reading: Reading, where: Sequence[int], outcome: _judging.Outcome
) -> tuple[dict[int, str], JudgeSummary]:
    """Apply the judge's labels: a guess is deleted, a cause is deleted unless the
    sentence cites a line of the record (the causal law the rules follow). Only kept
    units were asked about, so nothing the rules deleted can come back."""
    name = outcome.summary.judge
    words: dict[int, str] = {}
    for i, judgment in zip(where, outcome.judgments, strict=True):
        if judgment.label == "hedged":
            rule, reason = (
                _JUDGE_HEDGED,
                f"the sentence judge {name!r} read a guess in \u201c{judgment.words}\u201d: "
                "a hedge is deleted even when cited",
            )
        elif judgment.label == "causal" and not reading.found.cited[i]:
            rule, reason = (
                _JUDGE_CAUSAL,
                f"the sentence judge {name!r} read a cause in \u201c{judgment.words}\u201d, "
                "and the sentence cites no line of the record",
            )
        else:
            continue
        reading.reasons[i] = [(rule, reason)]
        words[i] = judgment.words
    return words, outcome.summary.model_copy(update={"deletions": len(words)})


def _verify(
    draft: str, rec: Record, ruleset: tuple[SentenceRule, ...], strict: bool
) -> DraftVerdict:
    return _assemble(_read(draft, rec, ruleset, strict))


def _read(draft: str, rec: Record, ruleset: tuple[SentenceRule, ...], strict: bool) -> Reading:
    """Run the rules: every non-code unit, with the reasons it is deleted for."""
    return _reading.read(draft, rec, ruleset, strict, _EXHAUSTIVE)


def _assemble(
    reading: Reading,
    words: Mapping[int, str] | None = None,
    judged: JudgeSummary | None = None,
) -> DraftVerdict:
    """The verdict: deleted runs replaced by gaps, invalid markers dropped.

    ``words`` holds, per unit the judge deleted, the words it named; ``judged`` is
    what the judge did (``None``: no judge was asked).
    """
    draft, units, reasons = reading.draft, reading.units, reading.reasons
    cited = reading.found.cited
    # Group deleted units into runs (consecutive, same block): one gap per run.
    runs: list[list[int]] = []
    for i in sorted(reasons):
        if runs and runs[-1][-1] == i - 1 and units[i - 1][3] == units[i][3]:
            runs[-1].append(i)
        else:
            runs.append([i])

    removed: list[Removal] = []
    gaps_spec: list[tuple[int, int, str, str, str | None, tuple[str, ...], str]] = []
    for n, run in enumerate(runs, start=1):
        gap_id = f"gap-{n}"
        first = units[run[0]]
        anchor = _anchor(reading, run[0])
        anchor_text = None
        anchor_ids: tuple[str, ...] = ()
        if anchor is not None:
            anchor_text = _MARKER.sub("", reading.text(anchor)).strip()
            anchor_ids = cited[anchor]
        question = gap_question(
            anchor_text, heading=anchor is not None and units[anchor][2] == "heading"
        )
        start, end, block = _gap_block(draft, first[0], units[run[-1]][1], first[2], question)
        gaps_spec.append((start, end, block, gap_id, anchor_text, anchor_ids, question))
        for i in run:
            rule, reason = reasons[i][0]
            removed.append(
                Removal.model_construct(
                    sentence=reading.text(i),
                    rule=rule.name,
                    code=rule.code,
                    reason=reason,
                    rules=tuple(r.name for r, _ in reasons[i]),
                    cited=cited[i],
                    start=units[i][0],
                    end=units[i][1],
                    gap_id=gap_id,
                    words=words.get(i) if words else None,
                )
            )

    # Assemble the output: the draft, with runs replaced by gap blocks and invalid
    # markers dropped from kept sentences. Nothing else changes.
    edits: list[tuple[int, int, str, int]] = []  # start, end, text, gap index or -1
    for g, spec in enumerate(gaps_spec):
        edits.append((spec[0], spec[1], spec[2], g))
    fixes = reading.found.edits
    for i, fix in fixes.items():
        if i not in reasons:
            edits.extend((fs, fe, rep, -1) for fs, fe, rep in fix)
    edits.sort(key=lambda e: e[0])
    pieces: list[str] = []
    gaps: list[Gap] = []
    pos = 0
    out_len = 0
    for s, e, rep, g in edits:
        chunk = draft[pos:s]
        pieces.append(chunk)
        out_len += len(chunk)
        if g >= 0:
            start, end, block, gap_id, anchor_text, anchor_ids, question = gaps_spec[g]
            gaps.append(
                Gap(
                    id=gap_id,
                    question=question,
                    position=out_len,
                    anchor=anchor_text,
                    anchor_ids=anchor_ids,
                    block=block,
                    replaced=(start, end),
                )
            )
        pieces.append(rep)
        out_len += len(rep)
        pos = e
    pieces.append(draft[pos:])
    return DraftVerdict.model_construct(
        text="".join(pieces),
        kept=_LazyKept(functools.partial(_kept, reading)),  # type: ignore[arg-type]
        removed=tuple(removed),
        gaps=tuple(gaps),
        invalid_citations=tuple(_invalid(c) for c in reading.found.invalid),
        testimony=(),
        unsupported=tuple(
            UnsupportedText.model_construct(
                sentence=reading.text(i), start=units[i][0], end=units[i][1]
            )
            for i in reading.unsupported
        ),
        judge=judged,
    )


def _kept(reading: Reading) -> tuple[KeptSentence, ...]:
    """Every unit the verdict keeps, as it reads in the output."""
    draft, units, reasons = reading.draft, reading.units, reading.reasons
    cited, fixes = reading.found.cited, reading.found.edits
    if not reasons and not fixes:  # nothing deleted, nothing rewritten: as written
        return tuple(
            [
                KeptSentence(draft[s:e], s, e, kind, c)
                for (s, e, kind, _), c in zip(units, cited, strict=True)
            ]
        )
    kept: list[KeptSentence] = []
    for i, (s, e, kind, _) in enumerate(units):
        if i in reasons:
            continue
        fix = fixes.get(i)
        text = draft[s:e]
        if fix is not None:
            text = _apply(text, [(fs - s, fe - s, r) for fs, fe, r in fix])
        kept.append(KeptSentence(text, s, e, kind, cited[i]))
    return tuple(kept)


def _invalid(c: _markers.Invalid) -> InvalidCitation:
    id_, marker, sentence, start, malformed, fix = c
    if malformed:
        return InvalidCitation(
            id=id_, marker=marker, sentence=sentence, start=start, malformed=True
        )
    return InvalidCitation(id=id_, marker=marker, sentence=sentence, start=start, fix=fix)


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for s, e, rep in sorted(edits):
        out.append(text[pos:s])
        out.append(rep)
        pos = e
    out.append(text[pos:])
    return "".join(out)


_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")


def _same_paragraph(draft: str, earlier: Unit, later: Unit) -> bool:
    """Same block, or neighbouring items of one list (rows of one table): a list is
    the paragraph its items belong to, so an item's anchor can be the item above."""
    if earlier[3] == later[3]:
        return True
    return (
        earlier[2] == later[2]
        and later[2] in ("item", "row")
        and _BLANK_LINE.search(draft, earlier[1], later[0]) is None
    )


def _anchor(reading: Reading, first: int) -> int | None:
    """The nearest preceding kept unit in the same paragraph, else its heading, else none."""
    units, reasons = reading.units, reading.reasons
    i = first - 1
    while i >= 0 and _same_paragraph(reading.draft, units[i], units[i + 1]):
        if i not in reasons:
            return i
        i -= 1
    while i >= 0:
        if units[i][2] == "heading":
            return None if i in reasons else i
        i -= 1
    return None


_ANSWER_MARKERS = re.compile(r"\s*\[\[[^\[\]\n]*\]\]|\[\[|\]\]")


def answer_gap(verdict: DraftVerdict, gap_id: str, answer: str, author: str) -> DraftVerdict:
    """Close a gap with a person's answer, as attributed testimony.

    The answer goes in as ``Per <author> (not in the record): …`` in place of the
    question, with any citation marker stripped: testimony is not a record line, and
    a marker on it would dress a person's recollection up as evidence.

    Example:
        ```python
        from trustgate.drafts import Record, answer_gap, verify_draft

        verdict = verify_draft("Latency rose at 14:02. The cache caused it.", Record())
        closed = answer_gap(verdict, verdict.gaps[0].id, "A cache flush at 14:01.", "Dana (SRE)")
        assert "Per Dana (SRE) (not in the record): A cache flush at 14:01." in closed.text
        assert not closed.gaps
        ```
    """
    if not isinstance(verdict, DraftVerdict):
        raise InputError(f"verdict must be a DraftVerdict, not {type(verdict).__name__}")
    for value, what in ((gap_id, "gap id"), (answer, "answer"), (author, "author")):
        if not isinstance(value, str):
            raise InputError(f"{what} must be str, not {type(value).__name__}")
    said = " ".join(_ANSWER_MARKERS.sub(" ", answer).split())
    who = " ".join(_ANSWER_MARKERS.sub(" ", author).split())
    if not said:
        raise InputError("the answer is empty (after removing citation markers)")
    if not who:
        raise InputError("an answer needs an author: testimony is attributed or it is not used")
    gap = next((g for g in verdict.gaps if g.id == gap_id), None)
    if gap is None:
        known = ", ".join(g.id for g in verdict.gaps) or "none"
        raise InputError(f"no open gap {gap_id!r} (open gaps: {known})")
    text = verdict.text
    if text[gap.position : gap.position + len(gap.block)] != gap.block:
        raise InputError(f"gap {gap_id!r} is not where the verdict says; was the text edited?")
    statement = testimony_text(who, said)
    label = f"{GAP_LABEL} {gap.question}"
    new_block = gap.block.replace(label, statement, 1)
    delta = len(new_block) - len(gap.block)
    new_text = text[: gap.position] + new_block + text[gap.position + len(gap.block) :]
    offset = gap.position + new_block.find(statement)

    def shift(position: int) -> int:
        return position + delta if position > gap.position else position

    gaps = tuple(
        g.model_copy(update={"position": shift(g.position)}) for g in verdict.gaps if g.id != gap_id
    )
    testimony = (
        *(t.model_copy(update={"position": shift(t.position)}) for t in verdict.testimony),
        Testimony(gap_id=gap_id, author=who, answer=said, text=statement, position=offset),
    )
    return verdict.model_copy(update={"text": new_text, "gaps": gaps, "testimony": testimony})
