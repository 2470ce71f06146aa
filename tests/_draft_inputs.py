"""Deterministic draft inputs for the verdict-equality tests of the draft verifier.

A speed change to ``verify_draft`` must not change a single verdict. These inputs are
what "a single verdict" is checked on: every sentence of the tuning and dev corpora
(alone, and cited), every honest draft, every example of the lexicon data, the benchmark's inputs
at a small size, and generated Markdown documents that put corpus sentences inside
every block the segmenter and the CommonMark reader distinguish (headings, lists,
nested and indented lists, tables, quotes, fenced and indented code, raw HTML, CRLF
line ends, citation markers valid, invented, glued and unclosed, text in other
scripts). The held-out set is never among them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

from trustgate.evidence.record import Record

CORPUS = Path(__file__).parent / "corpus"
RECORD = Record.from_lines(f"14:{i % 60:02d} event {i}" for i in range(1, 41))


def _jsonl(name: str) -> list[str]:
    path = CORPUS / name
    return [json.loads(x)["text"] for x in path.read_text("utf-8").splitlines() if x.strip()]


def corpus_sentences() -> list[str]:
    """Tuning and dev sentences, in file order."""
    return _jsonl("draft_sentences.jsonl") + _jsonl("dev_sentences.jsonl")


_FOREIGN = [
    "Der Dienst wurde durch einen Fehler in der Konfiguration gestört.",
    "La base de données est tombée à cause d'une mise à jour.",
    "データベースの接続プールが枯渇したため、障害が発生しました。",
    "Сервис упал из-за ошибки конфигурации.",
    "El servicio falló por un error de la configuración.",
    "⚠️🔥💥 ### $$$ %%% ^^^ !!!",
]
_CODE = [
    "kubectl rollout undo deploy/checkout\n",
    "SELECT * FROM orders WHERE cause = 'timeout';\n",
    "# the retry storm caused the outage\nretry(max=3)\n",
]
_HTML = [
    "<div>\nThe deploy caused the outage.\n</div>\n",
    "<!-- the cache probably failed -->\n",
    "<details>\n<summary>Timeline</summary>\n\n"
    "The pool was exhausted because of the deploy.\n\n</details>\n",
    "<p>Because the disk filled, writes failed.</p>\n",
]


def _sentence(rng: random.Random, pool: list[str]) -> str:
    s = rng.choice(pool)
    roll = rng.random()
    if roll < 0.35:
        return f"{s} [[{rng.randint(1, 40)}]]"
    if roll < 0.40:
        return f"{s} [[{rng.randint(41, 99)}]]"  # an id the record does not have
    if roll < 0.43:
        return f"{s[:-1]} [[{rng.randint(1, 40)}]]{s[-1]}"
    if roll < 0.45:
        return f"{s} [[{rng.randint(1, 40)}"  # unclosed
    if roll < 0.48:
        return rng.choice(_FOREIGN)
    return s


def _paragraph(rng: random.Random, pool: list[str]) -> str:
    sents = [_sentence(rng, pool) for _ in range(rng.randint(1, 5))]
    glue = rng.choice([" ", " ", " ", "  ", "\n", "[[1]]"])
    if glue == "[[1]]":
        return " ".join(s + "[[1]]" for s in sents)
    return glue.join(sents)


def _block(rng: random.Random, pool: list[str]) -> str:
    kind = rng.random()
    if kind < 0.30:
        return _paragraph(rng, pool)
    if kind < 0.38:
        return f"{'#' * rng.randint(1, 3)} {_sentence(rng, pool).rstrip('.')}"
    if kind < 0.52:
        bullet = rng.choice(["-", "*", "+", "1.", "2)", "•"])
        items = []
        for _ in range(rng.randint(1, 4)):
            indent = rng.choice(["", "", "", "  ", "    "])
            items.append(f"{indent}{bullet} {_paragraph(rng, pool)}")
        return "\n".join(items)
    if kind < 0.58:
        rows = [f"| {_sentence(rng, pool)} | {rng.randint(1, 9)} |" for _ in range(2)]
        return "| what | n |\n|---|---|\n" + "\n".join(rows)
    if kind < 0.64:
        return "\n".join(f"> {_paragraph(rng, pool)}" for _ in range(rng.randint(1, 2)))
    if kind < 0.72:
        fence = rng.choice(["```", "~~~", "````", "```py", "```py`x", "  ```", "    ```"])
        close = fence.strip().split("py")[0] if rng.random() < 0.85 else ""
        return f"{fence}\n{rng.choice(_CODE)}{close}"
    if kind < 0.78:
        return "\n".join("    " + line for line in _paragraph(rng, pool).split("\n"))
    if kind < 0.84:
        return rng.choice(_HTML).rstrip("\n")
    if kind < 0.88:
        return rng.choice(["---", "***", "* * *", "___"])
    if kind < 0.94:
        head = _sentence(rng, pool)
        return f"{head}\n{'    ' if rng.random() < 0.5 else '  '}{_sentence(rng, pool)}"
    return f"- {_sentence(rng, pool)}\n\n      {_sentence(rng, pool)}"


def markdown_documents(n: int = 300, seed: int = 13) -> Iterator[str]:
    """Generated Markdown documents built from tuning and dev sentences."""
    rng = random.Random(seed)
    pool = corpus_sentences()
    for _ in range(n):
        blocks = [_block(rng, pool) for _ in range(rng.randint(2, 14))]
        sep = rng.choice(["\n\n", "\n\n", "\n", "\n\n\n"])
        doc = sep.join(blocks) + rng.choice(["", "\n", "\n\n"])
        if rng.random() < 0.1:
            doc = doc.replace("\n", "\r\n")
        yield doc


def honest_drafts() -> list[tuple[str, Record]]:
    drafts = json.loads((CORPUS / "honest_drafts.json").read_text("utf-8"))
    return [(d["draft"], Record.from_lines(d["record"])) for d in drafts]


def lexicon_examples() -> list[str]:
    """The examples of the vocabulary (draft.txt), the word classes (grammar.txt) and
    the constructions (constructions.txt)."""
    from trustgate.verifiers.drafts._grammar import classes, lexicon
    from trustgate.verifiers.drafts._grammar.data import constructions

    out = [s for _, _, pos, neg in lexicon().entries for s in (pos, neg)]
    out += [s for _, _, s in classes().expanded()]
    out += [s for _, _, s in constructions()]
    return out


def bench_inputs(size: int = 6000) -> list[str]:
    import importlib.util
    import sys

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("_scan_bench", root / "bench" / "scan.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_scan_bench"] = module
    spec.loader.exec_module(module)
    out = [module.ordinary_draft(size * 4), module.trigger_dense_draft(size * 4)]
    out += [make(size) for make in module.ADVERSARIAL.values()]
    return out


def all_inputs() -> Iterator[tuple[str, str, Record]]:
    """(key, draft, record) for every input, in a fixed order."""
    empty = Record()
    for i, s in enumerate(corpus_sentences()):
        yield f"sentence/{i}", s, empty
        yield f"cited/{i}", f"{s} [[1]]", RECORD
    for i, (draft, record) in enumerate(honest_drafts()):
        yield f"honest/{i}", draft, record
    for i, s in enumerate(lexicon_examples()):
        yield f"lexicon/{i}", s, empty
    for i, draft in enumerate(bench_inputs()):
        yield f"bench/{i}", draft, RECORD
    for i, draft in enumerate(markdown_documents()):
        yield f"markdown/{i}", draft, RECORD
