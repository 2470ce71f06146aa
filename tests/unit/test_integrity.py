"""URL and price integrity against an approved evidence set (seed 004)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustgate.contracts import (
    ApprovedPrice,
    EvidenceSet,
    check_integrity,
    normalize_price,
    normalize_url,
)
from trustgate.errors import InputError
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.integrity.check import find_prices, find_urls

EVIDENCE = EvidenceSet(
    urls=[
        "https://vendor.example/pricing",
        "https://docs.example.org/guide/setup?lang=en",
        "https://bücher.example/katalog",
        "https://en.wikipedia.org/wiki/Foo_(bar)",
    ],
    prices=["$1,200.00", "EUR 99", "£5.50", ApprovedPrice(currency="USD", amount="5000")],
)


def failing(findings: list) -> list:  # type: ignore[type-arg]
    return [f for f in findings if not f.passed]


# --------------------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("HTTPS://Vendor.Example/pricing", "https://vendor.example/pricing"),
        ("https://vendor.example:443/pricing", "https://vendor.example/pricing"),
        ("http://vendor.example:80/", "http://vendor.example"),
        ("https://vendor.example/pricing/", "https://vendor.example/pricing"),
        ("https://vendor.example/pricing#plans", "https://vendor.example/pricing"),
        ("https://vendor.example/a/./b/../pricing", "https://vendor.example/a/pricing"),
        ("https://vendor.example/%7Euser", "https://vendor.example/~user"),
        ("https://vendor.example/a%2fb", "https://vendor.example/a%2Fb"),
        ("https://vendor.example/café", "https://vendor.example/caf%C3%A9"),
        ("https://BÜCHER.example/", "https://xn--bcher-kva.example/"),
        ("https://vendor.example./x", "https://vendor.example/x"),
        ("https://vendor.example/?", "https://vendor.example/"),
    ],
)
def test_url_normal_form_equivalences(a: str, b: str) -> None:
    assert normalize_url(a) == normalize_url(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://vendor.example/pricing", "https://vendor.example/pricing"),
        ("https://vendor.example/Pricing", "https://vendor.example/pricing"),
        ("https://vendor.example/pricing?plan=pro", "https://vendor.example/pricing"),
        ("https://vendor.example:8443/pricing", "https://vendor.example/pricing"),
        ("https://vendor.example.evil/pricing", "https://vendor.example/pricing"),
        (
            "https://docs.example.org/guide/setup?lang=de",
            "https://docs.example.org/guide/setup?lang=en",
        ),
    ],
)
def test_urls_that_differ(a: str, b: str) -> None:
    assert normalize_url(a) != normalize_url(b)


def test_urls_are_read_from_prose_markdown_and_autolinks() -> None:
    text = (
        "See [pricing](https://vendor.example/pricing). Also (https://en.wikipedia.org/wiki/"
        "Foo_(bar)), <https://docs.example.org/guide/setup?lang=en>, www.vendor.example, "
        '"https://q.example/x"; **https://bold.example/a**, and https://end.example/.'
    )
    assert [u.written for u in find_urls(text)] == [
        "https://vendor.example/pricing",
        "https://en.wikipedia.org/wiki/Foo_(bar)",
        "https://docs.example.org/guide/setup?lang=en",
        "www.vendor.example",
        "https://q.example/x",
        "https://bold.example/a",
        "https://end.example/",
    ]


def test_honest_urls_pass_in_any_written_form() -> None:
    draft = (
        honest_model(
            "Pricing: [plans](HTTPS://Vendor.Example/pricing/). Setup guide: "
            "<https://docs.example.org/guide/setup?lang=en#step-2>. Background: "
            "https://en.wikipedia.org/wiki/Foo_(bar). Shop: https://bücher.example/katalog."
        )
        .invoke("x")
        .text
    )
    [f] = check_integrity(draft, EVIDENCE)
    assert f.passed


def test_lying_model_urls_are_caught() -> None:
    draft = (
        lying_model(
            "Pricing is on https://vendor.example/pricing and the discount is confirmed at "
            "https://vendor.example/secret-discount. Reviews: www.reviews.example/vendor "
            "(see https://vendor.example/secret-discount)."
        )
        .invoke("x")
        .text
    )
    found = failing(check_integrity(draft, EVIDENCE))
    assert [f.code for f in found] == ["unapproved_url", "unapproved_url"]
    assert [f.subject for f in found] == [
        "https://vendor.example/secret-discount",
        "//www.reviews.example/vendor",
    ]
    assert found[0].detail["occurrences"] == 2


def test_scheme_less_www_matches_either_scheme() -> None:
    ev = EvidenceSet(urls=["https://www.vendor.example/"])
    assert check_integrity("See www.vendor.example.", ev)[0].passed


def test_empty_evidence_set_approves_nothing() -> None:
    [f] = check_integrity("See https://vendor.example/pricing.", EvidenceSet())
    assert f.code == "unapproved_url"


# --------------------------------------------------------------------------- prices


@pytest.mark.parametrize(
    ("written", "normal"),
    [
        ("$1,200.00", "USD 1200"),
        ("USD 1200", "USD 1200"),
        ("US$ 1,200", "USD 1200"),
        ("1,200 USD", "USD 1200"),
        ("$1,200 USD", "USD 1200"),
        ("$1.200", "USD 1200"),
        ("1.200,00 €", "EUR 1200"),
        ("1 200 €", "EUR 1200"),
        ("1\u00a0200,50 €", "EUR 1200.5"),
        ("EUR 1.200", "EUR 1200"),
        ("€99", "EUR 99"),
        ("99€", "EUR 99"),
        ("£5.50", "GBP 5.5"),
        ("CHF 1'200.50", "CHF 1200.5"),
        ("$5k", "USD 5000"),
        ("$1.2M", "USD 1200000"),
        ("€1.5 billion", "EUR 1500000000"),
        ("CA$15", "CAD 15"),
        ("A$15", "AUD 15"),
        ("¥1000", "JPY 1000"),
        ("$0.50", "USD 0.5"),
    ],
)
def test_price_normal_form(written: str, normal: str) -> None:
    assert normalize_price(written) == normal


@pytest.mark.parametrize(
    "text",
    [
        "Latency rose to 9.2 seconds at 14:02 on 2026-09-02.",
        "We sold 1,200 units, 5% more, in version 1.2.3.",
        "The 2026 EUR budget is set.",
        "costs$5 nothing",
        "Order #1200 shipped.",
        "PHP 8.2 is required; TRY 3 times; COP 28 was held in 2023.",
    ],
)
def test_numbers_without_a_currency_are_not_prices(text: str) -> None:
    assert find_prices(text) == []


def test_a_range_is_one_price() -> None:
    assert [p.normalized for p in find_prices("$5-10 a month")] == ["USD 5"]


def test_prices_inside_urls_are_not_prices() -> None:
    ev = EvidenceSet(urls=["https://vendor.example/plans/$99"])
    assert check_integrity("See https://vendor.example/plans/$99.", ev)[0].passed


def test_honest_prices_pass_in_any_written_form() -> None:
    for draft in [
        "The plan costs USD 1200 a year, or €99 a month; support is £5.50 per seat.",
        "Enterprise: $5k. Team: $1,200. Add-on: 99 EUR.",
        "No prices here, only 9.2 seconds and 1,200 users.",
    ]:
        [f] = check_integrity(honest_model(draft).invoke("x").text, EVIDENCE)
        assert f.passed, draft


def test_lying_model_prices_are_caught() -> None:
    draft = (
        lying_model(
            "The plan costs $1,200 a year, but the vendor confirmed a discounted $950 "
            "and an enterprise tier at $1,250.00; in Europe 1.200,00 € (not approved)."
        )
        .invoke("x")
        .text
    )
    found = failing(check_integrity(draft, EVIDENCE))
    assert [(f.code, f.subject) for f in found] == [
        ("unapproved_price", "USD 950"),
        ("unapproved_price", "USD 1250"),
        ("unapproved_price", "EUR 1200"),
    ]


def test_same_amount_other_currency_is_unapproved() -> None:
    [f] = check_integrity("It is CAD 1200.", EVIDENCE)
    assert (f.code, f.subject) == ("unapproved_price", "CAD 1200")


def test_urls_and_prices_together_in_draft_order() -> None:
    draft = "Now $7 at https://a.example/x, was $1,200 at https://b.example."
    found = check_integrity(draft, EVIDENCE)
    assert [f.code for f in found] == [
        "unapproved_price",
        "unapproved_url",
        "unapproved_url",
    ]
    assert found == check_integrity(draft, EVIDENCE)


# --------------------------------------------------------------------------- input


def test_bad_evidence_is_a_typed_error() -> None:
    with pytest.raises(InputError, match="not one price"):
        check_integrity("x", EvidenceSet(prices=["twelve hundred"]))
    with pytest.raises(InputError):
        EvidenceSet.from_json('{"urls": "https://x.example"}')
    with pytest.raises(InputError):
        EvidenceSet.from_json('{"url": []}')
    with pytest.raises(InputError):
        check_integrity(b"bytes", EVIDENCE)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        check_integrity("x", ["https://x.example"])  # type: ignore[arg-type]
    assert check_integrity("$5", {"prices": ["USD 5"]})[0].passed


def test_structured_prices() -> None:
    assert normalize_price(ApprovedPrice(currency="eur", amount="99.00")) == "EUR 99"
    with pytest.raises(InputError):
        normalize_price("$5 and $6")


# --------------------------------------------------------------------------- properties

url_chars = st.characters(
    codec="utf-8", exclude_categories=("Cs",), exclude_characters="#"
) | st.sampled_from(list("%/.?&=~-_:@+"))


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "HtTpS"]))
    host = draw(
        st.sampled_from(["Example.COM", "bücher.example", "a.b.c", "[::1]", "x--y.example", "é."])
    )
    port = draw(st.sampled_from(["", ":80", ":443", ":8080", ":0443", ":", ":x"]))
    path = draw(st.text(url_chars, max_size=20))
    query = draw(st.one_of(st.just(""), st.text(url_chars, max_size=10).map(lambda q: "?" + q)))
    frag = draw(st.sampled_from(["", "#top", "#"]))
    return f"{scheme}://{host}{port}/{path}{query}{frag}"


@settings(max_examples=400, deadline=None)
@given(st.one_of(urls(), st.text(max_size=60)))
def test_property_url_normalisation_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


@st.composite
def prices(draw: st.DrawFn) -> str:
    whole = draw(st.integers(0, 10**9))
    cents = draw(st.one_of(st.none(), st.integers(0, 99)))
    style = draw(st.sampled_from(["en", "eu", "plain"]))
    grouped = f"{whole:,}"
    if style == "eu":
        grouped = grouped.replace(",", ".")
    elif style == "plain":
        grouped = str(whole)
    dec = "," if style == "eu" else "."
    amount = grouped + (f"{dec}{cents:02d}" if cents is not None else "")
    form = draw(st.sampled_from(["$%s", "USD %s", "%s EUR", "€%s", "%s €", "£%s", "CHF %s"]))
    return form % amount


@settings(max_examples=400, deadline=None)
@given(prices())
def test_property_price_normalisation_is_idempotent(price: str) -> None:
    once = normalize_price(price)
    assert normalize_price(once) == once


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_property_arbitrary_text_never_crashes(text: str) -> None:
    findings = check_integrity(text, EVIDENCE)
    assert findings == check_integrity(text, EVIDENCE)
    for p in find_prices(text):
        assert normalize_price(p.normalized) == p.normalized
    for u in find_urls(text):
        assert normalize_url(u.normalized) == u.normalized
