"""URL and price integrity against an approved evidence set.

On runs that did web research the ground truth is finite and in hand: the pages the
research actually read and the prices it actually saw. So every URL and every price
in the draft must be one of them (compliance drafting's integrity gate). Both sides are
normalised the same way, so an honest draft that writes a URL or a price its own way
is not flagged, and a draft that invents one is.

Run it only where an evidence set exists: against an empty set every URL and price
is unapproved, which is the right answer for "the research found none".

**URLs** are every link a CommonMark or HTML renderer makes clickable, read with a
CommonMark parser (:func:`trustgate._markdown.links`): inline links and images
(``[x](//host)`` included), reference definitions (used or not) and reference links,
autolinks (``<https://...>``, ``<ftp://...>``, ``<name@host>``), and the URL-bearing
attributes of raw HTML (``<a href>``, ``src``, ``action``, ``srcset``, ``style``
``url()``...). On top of that the whole text, code included, is scanned for bare URLs
as a reader would copy them: ``scheme://...`` for any scheme, ``www.``, ``mailto:``,
``tel:`` and other schemes without ``//`` (``mailto tel sms xmpp callto javascript
vbscript data file magnet``), and e-mail addresses (read as ``mailto:``, as GitHub
links them). Entities and Markdown backslash escapes are resolved as a renderer does
(``&amp;`` is ``&``). Code is scanned, never skipped: a reader copies a URL from a code
block as readily as from prose, and skipping code would let a fence hide one. Where a
renderer puts code (:mod:`trustgate._markdown`) is reported as ``detail["in_code"]``.
Trailing prose punctuation (``. , ; : ! ? ' " * _``) and an unbalanced closing
bracket are not part of the URL. Normal form: scheme and host lower-cased, an IDN
host in punycode, a trailing dot on the host dropped, the default port (80, 443, 21)
dropped, the fragment dropped, percent-escapes of unreserved characters decoded and
other escapes upper-cased, characters that must be escaped escaped (``/café`` ≡
``/caf%C3%A9``), ``.``/``..`` path segments resolved, an empty path written ``/``
and a trailing slash on a longer path dropped. The query is kept (its order
matters to servers). ``http`` and ``https`` differ; a scheme-less ``www.`` URL
matches an approved URL of either scheme.

**Prices** need a currency: numbers without one are never prices. The text is first
folded with Unicode NFKC, character by character and except for spaces, so lookalikes
count as what they look like: fullwidth ``＄`` (U+FF04), small ``﹩`` (U+FE69), ``￡``,
``￥``, fullwidth digits and codes (``ＵＳＤ``); offsets in findings are those of the
text as written. Currency from a
symbol (``$`` is USD; ``US$ A$ AU$ C$ CA$ NZ$ HK$ S$ SG$ MX$ R$ € £ ¥ ₹ ₩``; ``¥``
is JPY) or an upper-case ISO 4217 code before or after the amount (``USD 1200``,
``1.200,00 EUR``; codes that double as technical words, such as PHP or TRY, are not
read); a code after a bare year ("2026 EUR") is not read as a price.
Amounts: with both ``,`` and ``.`` the last one is the decimal mark
(``1,200.50`` = ``1.200,50``); a single ``,`` or ``.`` followed by exactly three
digits is a thousands separator (``$1.200`` = ``$1,200`` = 1200), otherwise a
decimal mark; NBSP, thin space and ``'`` group thousands, and so does a plain space
when the currency follows the amount (``1 200 €``).
Magnitudes ``k``/``K``, ``m``/``M``/``mn``, ``b``/``B``/``bn``, ``tn`` and the words
thousand/million/billion/trillion multiply (``$5k`` = USD 5000). The normal form is
``"<CODE> <amount>"`` with trailing zeros dropped: ``"$1,200.00"`` ≡ ``"USD 1200"``.
A range "$5-10" is one price ($5): the bare 10 has no currency. Amounts are read up
to nine digit groups (10^27): a longer run is read by its last groups, never skipped.

The checks are linear in the draft's length and refuse drafts past
:data:`trustgate._limits.MAX_DRAFT_CHARS` with one ``claim_too_large`` finding.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import unicodedata
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict

from trustgate import _limits
from trustgate._findings import Cut, Finding
from trustgate._markdown import code_locator, links
from trustgate.errors import ClaimTooLarge, InputError
from trustgate.evidence.brief import ApprovedPrice, EvidenceSet

__all__ = [
    "VERIFIER",
    "PriceMatch",
    "UrlMatch",
    "check_integrity",
    "find_prices",
    "find_urls",
    "normalize_price",
    "normalize_url",
]

VERIFIER = "evidence_integrity"

# --------------------------------------------------------------------------- URLs

# schemes that are links without "//" (mailto:a@b, tel:+1..., javascript:...)
_OPAQUE_SCHEMES = "mailto|tel|sms|xmpp|callto|javascript|vbscript|data|file|magnet"
_URL_CHAR = r"(?:[^\s<>\"`\[\]{}|\\^“”‘’«»]|\\[!-/:-@\[-`{-~])"
_URL = re.compile(
    r"(?<![\w@.+-])"
    r"(?:(?P<url>(?:(?i:[a-z][a-z0-9+.-]{0,31})://|(?i:www)\.)(?:\[[0-9A-Fa-f:.]+\])?"
    rf"{_URL_CHAR}*"
    rf"|(?i:{_OPAQUE_SCHEMES}):(?=[^\s/]){_URL_CHAR}+)"
    r"|(?P<email>[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+))"
)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_TRAILING = ".,;:!?'\"*_~…"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_DEFAULT_PORTS = {"http": "80", "https": "443", "ftp": "21"}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/")
_QUERY_SAFE = _PATH_SAFE | frozenset("?")
_HEX = frozenset("0123456789abcdefABCDEF")
_EMAIL = re.compile(r"[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


class UrlMatch(BaseModel):
    """A URL as written in a text, with its normal form."""

    model_config = ConfigDict(frozen=True)

    written: str
    normalized: str
    start: int
    end: int


def _strip_trailing(url: str) -> str:
    """Drop trailing prose punctuation and unbalanced closing brackets (one pass)."""
    counts = {c: url.count(c) for c in "()[]{}"}
    end = len(url)
    while end:
        last = url[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last in _CLOSERS and counts[last] > counts[_CLOSERS[last]]:
            counts[last] -= 1
            end -= 1
        else:
            break
    return url[:end]


def _rendered(url: str) -> str:
    """A URL as a renderer shows it: entities and Markdown backslash escapes resolved."""
    if "&" in url:
        url = html.unescape(url)
    if "\\" in url:
        url = _ESCAPE.sub(r"\1", url)
    return url


def _pct(text: str, safe: frozenset[str]) -> str:
    """Canonical percent-encoding: decode unreserved, upper-case the rest, escape unsafe."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            byte = int(text[i + 1 : i + 3], 16)
            decoded = chr(byte)
            out.append(decoded if decoded in _UNRESERVED else f"%{byte:02X}")
            i += 3
            continue
        if ch in safe:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    segments = path.split("/")
    out: list[str] = []
    for seg in segments[1:]:
        if seg == ".":
            continue
        if seg == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    trailing = segments[-1] in (".", "..") if len(segments) > 1 else False
    result = "/" + "/".join(out)
    if trailing and not result.endswith("/"):
        result += "/"
    return result


