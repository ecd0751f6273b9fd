"""What a person sees on every page of every mode, in real Chromium at phone (375x667),
laptop (1280x800) and desktop (1920x1080) size: the parts that must show are visible and
every button that must work takes a click at its centre (``elementFromPoint``); the parts
that must not show (the market, the belief slider, the other verdict question) are
hidden; nothing sticks out sideways. The five studies are walked once for the module
(see ``pages.py``)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.serve.pages import tools, walk_pages

Probe = dict[str, Any]

# (game, who, page) -> (parts that must be visible, parts that must not be)
ALWAYS_HIDDEN = {"consent", "lobby", "done", "verdict", "notice", "moveHere"}
PAGES: dict[tuple[str, str, str], tuple[set[str], set[str]]] = {
    ("bot", "interrogator", "consent"): (
        {"consent", "consentYes", "consentNo", "consentLink"},
        {"lobby", "chat", "verdict", "done", "market", "belief", "notice"},
    ),
    ("bot", "interrogator", "chat"): (
        {"chat", "pane1", "input1", "send1", "turns1", "belief", "beliefSlider", "report1"}
        | {"clock"},
        ALWAYS_HIDDEN | {"pane2", "tabs", "market", "chatEnded", "verdictTwo", "verdictThree"},
    ),
    # The same link opened in a second tab: this one stops, its chat still in view.
    ("bot", "interrogator", "chat-replaced"): (
        {"chat", "pane1", "notice"},
        {"input1", "send1", "report1", "clock", "belief", "beliefSlider", "verdict", "done"},
    ),
    ("bot", "interrogator", "verdict"): (
        {"verdict", "verdictTwo", "verdictChoice", "verdictSend", "confidence", "chat", "pane1"}
        | {"chatEnded", "questions"},
        {"verdictThree", "input1", "send1", "report1", "belief", "market", "notice", "done"},
    ),
    ("bot", "interrogator", "done"): (
        {"done", "code", "feedback", "points"},
        {"chat", "verdict", "market", "belief", "notice", "consent", "lobby"},
    ),
    ("bot", "declined", "done"): (
        {"done"},
        {"code", "points", "consent", "chat", "lobby", "verdict"},
    ),
    ("human", "interrogator", "lobby"): (
        {"lobby", "lobbyWait"},
        {"consent", "chat", "market", "belief", "verdict", "done"},
    ),
    ("human", "interrogator", "chat"): (
        {"chat", "pane1", "input1", "send1", "belief", "beliefSlider"},
        ALWAYS_HIDDEN | {"market", "pane2", "tabs", "verdictTwo"},
    ),
    ("human", "witness", "chat"): (
        {"chat", "pane1", "input1", "send1", "turns1", "report1"},
        ALWAYS_HIDDEN | {"belief", "market", "pane2", "tabs", "verdictTwo", "verdictThree"},
    ),
    ("human", "interrogator", "chat-refused"): (
        {"chat", "notice", "input1", "send1"},
        {"verdict", "market", "done"},
    ),
    ("human", "interrogator", "verdict"): (
        {"verdict", "verdictTwo", "verdictSend", "pane1"},
        {"verdictThree", "notice", "belief", "send1"},
    ),
    ("human", "witness", "done"): (
        {"done", "code", "points"},
        {"chat", "verdict", "belief", "notice", "feedback"},
    ),
    ("three", "interrogator", "chat"): (
        {"chat", "pane1", "input1", "send1", "turns1"},
        ALWAYS_HIDDEN | {"belief", "market", "verdictThree"},
    ),
    ("three", "witness", "chat"): (
        {"chat", "pane1", "input1", "send1"},
        ALWAYS_HIDDEN | {"pane2", "tabs", "belief", "market"},
    ),
    ("three", "interrogator", "verdict"): (
        {"verdict", "verdictThree", "verdictChoice", "verdictSend", "pane1"},
        {"verdictTwo", "belief", "market", "send1", "send2", "notice"},
    ),
    ("three", "witness", "done"): ({"done", "code"}, {"chat", "verdict", "notice", "points"}),
    ("own", "own-person", "lobby"): (
        {"lobby"},
        {"lobbyWait", "chat", "consent", "done", "verdict"},
    ),
    ("own", "own-person", "chat"): (
        {"chat", "pane1", "input1", "send1"},
        ALWAYS_HIDDEN | {"belief", "market", "pane2"},
    ),
    ("own", "interrogator", "chat"): (
        {"chat", "pane1", "input1", "send1", "belief"},
        ALWAYS_HIDDEN | {"market", "pane2"},
    ),
    ("own", "own-person", "lobby-again"): (
        {"lobby"},
        {"chat", "done", "code", "verdict", "notice"},
    ),
    # The first device, once the link moved on: stopped, told why.
    ("own", "own-person", "moved-away"): (
        {"notice"},
        {"input1", "send1", "clock", "consent", "chat", "verdict", "done", "moveHere"},
    ),
    ("own", "second-device", "move-prompt"): (
        {"notice", "moveHere"},
        {"consent", "lobby", "chat", "done", "verdict"},
    ),
    ("market", "bettor", "chat"): (
        {"chat", "market", "chart", "trade", "tradeCount", "doneBuying", "input1", "send1"},
        ALWAYS_HIDDEN | {"belief", "pane2", "confirmTrade", "queued", "pending1"},
    ),
    ("market", "target", "chat"): (
        {"chat", "input1", "send1"},
        ALWAYS_HIDDEN | {"market", "belief", "trade", "doneBuying", "pending1", "queued"},
    ),
    ("market", "bettor", "chat-refused"): (
        {"notice", "market", "trade"},
        {"belief", "done", "confirmTrade"},
    ),
    ("market", "bettor", "done"): (
        {"done", "code", "reveal"},
        {"notice", "market", "chat", "belief", "verdict"},
    ),
}
SIZES = ("phone", "laptop", "desktop")


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    found = tools()
    if isinstance(found, str):
        pytest.fail(found)
    folder = tmp_path_factory.mktemp("pages")
    log = walk_pages(folder)
    with sqlite3.connect(folder / "bot" / "pilot.sqlite3") as db:
        log["botVerdicts"] = list(db.execute("SELECT human, confidence FROM verdicts"))
    return log


def _probe(walked: dict[str, Any], game: str, who: str, page: str, size: str) -> Probe:
    matches = [
        p
        for p in walked["probes"]
        if (p["game"], p["who"], p["page"], p["size"]) == (game, who, page, size)
    ]
    assert len(matches) == 1, f"{game}/{who}/{page} at {size} was not reached: {walked['errors']}"
    found: Probe = matches[0]
    return found


def _visible(probe: Probe, part: str) -> bool:
    return any(found["visible"] for found in probe["parts"][part])


def test_every_page_was_reached_without_errors(walked: dict[str, Any]) -> None:
    assert walked["errors"] == []
    reached = {(p["game"], p["who"], p["page"]) for p in walked["probes"]}
    assert reached == set(PAGES)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("key", sorted(PAGES), ids=lambda k: "-".join(k))
def test_what_each_page_shows_and_hides(
    walked: dict[str, Any], key: tuple[str, str, str], size: str
) -> None:
    probe = _probe(walked, *key, size)
    shown, hidden = PAGES[key]
    if key == ("three", "interrogator", "chat"):
        # Side by side on a wide screen; one at a time, by tabs, on a phone.
        both = {"pane2", "input2", "send2", "turns2"}
        shown = shown | ({"tabs", "tab1", "tab2"} if size == "phone" else both)
        hidden = hidden | (both if size == "phone" else {"tabs"})
    assert sorted(p for p in shown if not _visible(probe, p)) == [], "must be visible"
    assert sorted(p for p in hidden if _visible(probe, p)) == [], "must be hidden"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("key", sorted(PAGES), ids=lambda k: "-".join(k))
def test_every_visible_control_takes_a_click_and_fits_the_screen(
    walked: dict[str, Any], key: tuple[str, str, str], size: str
) -> None:
    probe = _probe(walked, *key, size)
    assert probe["scrollWidth"] <= probe["width"], "the page scrolls sideways"
    covered, outside = [], []
    for name, found in probe["parts"].items():
        for element in found:
            if not element["visible"]:
                continue
            if element["clickable"] is False:
                covered.append(name)
            box = element["box"]
            if box["x"] < 0 or box["x"] + box["width"] > probe["width"] + 0.5:
                outside.append(name)
    assert covered == [], "a click at these controls' centre lands on something else"
    assert outside == []


def test_the_verdict_page_shows_the_chat_with_its_last_answer(walked: dict[str, Any]) -> None:
    for game in ("bot", "human", "three"):
        for size in SIZES:
            assert _probe(walked, game, "interrogator", "verdict", size)["lastThemSeen"], (
                game,
                size,
            )


def test_a_refused_message_stays_in_the_box(walked: dict[str, Any]) -> None:
    probe = _probe(walked, "human", "interrogator", "chat-refused", "laptop")
    assert probe["input1"] == "one more thing"


def test_three_party_on_a_phone_marks_the_other_chat_unread(walked: dict[str, Any]) -> None:
    probe = _probe(walked, "three", "interrogator", "verdict", "phone")
    assert _visible(probe, "unread2") and not _visible(probe, "pane2")


def test_a_reload_keeps_the_belief_slider_where_it_was(walked: dict[str, Any]) -> None:
    assert walked["sliderAfterReload"] == "80"


def test_consent_has_paragraphs_and_safe_links_only(walked: dict[str, Any]) -> None:
    parts = _probe(walked, "bot", "interrogator", "consent", "laptop")["parts"]
    assert len(parts["consentLink"]) == 1  # the https link; never the javascript: one
    assert parts["consentMarkup"] == []  # <b> is shown as text


def test_pasting_into_the_message_box_is_blocked(walked: dict[str, Any]) -> None:
    assert walked["pasteBlocked"] is True


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


def test_the_done_page_shows_the_points_earned(walked: dict[str, Any]) -> None:
    # The bot game gives 1 point per finished chat and 2 per right verdict; its
    # interrogator judged the bot a computer (right). The person game's witness finished.
    for size in SIZES:
        bot = _probe(walked, "bot", "interrogator", "done", size)["points"]
        assert _lines(bot) == [
            "You earned 3 points in this study.",
            "1 × finished chat: 1 point",
            "1 × right answer: 2 points",
        ]
        witness = _probe(walked, "human", "witness", "done", size)["points"]
        assert _lines(witness) == [
            "You earned 1 point in this study.",
            "1 × finished chat: 1 point",
        ]
        assert _probe(walked, "market", "bettor", "done", size)["points"] is None


def test_a_window_another_tab_took_over_stops(walked: dict[str, Any]) -> None:
    # (The clock and the Send box show in the chat before: see PAGES.)
    assert walked["replacedTold"] == "The study was opened in another window."
    assert walked["replacedEditable"] is False


def test_the_own_person_who_moved_device_is_told_so(walked: dict[str, Any]) -> None:
    assert "another device" in walked["firstDeviceTold"]


def test_an_untouched_confidence_slider_is_stored_as_not_moved(walked: dict[str, Any]) -> None:
    # The bot game's interrogator answered "no" and never moved the confidence slider.
    assert walked["botVerdicts"] == [("no", None)]


def test_a_bettor_on_a_phone_sees_the_price_and_the_trades_while_reading_an_answer(
    walked: dict[str, Any],
) -> None:
    phone = _probe(walked, "market", "bettor", "chat", "phone")
    assert phone["inView"] == {"chart": True, "trade": True, "answer": True, "input": True}
    # On a wide screen the market stays beside the chat.
    for size in ("laptop", "desktop"):
        parts = _probe(walked, "market", "bettor", "chat", size)["parts"]
        assert parts["chart"][0]["box"]["x"] > parts["pane1"][0]["box"]["x"] + 100
