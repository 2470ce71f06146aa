"""Speed changes to the draft verifier change no verdict.

``tests/corpus/verdict_snapshot.json`` holds a digest of the full verdict (text, kept
sentences, removals with their reasons, gaps, invalid citations, unsupported text) of
every input in :mod:`_draft_inputs`: the tuning and dev sentences alone and cited,
the honest drafts, the lexicon examples, the benchmark inputs and generated Markdown.
It was written by the verifier as it stood before the speed work and is rewritten
only by a change that is *meant* to change verdicts (a rule change, measured on the
held-out set and said so in its commit), with::

    .venv/bin/python tests/unit/test_draft_equivalence.py --write

Any other change that moves a digest is a bug.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make the package and helpers importable
    sys.path[:0] = [
        str(Path(__file__).resolve().parents[2]),
        str(Path(__file__).resolve().parents[1]),
    ]

from _draft_inputs import RECORD, all_inputs
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.verifiers.drafts.figures import FiguresRule
from trustgate.verifiers.drafts.rules import DEFAULT_RULES
from trustgate.verifiers.drafts.verify import DraftVerdict, verify_draft

SNAPSHOT = Path(__file__).resolve().parents[1] / "corpus" / "verdict_snapshot.json"
WITH_FIGURES = (*DEFAULT_RULES, FiguresRule())


def canonical(verdict: DraftVerdict) -> dict[str, Any]:
    return {
        "text": verdict.text,
        "kept": [(k.text, k.start, k.end, k.kind, list(k.cited)) for k in verdict.kept],
        # ``words`` is the sentence judge's (never asked here): a rule's removal has none
        "removed": [
            r.model_dump(mode="json", exclude={"words"} if r.words is None else None)
            for r in verdict.removed
        ],
        "gaps": [g.model_dump(mode="json") for g in verdict.gaps],
        # ``fix`` is how the text was reached (checked by test_draft_check_edits), not
        # part of the verdict
        "invalid": [c.model_dump(mode="json", exclude={"fix"}) for c in verdict.invalid_citations],
        "unsupported": [u.model_dump(mode="json") for u in verdict.unsupported],
    }


def digest(verdict: DraftVerdict) -> str:
    data = json.dumps(canonical(verdict), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:8]


def verdicts() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, draft, record in all_inputs():
        out[key] = digest(verify_draft(draft, record))
        if key.startswith(("markdown/", "honest/", "bench/")):
            out[key + "/strict"] = digest(verify_draft(draft, record, strict=True))
            out[key + "/figures"] = digest(verify_draft(draft, record, rules=WITH_FIGURES))
    return out


def _stored() -> tuple[str, list[str]]:
    data = json.loads(SNAPSHOT.read_text("utf-8"))
    return data["keys"], " ".join(data["digests"]).split()


def _keys_digest(keys: list[str]) -> str:
    return hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:16]


def test_verdicts_match_the_snapshot() -> None:
    keys_digest, expected = _stored()
    got = verdicts()
    keys = list(got)
    assert _keys_digest(keys) == keys_digest, "the inputs changed: rewrite the snapshot knowingly"
    changed = [k for k, old in zip(keys, expected, strict=True) if got[k] != old]
    assert not changed, f"{len(changed)} verdicts changed, first: {changed[:10]}"


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit("usage: test_draft_equivalence.py --write")
    flat = verdicts()
    lines = [" ".join(list(flat.values())[i : i + 12]) for i in range(0, len(flat), 12)]
    data = {"keys": _keys_digest(list(flat)), "digests": lines}
    SNAPSHOT.write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    print(f"wrote {SNAPSHOT}")


def _vocabulary() -> list[str]:
    from trustgate.verifiers.drafts._grammar import classes, lexicon, spelling

    lex = lexicon()
    out = set(lex.verbs) | {w for ws in lex.words.values() for w in ws}
    for table in lex.phrases.values():
        for phrases in table.values():
            out.update(" ".join(p) for p in phrases)
    # the word classes the constructions are read with, and misspelt triggers
    out.update(w for ws in classes().words.values() for w in ws if w.strip())
    out.update(" ".join(p) for ps in classes().phrases.values() for p in ps)
    out.update(spelling.variants())
    return sorted(out)


_WORDS = st.sampled_from(_vocabulary())
_GLUE = st.sampled_from(
    [
        " ",
        " ",
        " ",
        ", ",
        "; ",
        ": ",
        " - ",
        " — ",
        " – ",
        " (",
        ") ",
        ". ",
        "? ",
        "! ",
        "\n",
        "\n\n",
        "\n- ",
        "\n## ",
        "\n| ",
        " [[1]] ",
        "[[1]]",
        ". [[2]]",
        " [[99]] ",
        " [[1",
        "*",
        " **",
        "** ",
        " `x` ",
        ' "quoted words" ',
        " foo_bar ",
        " a.b ",
        " CamelCase ",
        " http://x.io/a ",
        " it's ",
        "'",
        " and ",
        " the ",
        " we ",
        " was ",
        " were ",
        " is ",
        " by ",
        " to ",
        " not ",
        " quickly ",
        " thus ",
        " b/c ",
        " w/o ",
        " => ",
        " -> ",
        " → ",
        "\u00a0",
        "\u200b",
        "é",
        "’",
        "“",
        "”",
        "…",
        "а",
        "İ",
    ]
)


@st.composite
def _drafts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(_WORDS, _GLUE, st.booleans()), max_size=40))
    return "".join((w.capitalize() if cap else w) + glue for w, glue, cap in parts)


# More when a change to the readings (trustgate/verifiers/drafts/_grammar/) or to the
# pre-scan (_triggers.py) is being checked: TRUSTGATE_EQUIVALENCE_EXAMPLES=20000.
_EXAMPLES = int(os.environ.get("TRUSTGATE_EQUIVALENCE_EXAMPLES", "1500"))


@settings(max_examples=_EXAMPLES, deadline=None)
@given(_drafts())
def test_reading_candidates_only_changes_no_verdict(draft: str) -> None:
    """Skipping the sentences no reading could fire on is a speed-up only."""
    from trustgate.verifiers.drafts import verify as module

    fast = canonical(verify_draft(draft, RECORD))
    module._EXHAUSTIVE = True
    try:
        slow = canonical(verify_draft(draft, RECORD))
    finally:
        module._EXHAUSTIVE = False
    assert fast == slow


def test_the_garbage_collector_runs_again_after_a_verdict() -> None:
    """verify_draft pauses the cyclic collector while it builds a verdict, and only then."""
    import gc

    import pytest

    from trustgate.verifiers.drafts.rules import SentenceRule

    class Broken(SentenceRule):
        name = code = "broken"

        def check(self, sentence: object) -> str | None:
            assert not gc.isenabled()
            raise RuntimeError("boom")

    assert gc.isenabled()
    verify_draft("The deploy caused it.", RECORD)
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        verify_draft("The deploy caused it.", RECORD, rules=(Broken(),))
    assert gc.isenabled()
    gc.disable()
    try:
        verify_draft("The deploy caused it.", RECORD)
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()
