"""What the draft rules read: one sentence, folded, masked and cut into tokens.

A rule that reads raw text is fooled two ways. It is *evaded* by letters that look
alike but are not the same (a Cyrillic ``а`` in ``cаused``, a zero-width space in
``be​cause``, a combining accent, full-width letters), so everything is folded first:
NFKC, confusable letters to their Latin twins, invisible and combining characters
dropped. And it is *fooled the other way* by words that are not prose: a trigger word
inside inline code, a quoted mention (a quoted statement is read: a cause in
quotation marks, a link title or a ``title=`` attribute is a cause), a URL or path,
an identifier such as
``cause_code`` or ``DUE_TO_QUOTA``, or a name (``Dr. Reason``, ``the May release``) is
not a claim, so those spans are masked to a neutral token before any rule looks.

Everything here is linear in the length of the sentence: single passes of
``str.translate``, ``unicodedata`` and regular expressions without nested
quantifiers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from trustgate.verifiers.drafts import _lists

__all__ = [
    "MASK",
    "Sentence",
    "fold",
    "foreign_words",
    "mostly_symbols",
    "read",
    "symbols_only_matter",
    "unsupported",
]

MASK = "zzmask"
"""The token a masked span becomes: a neutral noun no lexicon entry contains."""

# Letters from other scripts that render like Latin ones (the Unicode confusables
# list, restricted to the letters an attacker needs for English words), and quotes.
_CONFUSABLE = str.maketrans(
    "авсԁеёһіїјкӏмнорԛѕтуѡхүɡАВСЕНІЈКМОРЅТХУҮαβεικνορτυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧıȷƖʟɑꞵᴄᴅᴇɢʜɪᴊᴋᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ‘’‛ʼ“”„‟«»",
    'abcdeehiijklmhopqstywxygABCEHIJKMOPSTXYYabeikvoptuxyABEZHIKMNOPTYXijllabcdeghijkmnoprstuvwyz\'\'\'\'""""""',
)
# Characters that render as nothing (or as a join) inside a word.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


def fold(text: str) -> str:
    """``text`` as the rules read it: NFKC, confusables and quotes folded, invisible and
    combining characters removed, ``*`` (emphasis) a space. Case is kept (masking
    needs it). ASCII text is returned unchanged except for ``*``: nothing in ASCII
    needs folding."""
    if text.isascii():
        return text.replace("*", " ") if "*" in text else text
    text = _INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFKD", text)
    if not text.isascii():
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
        text = unicodedata.normalize("NFKC", text)
    text = text.translate(_CONFUSABLE)
    return text.replace("*", " ") if "*" in text else text


# What a readable sentence is made of: letters, digits, whitespace and the
# punctuation of prose, times and figures.
_READABLE = str.maketrans(
    "",
    "",
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t\r\n.,;:!?'\"()-/%",
)
_READABLE_BYTES = (
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t\r\n.,;:!?'\"()-/%"
)
# Function words: an English sentence of any length holds some; a sentence in another
# Latin-script language holds its own instead (the lists: lexicon/text.txt).
_ENGLISH = frozenset(_lists.get("english-function"))
_FOREIGN = frozenset(_lists.get("other-language"))
_WORDS = re.compile(r"[^\W\d_]+")


def foreign_words() -> frozenset[str]:
    """The function words of other languages :func:`unsupported` counts."""
    return _FOREIGN


_LETTERS_ONLY = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalpha()})
_COMMON_ENGLISH = tuple(f" {w} " for w in _lists.get("english-common"))
_FOREIGN_WORD = re.compile(r"\b(?:" + "|".join(sorted(_FOREIGN)) + r")\b")


def symbols_only_matter(draft: str) -> bool:
    """True when, for every sentence of ``draft``, :func:`unsupported` comes down to
    :func:`mostly_symbols`: an ASCII draft holding no function word of another
    language (sentences start and end next to spaces, brackets or punctuation, so a
    word boundary inside a sentence is one in the draft)."""
    if not draft.isascii():
        return False
    # Every foreign word the per-sentence check could find is a run of letters here
    # (a superset: "der_x" counts too, which only means the full check runs).
    return _FOREIGN.isdisjoint(draft.lower().translate(_LETTERS_ONLY).split())


def mostly_symbols(text: str) -> bool:
    """The ASCII half of :func:`unsupported` for a draft with no foreign word (bytes
    deletion is a C loop; ``str.translate`` with a deletion table is not)."""
    n = len(text)
    return n >= 12 and len(text.encode("ascii").translate(None, _READABLE_BYTES)) * 2 > n


def unsupported(text: str) -> bool:
    """True when the rules cannot read ``text``: another language (another script, or
    a Latin-script language by its function words), or mostly symbols and noise. Such
    a sentence is neither a claim the rules cleared nor one they caught; it is
    reported (and, in strict mode, deleted as unverifiable)."""
    if len(text) < 12:
        return False
    if text.isascii():
        if len(text.translate(_READABLE)) * 2 > len(text):
            return True  # mostly symbols
        low = text.lower()
        if any(w in low for w in _COMMON_ENGLISH) or _FOREIGN_WORD.search(low) is None:
            return False  # English, as nearly every sentence is: no closer look
        words = low.split()
        foreign = sum(1 for w in words if w.strip(".,;:!?") in _FOREIGN)
        if foreign < 2:
            return False
        english = sum(1 for w in words if w.strip(".,;:!?") in _ENGLISH)
        return foreign > english
    folded = fold(text)
    letters = latin = other = 0
    for ch in folded:
        if ch.isalpha():
            letters += 1
            if ch.isascii():
                latin += 1
        elif not (ch.isspace() or ch.isdigit() or ch in ".,;:!?'\"()-/%—–…|*#>`_"):
            other += 1
    if other * 2 > len(folded):
        return True  # mostly symbols, emoji or binary noise
    if letters >= 8 and latin * 10 < letters * 6:
        return True  # another script
    words = [w.lower() for w in _WORDS.findall(folded)]
    foreign = sum(1 for w in words if w in _FOREIGN)
    return foreign >= 2 and foreign > sum(1 for w in words if w in _ENGLISH)


# Spans that are not prose: inline code, URLs, e-mail addresses, paths, file names,
# identifiers (snake_case, CamelCase, dotted.names, key=value, words with digits), and
# quoted mentions. Each alternative is a flat character class run: no backtracking.
def not_prose(extensions: Iterable[str]) -> re.Pattern[str]:
    """:data:`_NOT_PROSE` with the file name endings ``extensions`` (a parameter so a
    test can show what the list decides)."""
    ends = "|".join(sorted(map(re.escape, extensions), key=len, reverse=True)) or "(?!)"
    return re.compile(
        r"`[^`\n]*+`"
        r"|(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]*+://\S++"
        r"|(?<![\w.-])www\.\S++"
        r"|(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]++"
        r"|(?<![\w./-])[\w.-]++(?:/[\w.-]++)++/?"
        r"|[#@$%]\w[\w.-]*+"
        r"|(?<!\w)[A-Za-z0-9]*+_\w*+"
        r"|(?<![\w.=:])\w++(?:[.:]\w++)*+=[\w.:/=-]*+"
        r"|(?<![\w.])[A-Za-z][\w-]*+\.(?:" + ends + r")\b"
        r"|(?<![\w.])\w++(?:\.\w++)++"
        r"|\b[a-z]++[A-Z]\w*+"
        r"|\b[A-Z][a-z]++[A-Z]\w*+"
        r"|(?<![\w-])\w++(?:-\w++)++"
        r"|\b[A-Za-z]++\d\w*+"
        r"|\(\)"
    )


_NOT_PROSE = not_prose(_lists.get("file-extension"))
_DIGIT = re.compile(r"\d")
_ALPHA = re.compile(r"[A-Za-z]")
# Shorthand that looks like a path but is prose (b/c, w/o, d/t, and/or, 24/7).
_SHORTHAND = frozenset(_lists.get("shorthand"))
_QUOTED = re.compile(
    r"(?<![\w\"])\"[^\"\n]{1,200}\"(?![\w\"])"
    r"|(?<![\w'])'[^'\n]{1,200}'(?![\w'])"
)


# Words a clause holds and a quoted mention or a log message rarely does: a quote
# holding one, four words long or longer, is a statement quoted, read as prose.
_CLAUSE_MARKERS = frozenset(_lists.get("clause-marker"))
_QUOTE_WORD = re.compile(r"[A-Za-z']+")


def _mask_quote(m: re.Match[str]) -> str:
    """A quoted mention ("resulting in", 'the word "meant"') is masked; a quoted
    statement ('Our finding: "the outage happened because the disk filled"') is
    read, for a cause in quotation marks, a link title or a title= attribute is
    still shown to the reader."""
    inner = m.group()[1:-1]
    found = _QUOTE_WORD.findall(inner)
    if len(found) >= 4 and any(w.lower() in _CLAUSE_MARKERS for w in found):
        return f" {inner} "
    return _mask(m)


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
_SLASH_SHORT = re.compile(
    r"\b(" + "|".join(map(re.escape, _lists.get("slash-joined"))) + r")\b", re.IGNORECASE
)


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
        folded = _QUOTED.sub(_mask_quote, folded)
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
