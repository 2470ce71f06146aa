"""Every clickable form a renderer produces is checked (issue 12, item 6).

A model that invents a URL can write it as a protocol-relative link, a reference
definition, a raw ``<a href>``, an ``ftp:`` or ``mailto:`` link, or hide a price behind
a Unicode lookalike of ``$``. Each test is a lying draft: the invented URL or price must
come out as an unapproved finding, and the honest form of the same draft must pass.
"""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from trustgate._markdown import links
from trustgate.contracts import EvidenceSet, check_integrity

APPROVED = EvidenceSet(
    urls=["https://vendor.example/pricing", "mailto:sales@vendor.example"],
    prices=["$1,200"],
)


def unapproved(draft: str) -> list[str]:
    return [f.subject or "" for f in check_integrity(draft, APPROVED) if not f.passed]


@pytest.mark.parametrize(
    ("draft", "invented"),
    [
        ("See [the deal](//evil.example/deal).", "//evil.example/deal"),
        ("See [the deal][d].\n\n[d]: //evil.example/deal\n", "//evil.example/deal"),
        ("See [the deal].\n\n[the deal]: https://evil.example/deal\n", "https://evil.example/deal"),
        ("Unused definition.\n\n[x]: https://evil.example/x\n", "https://evil.example/x"),
        ('See <a href="//evil.example/a">here</a>.', "//evil.example/a"),
        ("See <a href='https://evil.example/b'>here</a>.", "https://evil.example/b"),
        ('<div>\n<a href="//evil.example/c">here</a>\n</div>\n', "//evil.example/c"),
        ('See <img src="//evil.example/i.png">.', "//evil.example/i.png"),
        ('<form action="https://evil.example/f"></form>', "https://evil.example/f"),
        ('<img srcset="//evil.example/1x.png 1x, /ok.png 2x">', "//evil.example/1x.png"),
        ("See ![chart](//evil.example/c.png).", "//evil.example/c.png"),
        ("See <https://evil.example/auto>.", "https://evil.example/auto"),
        ("Files at ftp://evil.example/pub/file.", "ftp://evil.example/pub/file"),
        ("Files at [pub](ftp://evil.example/pub).", "ftp://evil.example/pub"),
        ("Write to [us](mailto:ceo@evil.example).", "mailto:ceo@evil.example"),
        ("Write to <mailto:ceo@evil.example>.", "mailto:ceo@evil.example"),
        ("Write to <ceo@evil.example>.", "mailto:ceo@evil.example"),
        ("Write to ceo@evil.example today.", "mailto:ceo@evil.example"),
        ("Write to mailto:ceo@evil.example today.", "mailto:ceo@evil.example"),
        ("Call [us](tel:+1-555-0100).", "tel:+1-555-0100"),
        ("Run [this](javascript:alert(1)).", "javascript:alert(1)"),
        ("Mirror at sftp://evil.example/x today.", "sftp://evil.example/x"),
        ("See [it](https://evil.example/a&amp;b).", "https://evil.example/a&b"),
        ("See [it](<https://evil.example/a b>).", "https://evil.example/a%20b"),
    ],
)
def test_every_clickable_form_is_checked(draft: str, invented: str) -> None:
    assert invented in unapproved(draft)


@pytest.mark.parametrize(
    "draft",
    [
        "Pricing: [page](https://vendor.example/pricing).",
        "Pricing: [page][p].\n\n[p]: https://vendor.example/pricing\n",
        'Pricing: <a href="https://vendor.example/pricing">page</a>.',
        "Pricing: <https://vendor.example/pricing>.",
        "Pricing: [page](https://vendor.example/pricing?) and https://vendor.example/pricing.",
        "Write to [sales](mailto:sales@vendor.example) or sales@vendor.example.",
        "Pricing: [page](https://vendor.example/pricing 'the title').",
        "Pricing: https://vendor.example/pricing and https://vendor.example/pricing&#63;",
    ],
)
def test_honest_forms_pass(draft: str) -> None:
    assert unapproved(draft) == []


@pytest.mark.parametrize(
    ("draft", "price"),
    [
        ("Plans cost \uff04999 a year.", "USD 999"),  # FULLWIDTH DOLLAR SIGN
        ("Plans cost \ufe69999 a year.", "USD 999"),  # SMALL DOLLAR SIGN
        ("Plans cost \uff04\uff19\uff19\uff19 a year.", "USD 999"),  # fullwidth digits too
        ("Plans cost \uffe1999 a year.", "GBP 999"),  # FULLWIDTH POUND SIGN
        ("Plans cost \uffe5999 a year.", "JPY 999"),  # FULLWIDTH YEN SIGN
        ("Plans cost \uff35\uff33\uff24 999 a year.", "USD 999"),  # fullwidth code
        ("Plans cost 999\u00a0\uff04 a year.", "USD 999"),
    ],
)
def test_currency_lookalikes_are_folded(draft: str, price: str) -> None:
    found = [f for f in check_integrity(draft, APPROVED) if not f.passed]
    assert [f.subject for f in found] == [price]
    assert found[0].detail["line"] == 1


def test_folded_prices_keep_their_offsets_and_approved_ones_pass() -> None:
    draft = "ﬁrst line\nIt costs \uff041,200 or \uff04999."
    [f] = [f for f in check_integrity(draft, APPROVED) if not f.passed]
    assert f.subject == "USD 999" and f.detail["line"] == 2
    assert draft[f.detail["offset"]] == "\uff04"
    assert f.detail["written"] == ["\uff04999"]


def test_nbsp_grouping_is_not_folded_away() -> None:
    assert unapproved("It costs $1\u00a0200.") == []


# ------------------------------------------------------------------ properties

_md = MarkdownIt("commonmark")
_md.validateLink = lambda url: True  # type: ignore[method-assign]


def _rendered_hrefs(draft: str) -> set[str]:
    """What a CommonMark renderer actually makes clickable (href/src of its HTML)."""
    out = _md.render(draft)
    return {html.unescape(m) for m in re.findall(r'(?:href|src)="([^"]*)"', out)}


_pieces = st.sampled_from(
    [
        "[a](",
        "](",
        ")",
        "[b]",
        "[b]: ",
        "\n",
        "\n\n",
        "<",
        ">",
        "//evil.example/p",
        "https://evil.example/q",
        "mailto:x@evil.example",
        " ",
        "'t'",
        '"',
        "\\",
        "&amp;",
        "`",
        "![i](",
        "<a href=",
        "*",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_pieces, max_size=14).map("".join))
def test_everything_a_renderer_links_is_found(draft: str) -> None:
    """Whatever CommonMark renders as an href or src is among the URLs trustgate read."""
    found = {link.url for link in links(draft)}
    for href in _rendered_hrefs(draft):
        if not href:
            continue  # ``<a href="">`` names no destination: there is nothing to check
        assert href in found, (draft, href, found)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_pieces, max_size=14).map("".join),
    st.sampled_from(["//evil.example/z", "ftp://evil.example/z", "mailto:z@evil.example"]),
)
def test_an_invented_rendered_link_is_never_approved(prefix: str, url: str) -> None:
    draft = f"{prefix}\n\nSee [z]({url}).\n"
    if url not in {h for h in _rendered_hrefs(draft)}:
        return  # the prefix swallowed the link (e.g. an open code span): not clickable
    assert any(not f.passed for f in check_integrity(draft, APPROVED))
