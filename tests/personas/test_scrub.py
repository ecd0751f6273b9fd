"""PII scrubbing: what is replaced, what is left alone, and consistency."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sdtt.personas.scrub import Scrubber


def scrub(text: str, *people: list[str]) -> str:
    return Scrubber(people).scrub(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to ann.smith+chat@example.co.uk!", "write to [EMAIL_1]!"),
        ("see https://example.org/p?id=7.", "see [URL_1]."),
        ("at www.example.net/ann, ok", "at [URL_1], ok"),
        ("blog: example.com/posts", "blog: [URL_1]"),
        ("ask @ann_s99 or @here", "ask [HANDLE_1] or @here"),
        ("call +44 7700 900123 now", "call [PHONE_1] now"),
        ("call (555) 010-4477", "call [PHONE_1]"),
        ("0171 1234567 or 030/1234567", "[PHONE_1] or [PHONE_2]"),
        ("06.12.34.56.78", "[PHONE_1]"),
        ("+49 (0)171 1234567", "[PHONE_1]"),
        ("text 5551234567", "text [PHONE_1]"),
    ],
)
def test_detected(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "see you at 10:30 or 11:45:20",
        "back in 2024, or 2019-2021 maybe",
        "on 03.04.2024 and 2024-04-03 10:30:00 and 4/3/24",
        "it costs 1.000.000 or 1,250,000.50",
        "pi is 3.14159265",
        "count 1 2 3 4 5 6 7",
        "room 12, code 123456",
        "e.g. this, i.e. that, a.m. and p.m.",
    ],
)
def test_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_names_and_all_their_spellings_share_a_placeholder() -> None:
    # Name finding off: this is about participants' spellings, not other people's names.
    scrubber = Scrubber([["Ann Smith", "annie"], ["Bob Jones"]], find_names=False)
    assert scrubber.scrub("ANN SMITH, ann, Ann's, Smith and annie") == (
        "[NAME_1], [NAME_1], [NAME_1]'s, [NAME_1] and [NAME_1]"
    )
    assert scrubber.scrub("Bob met Annabelle and Jonesy") == "[NAME_2] met Annabelle and Jonesy"
    # Same value, same placeholder, in any later text.
    assert scrubber.scrub("bob.jones@example.com, again bob.jones@example.com") == (
        "[EMAIL_1], again [EMAIL_1]"
    )
    assert scrubber.scrub("and Ann") == "and [NAME_1]"


def test_names_that_are_words_only_when_capitalised() -> None:
    scrubber = Scrubber([["Will Turner"], ["Mark"]])
    assert scrubber.scrub("will you come, Will? mark my words, Mark") == (
        "will you come, [NAME_1]? mark my words, [NAME_2]"
    )


def test_particles_alone_are_not_names() -> None:
    assert scrub("de la Cruz is van Dyke", ["Maria de la Cruz"]) == "de la [NAME_1] is van Dyke"


def test_a_name_beside_a_handle_or_inside_a_url() -> None:
    assert scrub("hey @Ann Smith", ["Ann Smith"]) == "hey [HANDLE_1] [NAME_1]"
    assert scrub("https://ann.example.com/ann ok Ann", ["Ann"]) == "[URL_1] ok [NAME_1]"


def test_report_counts_without_values() -> None:
    scrubber = Scrubber([["Ann"]])
    scrubber.scrub("Ann: ann@example.com, ann@example.com, +44 7700 900123")
    report = scrubber.report.as_dict()
    assert report["replacements"]["EMAIL"] == 2 and report["distinct"]["EMAIL"] == 1
    assert report["replacements"]["NAME"] == 1
    assert "ann@example.com" not in str(report) and "Ann" not in str(report)
    assert scrubber.report.summary().startswith("2 email addresses (1 distinct), 1 phone number")
    assert scrubber.mapping()["[EMAIL_1]"] == "ann@example.com"


local_parts = st.from_regex(r"[a-z][a-z0-9._]{0,10}[a-z0-9]", fullmatch=True)
domains = st.from_regex(r"[a-z]{2,8}\.(com|org|de|co\.uk)", fullmatch=True)
emails = st.builds(lambda local, domain: f"{local}@{domain}", local_parts, domains)
phones = st.from_regex(
    r"\+[1-9]\d \d{3,4} \d{6}|0\d{3}[ -]\d{6,7}|\(\d{3}\) \d{3}-\d{4}", fullmatch=True
)
urls = st.builds(
    lambda domain, path: f"https://{domain}/{path}",
    domains,
    st.from_regex(r"[a-z0-9]{0,8}", fullmatch=True),
)
filler = st.text(
    alphabet=st.characters(categories=["L", "Zs", "P"], exclude_characters="@"), max_size=30
)


@given(value=st.one_of(emails, phones, urls), before=filler, after=filler)
def test_planted_values_never_survive(value: str, before: str, after: str) -> None:
    scrubber = Scrubber()
    result = scrubber.scrub(f"{before} {value} {after}")
    assert value not in result
    # Scrubbing is stable: a scrubbed text has nothing left to replace.
    assert scrubber.scrub(result) == result


@given(name=st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True), text=filler)
def test_planted_names_never_survive(name: str, text: str) -> None:
    result = Scrubber([[name]]).scrub(f"{text} {name} {text}")
    assert name not in result.split()


def test_names_without_their_accents() -> None:
    assert scrub("Zoe, zoë and MÜLLER", ["Zoë Müller"]) == "[NAME_1], [NAME_1] and [NAME_1]"


def test_tiny_or_everyday_participant_names_do_not_wipe_words() -> None:
    assert scrub("a cat, me and you", ["A"], ["me"], ["You"]) == "a cat, me and you"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail bob[at]example[dot]com", "mail [EMAIL_1]"),
        ("or jo dot smith at mail dot co dot uk.", "or [EMAIL_1]."),
        ("pay DE89 3704 0044 0532 0130 00 OK", "pay [IBAN_1] OK"),
        ("card 4111 1111 1111 1111 exp 09/27", "card [CARD_1] exp 09/27"),
        ("amex 378282246310005", "amex [CARD_1]"),
        ("mac a4:5e:60:c2:19:0f at 10:30", "mac [MAC_1] at 10:30"),
        ("at 48.85837, 2.29448 now", "at [GPS_1] now"),
        ("at 40°26'46\"N 79°58'56\"W", "at [GPS_1]"),
        ("passport C01X00T47, DNI 12345678Z", "passport [ID_1], DNI [ID_2]"),
        ("ssn 123-45-6789", "ssn [ID_1]"),
        ("live at 221B Baker Street, NW1 6XE", "live at [ADDRESS_1], [POSTCODE_1]"),
        ("12 rue de la Paix, 75002 Paris", "[ADDRESS_1], [POSTCODE_1] Paris"),
        ("Hauptstraße 5, 10115 Berlin", "[ADDRESS_1], [POSTCODE_1] Berlin"),
        ("I met Charlotte Dubois and José García", "I met [NAME_1] and [NAME_2]"),
        ("Dr. Okafor said Mrs Patel is fine", "Dr. [NAME_1] said Mrs [NAME_2] is fine"),
    ],
)
def test_detected_beyond_contact_details(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Will you come? May I ask. Long day. Can you help",
        "Mark my words, it will rain in April",
        "Paris was amazing, the Louvre was packed though",
        "Don't worry, we ran 10 km in 52 minutes",
        "Go down the road for 5 minutes, it's on the left",
        "The flight is BA 2490, lands at 18:20",
        "Order 2 pizzas and 1.5 litres of cola",
    ],
)
def test_ordinary_words_and_numbers_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_found_names_keep_their_placeholder_across_messages() -> None:
    scrubber = Scrubber([["Ann"]])
    assert scrubber.scrub("Ann met Charlotte Dubois") == "[NAME_1] met [NAME_2]"
    assert scrubber.scrub("charlotte said Dubois is away") == "[NAME_2] said [NAME_2] is away"
    assert scrubber.scrub("bob@example.com or bob[at]example[dot]com") == "[EMAIL_1] or [EMAIL_1]"


def test_finding_names_can_be_turned_off() -> None:
    assert Scrubber(find_names=False).scrub("I met Charlotte") == "I met Charlotte"


def test_replacements_say_where_they_were() -> None:
    text = "Charlotte: IBAN GB33BUKB20201555555555, call +44 7700 900461"
    scrubbed, replaced = Scrubber().scrub_with_spans(text)
    assert [(text[r.start : r.end], r.kind) for r in replaced] == [
        ("Charlotte", "NAME"),
        ("GB33BUKB20201555555555", "IBAN"),
        ("+44 7700 900461", "PHONE"),
    ]
    assert scrubbed == "[NAME_1]: IBAN [IBAN_1], call [PHONE_1]"


def _with_luhn(digits: str) -> str:
    total = sum(
        int(d) if i % 2 else sum(divmod(int(d) * 2, 10)) for i, d in enumerate(digits[::-1])
    )
    return digits + str((10 - total % 10) % 10)


cards = st.from_regex(r"4[0-9]{14}", fullmatch=True).map(_with_luhn)
ibans = st.from_regex(r"[0-9]{18}", fullmatch=True).map(
    lambda bban: f"DE{98 - int(bban + '131400') % 97:02d}{bban}"
)
macs = st.lists(st.from_regex(r"[0-9a-f]{2}", fullmatch=True), min_size=6, max_size=6).map(":".join)


@given(value=st.one_of(cards, ibans, macs), spaced=st.booleans(), before=filler, after=filler)
def test_planted_numbers_never_survive(value: str, spaced: bool, before: str, after: str) -> None:
    if spaced and ":" not in value:
        value = " ".join(value[i : i + 4] for i in range(0, len(value), 4))
    result = Scrubber().scrub(f"{before} {value} {after}")
    assert value not in result
    assert not any(group in result for group in value.split() if len(group) >= 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # street addresses: German "Am ...", Polish "ul. ...", one-word and numbered streets
        ("we moved to Am Markt 4 last year", "we moved to [ADDRESS_1] last year"),
        ("ul. Marszałkowska 84, Warszawa", "[ADDRESS_1], Warszawa"),
        ("the flat at 221 Kingsway is tiny", "the flat at [ADDRESS_1] is tiny"),
        ("office is 350 5th Ave, floor 3", "office is [ADDRESS_1], floor 3"),
        # the whole obfuscated email goes, not just its domain
        ("mail tom at example.org", "mail [EMAIL_1]"),
        # whole names, also unlisted given names and pet forms
        ("I met Mei Ling yesterday", "I met [NAME_1] yesterday"),
        ("ask Kasia about it", "ask [NAME_1] about it"),
        ("Priyanka Sharma called", "[NAME_1] called"),
        # a card with spaced separators; a lower-case UK NI number
        ("card 4111 - 1111 - 1111 - 1111 ok", "card [CARD_1] ok"),
        ("my ni is ab 12 34 56 c", "my ni is [ID_1]"),
    ],
)
def test_shapes_missed_before(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("she was born on 12/03/1990 in Leeds", "she was born on [DOB_1] in Leeds"),
        ("DOB: 1990-02-01", "DOB: [DOB_1]"),
        ("my birthday is on the 3rd of May", "my birthday is on the [DOB_1]"),
        ("geboren am 3. März 1985", "geboren am [DOB_1]"),
        ("ich bin am 3. März 1985 geboren", "ich bin am [DOB_1] geboren"),
        ("née le 4 juillet 1979 à Lyon", "née le [DOB_1] à Lyon"),
        ("nacido el 12 de marzo de 1990", "nacido el [DOB_1]"),
        ("urodzony 5 maja 1988", "urodzony [DOB_1]"),
        ("nato il 2 giugno 1975", "nato il [DOB_1]"),
    ],
)
def test_dates_of_birth(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "look at example.org first",
        "we are at example.org now",
        "the meeting on 12/03/2024 at 10:30",
        "Yesterday Sharma called",
        "born to run, 3 times a week",
        "Am Montag 5 Leute kommen",
        "Zur Zeit 3 Leute",
    ],
)
def test_new_detectors_leave_ordinary_text(text: str) -> None:
    scrubbed = scrub(text)
    for kind in ("DOB", "EMAIL", "ADDRESS"):
        assert f"[{kind}_" not in scrubbed
    assert "Yesterday" in scrubbed or "Yesterday" not in text


def test_lower_case_first_names_in_own_messages_are_flagged_not_replaced() -> None:
    scrubber = Scrubber()
    assert scrubber.scrub_own("met emma and will at the pub") == "met emma and will at the pub"
    assert scrubber.scrub("tell emma hi") == "tell emma hi"  # the other side: not counted
    assert scrubber.report.to_review == 1
    assert scrubber.to_review() == {"emma": 1}
    assert "1 lower-case word in the persona's messages is a first name" in (
        scrubber.report.summary()
    )
    assert "emma" not in scrubber.report.summary()


# Pieces that wake each detector, its cheap checks' edge cases and the characters that
# fool naive ones (non-ASCII digits and capitals, brackets of a placeholder).
_PIECES = st.sampled_from(
    [
        "ann@example.org",
        "bob [at] example [dot] com",
        "tom at example dot org",
        "tom AT example.org",
        "(a) x",
        "{at}",
        "http://localhost",
        "www.example.net",
        "example.com/p",
        "@ann_s",
        "@here",
        "+44 7700 900123",
        "5551234567",
        "DE89 3704 0044 0532 0130 00",
        "4111 1111 1111 1111",
        "a4:5e:60:c2:19:0f",
        "48.85837, 2.29448",
        "born 3 March 1985",
        "123-45-6789",
        "221B Baker Street",
        "SW1A 2AA",
        "Charlotte Dubois",
        "Dr Okafor",
        "charlotte",
        "Ann",
        "ann",
        "Zoë",
        "Ẑoe",
        "ℂhris",
        "²³⁴⁵⁶⁷⁸",
        "٣٤٥٦٧٨٩٠",
        "[NAME_1]",
        "[EMAIL_9]",
        "10:30",
        "2024",
        ". ",
        "\n",
        " ",
    ]
)
_MESSAGES = st.lists(
    st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=6).map("".join),
    min_size=1,
    max_size=6,
)


@given(messages=_MESSAGES)
@example(messages=["ℂhris said hi"])  # a capital that str.lower() leaves as it is
@example(messages=["call ٠٣٤٥٦٧٨٩٠١"])  # digits that are not ASCII
def test_cheap_checks_never_change_what_is_replaced(messages: list[str]) -> None:
    # The quick path skips detectors a message cannot wake; every detector on every
    # message must give the same texts, spans, placeholders and report.
    quick = Scrubber([["Ann Smith"], ["Ben"]])
    full = Scrubber([["Ann Smith"], ["Ben"]])
    full._prefilter = False
    for index, message in enumerate(messages):
        if index % 2:
            assert quick.scrub_own(message) == full.scrub_own(message)
        else:
            assert quick.scrub_with_spans(message) == full.scrub_with_spans(message)
    assert quick.mapping() == full.mapping()
    assert quick.report == full.report
    assert quick.to_review() == full.to_review()