def _host(host: str) -> str:
    if host.startswith("["):
        return host.lower()
    host = unquote(host).lower()
    if host.endswith(".") and len(host) > 1:
        host = host[:-1]
    if host.isascii():
        return _pct(host, _UNRESERVED | frozenset("!$&'()*+,;="))
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return _pct(host, _UNRESERVED | frozenset("!$&'()*+,;="))


def normalize_url(url: str) -> str:
    """The normal form two URLs are compared in (see the module docstring).

    Never raises on a string: what cannot be parsed is compared in a minimally
    normalised form, so a malformed URL is unapproved rather than an error.

    Example:
        ```python
        from trustgate.verifiers.integrity.check import normalize_url

        assert normalize_url("HTTPS://Example.COM:443/a/./b/#top") == "https://example.com/a/b"
        ```
    """
    if not isinstance(url, str):
        raise InputError(f"a URL must be text, got {type(url).__name__}")
    return _normalize_url(url)


@functools.lru_cache(maxsize=4096)
def _normalize_url(url: str) -> str:
    url = url.strip()
    url = url.split("#", 1)[0]
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):(?=//)", url)
    if m is not None:
        scheme, rest = m.group(1).lower(), url[m.end() :]
    elif url.startswith("//"):
        scheme, rest = "", url
    elif url[:4].lower() == "www.":
        scheme, rest = "", "//" + url
    else:
        m2 = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", url)
        if m2 is None:
            if _EMAIL.fullmatch(url):  # a bare address is a mailto: link
                return _normalize_url("mailto:" + url)
            return _pct(url, _QUERY_SAFE)
        scheme, rest = m2.group(1).lower(), url[m2.end() :]
        if scheme == "mailto":
            address, qmark, query = rest.partition("?")
            local, sign, domain = address.rpartition("@")
            if sign:
                address = f"{local}@{_host(domain)}"
            rest = address + qmark + query
        return scheme + ":" + _pct(rest, _QUERY_SAFE)
    rest = rest[2:]
    cut = len(rest)
    for sep in "/?":
        at = rest.find(sep)
        if at != -1:
            cut = min(cut, at)
    authority, tail = rest[:cut], rest[cut:]
    userinfo, _, hostport = authority.rpartition("@")
    hm = re.fullmatch(r"(\[[^\]]*\]|[^:]*)(?::(.*))?", hostport)
    assert hm is not None  # the pattern matches any string
    host, port = _host(hm.group(1)), hm.group(2)
    if port is not None:
        if port.isdigit() and port.isascii():
            port = str(int(port))
            if port == _DEFAULT_PORTS.get(scheme):
                port = None
        elif port == "":
            port = None
        else:
            port = _pct(port, _UNRESERVED)
    path, qmark, query = tail.partition("?")
    path = _remove_dot_segments(_pct(path, _PATH_SAFE)) if path else "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = _pct(query, _QUERY_SAFE)
    prefix = f"{scheme}:" if scheme else ""
    auth = (_pct(userinfo, _PATH_SAFE - {"/", "@"}) + "@") if userinfo else ""
    portpart = f":{port}" if port is not None else ""
    return f"{prefix}//{auth}{host}{portpart}{path}{'?' + query if qmark and query else ''}"


def find_urls(text: str, *, limit: int | None = None) -> list[UrlMatch]:
    """Every URL in ``text`` in reading order: bare ones (prose punctuation trimmed
    off) and every link a renderer produces (see the module docstring). With
    ``limit``, more URLs than that raise ``ClaimTooLarge``."""
    out: list[UrlMatch] = []
    for m in _URL.finditer(text):
        if limit is not None and len(out) >= limit:
            raise _too_many("URLs", limit)
        if m.group("email") is not None:
            written = m.group("email").rstrip(".-_")
        else:
            written = _strip_trailing(m.group("url"))
            low = written.lower()
            if len(written) <= len("www.") or low.rstrip("/").endswith(":"):
                continue
            if re.fullmatch(r"[a-z][a-z0-9+.-]*://", low):
                continue
        out.append(
            UrlMatch(
                written=written,
                normalized=normalize_url(_rendered(written)),
                start=m.start(),
                end=m.start() + len(written),
            )
        )
    seen = {(u.start, u.normalized) for u in out}
    for link in links(text):
        url = link.url.strip()
        if not url:
            continue
        normalized = normalize_url(url)
        if (link.start, normalized) in seen:
            continue  # the same URL, already read as written in the text
        seen.add((link.start, normalized))
        out.append(
            UrlMatch(
                written=url,
                normalized=normalized,
                start=link.start,
                end=link.start + len(url) if text.startswith(url, link.start) else link.start,
            )
        )
    out.sort(key=lambda u: (u.start, u.end))
    return out


def _url_keys(normalized: str) -> tuple[str, ...]:
    if normalized.startswith("//"):
        return ("http:" + normalized, "https:" + normalized)
    return (normalized,)


# --------------------------------------------------------------------------- prices

_SYMBOLS = {
    "$": "USD",
    "US$": "USD",
    "A$": "AUD",
    "AU$": "AUD",
    "C$": "CAD",
    "CA$": "CAD",
    "NZ$": "NZD",
    "HK$": "HKD",
    "S$": "SGD",
    "SG$": "SGD",
    "MX$": "MXN",
    "R$": "BRL",
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "₹": "INR",
    "₩": "KRW",
}
# ISO 4217 codes read as currencies. Codes that are also everyday upper-case words in
# technical prose (PHP, TRY, COP, PEN, ARS, SAR, IDR) are left out: "PHP 8.2" is not a price.
_CODES = frozenset(
    {
        "USD",
        "EUR",
        "GBP",
        "JPY",
        "CHF",
        "CAD",
        "AUD",
        "NZD",
        "CNY",
        "HKD",
        "SGD",
        "INR",
        "SEK",
        "NOK",
        "DKK",
        "PLN",
        "CZK",
        "HUF",
        "RON",
        "BGN",
        "BRL",
        "MXN",
        "ZAR",
        "KRW",
        "ILS",
        "AED",
        "RUB",
        "TWD",
        "THB",
        "MYR",
        "VND",
        "CLP",
        "NGN",
        "EGP",
    }
)
_MULTIPLIERS = {
    "k": 10**3,
    "thousand": 10**3,
    "m": 10**6,
    "mn": 10**6,
    "million": 10**6,
    "b": 10**9,
    "bn": 10**9,
    "billion": 10**9,
    "tn": 10**12,
    "trillion": 10**12,
}
_SYM_RX = r"(?:US|AU|A|CA|C|NZ|HK|SG|S|MX|R)?\$|€|£|¥|₹|₩"
_CODE_RX = "|".join(sorted(_CODES))
_NUM_RX = r"\d+(?:[,.'\u00a0\u202f]\d+){0,8}"
_MULT_RX = (
    r"(?:[ \u00a0]?(?i:thousand|million|billion|trillion)(?![\w])"
    r"|(?:k|K|m|M|mn|bn|b|B|tn)(?![\w]))"
)
_PRICE_SYM = re.compile(
    rf"(?<![\w$])(?P<sym>{_SYM_RX})[ \u00a0]?(?P<num>{_NUM_RX})(?P<mult>{_MULT_RX})?"
    rf"(?:[ \u00a0]?(?P<code>{_CODE_RX})(?![\w]))?"
)
_PRICE_CODE = re.compile(
    rf"(?<![\w.,])(?P<code>{_CODE_RX})[ \u00a0]?(?P<num>{_NUM_RX})(?P<mult>{_MULT_RX})?"
)
_PRICE_AFTER = re.compile(
    rf"(?<![\w.,'$€£¥₹₩])(?P<num>\d{{1,3}}(?: \d{{3}}){{1,8}}(?:,\d+)?|{_NUM_RX})"
    rf"(?P<mult>{_MULT_RX})?[ \u00a0]?"
    rf"(?:(?P<sym>€|£|¥|₹|₩|\$)|(?P<code>{_CODE_RX})(?![\w]))"
)


class PriceMatch(BaseModel):
    """A price as written in a text, with its normal form ``"<CODE> <amount>"``."""

    model_config = ConfigDict(frozen=True)

    written: str
    normalized: str
    currency: str
    amount: str
    start: int
    end: int


def _amount(num: str) -> Decimal | None:
    num = num.replace("\u00a0", "'").replace("\u202f", "'").replace(" ", "'")
    seps = [c for c in num if c in ",.'"]
    if not seps:
        return Decimal(num)
    groups = re.split(r"[,.']", num)
    last = seps[-1]
    decimal_part: str | None = None
    if last in ",." and (len(set(seps)) > 1 or (len(seps) == 1 and len(groups[-1]) != 3)):
        decimal_part = groups[-1]
        groups, seps = groups[:-1], seps[:-1]
    if seps:
        if len(set(seps)) != 1 or not 1 <= len(groups[0]) <= 3:
            return None
        if any(len(g) != 3 for g in groups[1:]):
            return None
    digits = "".join(groups) + ("." + decimal_part if decimal_part is not None else "")
    try:
        return Decimal(digits)
    except InvalidOperation:  # pragma: no cover - the regex admits digits only
        return None


def _canonical_amount(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _price_from(m: re.Match[str]) -> tuple[str, Decimal] | None:
    groups = m.groupdict()
    code = groups.get("code")
    sym = groups.get("sym")
    currency = code or (_SYMBOLS.get(sym) if sym else None)
    if currency is None:
        return None
    value = _amount(m.group("num"))
    if value is None:
        return None
    mult = (m.group("mult") or "").strip()
    if mult:
        factor = _MULTIPLIERS.get(mult.lower())
        if factor is None:  # pragma: no cover - the regex admits known magnitudes only
            return None
        value *= factor
    return currency, value


# lookalikes NFKC leaves alone
_EXTRA_FOLDS = {"\U0001f4b2": "$"}  # HEAVY DOLLAR SIGN


class _Folded:
    """Text folded with NFKC character by character (spaces kept), with a map back
    to offsets in the original."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._anchors: list[int] | None = None  # folded offsets where a piece starts
        self._origins: list[int] = []
        self._linear: list[bool] = []
        if text.isascii():
            return
        pieces: list[str] = []
        anchors: list[int] = []
        at = 0

        def piece(original: str, start: int, folded: str) -> None:
            nonlocal at
            anchors.append(at)
            self._origins.append(start)
            self._linear.append(len(folded) == len(original))
            pieces.append(folded)
            at += len(folded)

        last = 0
        for m in re.finditer(r"[^\x00-\x7f]+", text):
            if m.start() > last:
                piece(text[last : m.start()], last, text[last : m.start()])
            run = m.group()
            if unicodedata.is_normalized("NFKC", run) and not _EXTRA_FOLDS.keys() & set(run):
                piece(run, m.start(), run)  # accents, CJK...: nothing to fold
            else:
                # characters that fold to one character stay one linear piece; only
                # those that expand (ﬁ -> fi) need a piece of their own
                same: list[str] = []
                same_start = m.start()
                for i, ch in enumerate(run):
                    folded = ch
                    if not ch.isspace():
                        folded = _EXTRA_FOLDS.get(ch) or unicodedata.normalize("NFKC", ch)
                    if len(folded) == 1:
                        same.append(folded)
                        continue
                    if same:
                        piece(run[same_start - m.start() : i], same_start, "".join(same))
                        same = []
                    piece(ch, m.start() + i, folded)
                    same_start = m.start() + i + 1
                if same:
                    piece(run[same_start - m.start() :], same_start, "".join(same))
            last = m.end()
        if last < len(text):
            piece(text[last:], last, text[last:])
        self.text = "".join(pieces)
        self._anchors = anchors

    def origin(self, offset: int) -> int:
        """Offset in the original text of the character at ``offset`` in the folded one."""
        if self._anchors is None:
            return offset
        i = bisect.bisect_right(self._anchors, offset) - 1
        if i < 0:
            return 0
        if self._linear[i]:
            return self._origins[i] + (offset - self._anchors[i])
        return self._origins[i]

    def span(self, start: int, end: int) -> tuple[int, int]:
        if self._anchors is None:
            return start, end
        return self.origin(start), self.origin(end - 1) + 1 if end > start else self.origin(start)


def _too_many(what: str, limit: int) -> ClaimTooLarge:
    return ClaimTooLarge(
        f"the draft holds more than {limit:,} {what} (the cap of items read in one "
        "draft); nothing in it was checked"
    )


def find_prices(text: str, *, limit: int | None = None) -> list[PriceMatch]:
    """Every price (an amount with a currency) in ``text``, in reading order.

    Unicode lookalikes are folded first (see the module docstring); ``written``,
    ``start`` and ``end`` refer to the text as given.
    """
    folded = _Folded(text)
    out = []
    for p in _scan_prices(folded.text, years_are_prices=False, limit=limit):
        start, end = folded.span(p.start, p.end)
        if (start, end) != (p.start, p.end):
            p = p.model_copy(update={"written": text[start:end], "start": start, "end": end})
        out.append(p)
    return out


def _scan_prices(
    text: str, *, years_are_prices: bool, limit: int | None = None
) -> list[PriceMatch]:
    # (start, -length, rank, end, currency, amount): plain tuples, a model only for
    # the prices that win their place (the three patterns overlap)
    hits: list[tuple[int, int, int, int, str, str]] = []
    for rank, rx in enumerate((_PRICE_SYM, _PRICE_CODE, _PRICE_AFTER)):
        for m in rx.finditer(text):
            if limit is not None and len(hits) >= 3 * limit:
                raise _too_many("prices", limit)
            if (
                not years_are_prices
                and rx is _PRICE_AFTER
                and m.group("code")
                and re.fullmatch(r"(?:19|20)\d\d", m.group("num"))
                and not m.group("mult")
            ):
                continue  # "2026 EUR": a year next to a currency code, not a price
            parsed = _price_from(m)
            if parsed is None:
                continue
            currency, value = parsed
            hits.append(
                (
                    m.start(),
                    -(m.end() - m.start()),
                    rank,
                    m.end(),
                    currency,
                    _canonical_amount(value),
                )
            )
    hits.sort(key=lambda h: (h[0], h[1], h[2]))
    out: list[PriceMatch] = []
    taken_until = -1
    for start, _, _, end, currency, amount in hits:
        if start < taken_until:
            continue
        if limit is not None and len(out) >= limit:
            raise _too_many("prices", limit)
        out.append(
            PriceMatch(
                written=text[start:end],
                normalized=f"{currency} {amount}",
                currency=currency,
                amount=amount,
                start=start,
                end=end,
            )
        )
        taken_until = end
    return out


def normalize_price(price: str | ApprovedPrice) -> str:
    """The normal form ``"<CODE> <amount>"`` of one price; ``InputError`` if it is not one.

    Example:
        ```python
        from trustgate.verifiers.integrity.check import normalize_price

        assert normalize_price("$1,200.00") == normalize_price("USD 1200") == "USD 1200"
        assert normalize_price("1.200,00 €") == "EUR 1200"
        ```
    """
    if isinstance(price, ApprovedPrice):
        return f"{price.currency.upper()} {_canonical_amount(Decimal(price.amount))}"
    if not isinstance(price, str):
        raise InputError(f"a price must be text, got {type(price).__name__}")
    text = price.strip()
    found = _scan_prices(text, years_are_prices=True)
    if len(found) != 1 or found[0].start != 0 or found[0].end != len(text):
        raise InputError(
            f"{price!r} is not one price (an amount with a currency, e.g. '$1,200' or 'EUR 99')"
        )
    return found[0].normalized


# --------------------------------------------------------------------------- the check


def _coerce_evidence(evidence: EvidenceSet | Mapping[str, Any]) -> EvidenceSet:
    if isinstance(evidence, EvidenceSet):
        return evidence
    if isinstance(evidence, Mapping):
        return EvidenceSet.from_json(dict(evidence))
    raise InputError(f"evidence must be an EvidenceSet or a mapping, got {type(evidence).__name__}")


def _show(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"


class _Lines:
    """Line numbers of offsets, from one pass over the text (not a count per finding)."""

    def __init__(self, text: str) -> None:
        self._breaks = [m.start() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> int:
        return bisect.bisect_left(self._breaks, offset) + 1


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the given spans blanked out (same length), built in one pass."""
    pieces: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if end <= at:
            continue
        start = max(start, at)
        pieces.append(text[at:start])
        pieces.append(" " * (end - start))
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def check_integrity(draft: str, evidence: EvidenceSet | Mapping[str, Any]) -> list[Finding]:
    """Every URL and price in ``draft`` must be in the approved evidence set.

    One failing finding per distinct unapproved URL (``unapproved_url``) or price
    (``unapproved_price``), in order of first appearance; one passing finding when
    there are none (a draft with no URL and no price passes). An evidence price that
    is not a price raises ``InputError``: a broken evidence set must halt, not pass.

    Example:
        ```python
        from trustgate.contracts import EvidenceSet, check_integrity

        ev = EvidenceSet(urls=["https://example.com/pricing"], prices=["USD 1200"])
        draft = "Plans start at $1,200.00 (https://Example.com/pricing/). Enterprise: $5k."
        [f] = check_integrity(draft, ev)
        assert (f.code, f.subject) == ("unapproved_price", "USD 5000")
        ```
    """
    if not isinstance(draft, str):
        raise InputError(f"draft must be text (str), got {type(draft).__name__}")
    ev = _coerce_evidence(evidence)
    approved_urls = {key for u in ev.urls for key in _url_keys(normalize_url(u))}
    approved_prices = {normalize_price(p) for p in ev.prices}
    try:
        _limits.check_draft(draft)
        _limits.check_link_openers(draft)
    except ClaimTooLarge as exc:
        return [Finding.failed(VERIFIER, exc.code, str(exc))]

    line_of = _Lines(draft)
    try:
        urls = find_urls(draft, limit=_limits.MAX_DRAFT_ITEMS)
        prices = find_prices(
            _masked(draft, [(u.start, u.end) for u in urls]), limit=_limits.MAX_DRAFT_ITEMS
        )
    except ClaimTooLarge as exc:
        return [Finding.failed(VERIFIER, exc.code, str(exc))]

    failures: list[tuple[int, str, str, Finding]] = []
    by_url: dict[str, list[UrlMatch]] = {}
    for u in urls:
        if not any(k in approved_urls for k in _url_keys(u.normalized)):
            by_url.setdefault(u.normalized, []).append(u)
    for norm, ms in by_url.items():
        failures.append(
            (
                ms[0].start,
                "unapproved_url",
                norm,
                Finding.failed(
                    VERIFIER,
                    "unapproved_url",
                    f"{_show(ms[0].written)} is not in the approved evidence set",
                    subject=norm,
                    proposals=[Cut(text=w) for w in sorted({m.written for m in ms}) if w],
                    detail={
                        "written": sorted({m.written for m in ms}),
                        "occurrences": len(ms),
                        "offset": ms[0].start,
                        "line": line_of(ms[0].start),
                    },
                ),
            )
        )
    by_price: dict[str, list[PriceMatch]] = {}
    for p in prices:
        if p.normalized not in approved_prices:
            by_price.setdefault(p.normalized, []).append(p)
    for norm, ps in by_price.items():
        failures.append(
            (
                ps[0].start,
                "unapproved_price",
                norm,
                Finding.failed(
                    VERIFIER,
                    "unapproved_price",
                    f'"{_show(ps[0].written)}" ({norm}) is not in the approved evidence set',
                    subject=norm,
                    proposals=[Cut(text=w) for w in sorted({p.written for p in ps}) if w],
                    detail={
                        "written": sorted({p.written for p in ps}),
                        "occurrences": len(ps),
                        "offset": ps[0].start,
                        "line": line_of(ps[0].start),
                    },
                ),
            )
        )
    if failures:
        failures.sort(key=lambda f: (f[0], f[1], f[2]))
        in_code = code_locator(draft)
        return [
            f.model_copy(update={"detail": {**f.detail, "in_code": in_code(offset)}})
            for offset, *_, f in failures
        ]
    return [
        Finding.ok(
            VERIFIER,
            f"{len(urls)} URL(s) and {len(prices)} price(s), all in the approved evidence set",
            detail={
                "urls": sorted({u.normalized for u in urls}),
                "prices": sorted({p.normalized for p in prices}),
            },
        )
    ]
