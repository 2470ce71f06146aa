"""What the draft rules read: one sentence, folded, masked and cut into tokens.

A rule that reads raw text is fooled two ways. It is *evaded* by letters that look
alike but are not the same (a Cyrillic ``а`` in ``cаused``, a zero-width space in
``be​cause``, a combining accent, full-width letters), so everything is folded first:
NFKC, confusable letters to their Latin twins, invisible and combining characters
dropped. And it is *fooled the other way* by words that are not prose: a trigger word
inside inline code, a quoted mention, a URL or path, an identifier such as
``cause_code`` or ``DUE_TO_QUOTA``, or a name (``Dr. Reason``, ``the May release``) is
not a claim, so those spans are masked to a neutral token before any rule looks.

Everything here is linear in the length of the sentence: single passes of
``str.translate``, ``unicodedata`` and regular expressions without nested
quantifiers.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["MASK", "Sentence", "fold", "read", "unsupported"]

MASK = "zzmask"
"""The token a masked span becomes: a neutral noun no lexicon entry contains."""

# Letters from other scripts that render like Latin ones (the Unicode confusables
# list, restricted to the letters an attacker needs for English words).
_CONFUSABLE = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i",
        "ї": "i", "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p",
        "ԛ": "q", "ѕ": "s", "т": "t", "у": "y", "ѡ": "w", "х": "x", "ү": "y", "ɡ": "g",
        "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K",
        "М": "M", "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y", "Ү": "Y",
        # Greek
        "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "γ": "y", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z",
        "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T",
        "Υ": "Y", "Χ": "X",
        # Latin look-alikes and small capitals
        "ı": "i", "ȷ": "j", "Ɩ": "l", "ʟ": "l", "ɑ": "a", "ꞵ": "b", "ᴄ": "c", "ᴅ": "d",
        "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j", "ᴋ": "k", "ᴍ": "m", "ɴ": "n",
        "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w",
        "ʏ": "y", "ᴢ": "z",
        # quotes and apostrophes made plain; emphasis marks are not words
        "‘": "'", "’": "'", "‛": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
        "«": '"', "»": '"', "*": " ", "_": "_",
    }  # fmt: skip
)
# Characters that render as nothing (or as a join) inside a word.
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")  # fmt: skip


def fold(text: str) -> str:
    """``text`` as the rules read it: NFKC, confusables and quotes folded, invisible and
    combining characters removed. Case is kept (masking needs it). ASCII text is
    returned unchanged except for ``*``: nothing in ASCII needs folding."""
    if text.isascii():
        return text.replace("*", " ") if "*" in text else text
    text = _INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFKD", text)
    if not text.isascii():
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
        text = unicodedata.normalize("NFKC", text)
    return text.translate(_CONFUSABLE)


_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[A-Za-z]")


def unsupported(text: str) -> bool:
    """True when the rules cannot read ``text``: mostly another script, or mostly
    symbols. Such a sentence is neither a claim the rules cleared nor one they caught."""
    folded = fold(text)
    letters = len(_LETTER.findall(folded))
    visible = len(folded) - folded.count(" ")
    if visible < 12:
        return False
    if letters < 0.4 * visible:
        return True  # mostly symbols, digits or binary noise
    return len(_LATIN.findall(folded)) < 0.6 * letters


# Spans that are not prose: inline code, URLs, e-mail addresses, paths, file names,
# identifiers (snake_case, CamelCase, dotted.names, key=value, words with digits), and
# quoted mentions. Each alternative is a flat character class run: no backtracking.
_NOT_PROSE = re.compile(
    r"`[^`\n]*+`"
    r"|(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]*+://\S++"
    r"|(?<![\w.-])www\.\S++"
    r"|(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]++"
    r"|(?<![\w./-])[\w.-]++(?:/[\w.-]++)++/?"
    r"|[#@$%]\w[\w.-]*+"
    r"|(?<!\w)[A-Za-z0-9]*+_\w*+"
    r"|(?<![\w.=:])\w++(?:[.:]\w++)*+=[\w.:/=-]*+"
    r"|(?<![\w.])[A-Za-z][\w-]*+\.(?:md|txt|json|ya?ml|py|js|ts|go|rs|java|sh|conf|cfg|ini|toml"
    r"|log|csv|sql|html|xml|tf|rb|php|exe|dll|so|jar|zip|tar|gz)\b"
    r"|(?<![\w.])\w++(?:\.\w++)++"
    r"|\b[a-z]++[A-Z]\w*+"
    r"|\b[A-Z][a-z]++[A-Z]\w*+"
    r"|(?<![\w-])\w++(?:-\w++)++"
    r"|\b[A-Za-z]++\d\w*+"
    r"|\(\)"
)
_DIGIT = re.compile(r"\d")
_ALPHA = re.compile(r"[A-Za-z]")
# Shorthand that looks like a path but is prose (b/c, w/o, d/t, and/or, 24/7).
_SHORTHAND = frozenset({"b/c", "w/o", "d/t", "w/", "and/or", "b/w", "r/w", "i/o", "n/a", "24/7"})
_QUOTED = re.compile(
    r"(?<![\w\"])\"[^\"\n]{1,200}\"(?![\w\"])"
    r"|(?<![\w'])'[^'\n]{1,200}'(?![\w'])"
)


def _mask(m: re.Match[str]) -> str:
    s = m.group()
    if s.lower() in _SHORTHAND:
        return s
    if "-" in s and "." not in s and _DIGIT.search(s) is None:
        return s  # a hyphenated word (knock-on, six-hour-old), not an identifier
    if "." in s and not (_DIGIT.search(s) or s.count(".") >= 2 or "." in s[1:-1]):
        return s
    return f" {MASK} "


# Words: letters/digits with inner apostrophes; arrows and punctuation as tokens.
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|=>|->|→|⇒|[^\sA-Za-z0-9]")
_SLASH_SHORT = re.compile(r"\b(b/c|w/o|d/t)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence as the rules read it."""

    folded: str
    """Folded text with non-prose spans masked (case kept)."""
    tokens: tuple[str, ...]
    """Lower-cased tokens of ``folded``."""
    cased: tuple[str, ...]
    """The same tokens with their case, for telling names from words."""


# Anything that could start a span _NOT_PROSE masks; most sentences hold none.
_SUSPECT = re.compile(r"[`/@#$%_=]|\w\.\w|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|\(\)")


def read(text: str) -> Sentence:
    """Fold, mask and tokenise one sentence."""
    folded = fold(text)
    if '"' in folded or "'" in folded:
        folded = _QUOTED.sub(_mask, folded)
    if _SUSPECT.search(folded) is not None:
        folded = _NOT_PROSE.sub(_mask, folded)
        if "/" in folded:
            folded = _SLASH_SHORT.sub(lambda m: m.group().replace("/", ""), folded)
    cased = _TOKEN.findall(folded)
    lowered = folded.lower()
    tokens = _TOKEN.findall(lowered) if len(lowered) == len(folded) else []
    if len(tokens) != len(cased):
        tokens = [t.lower() for t in cased]
    return Sentence(folded, tuple(tokens), tuple(cased))
