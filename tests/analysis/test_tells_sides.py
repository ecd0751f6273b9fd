"""Tells of both sides, condition by condition: burstiness, openings and closings too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sdtt.analysis.report import build_report
from sdtt.analysis.table import judgement_table
from sdtt.analysis.tells import compare, study_tells, tell_warnings, transcript_side
from sdtt.dialogue.message import Message, Transcript
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.pairing import Pairing
from sdtt.tasks.study import StudySpec

START = datetime(2025, 2, 1, 12, tzinfo=UTC)
TOPIC = "What's your favorite smell?"


def chat(name: str, turns: list[tuple[list[str], list[str]]], **meta: object) -> Transcript:
    messages, time = [], START
    for asked, said in turns:
        for side, texts in (("user", asked), ("response", said)):
            for text in texts:
                time += timedelta(seconds=20)
                messages.append(Message(side=side, text=text, time=time))
    return Transcript(id=name, topic=TOPIC, messages=messages, meta=dict(meta))


PERSON_A = "so what kind of smells do you like most, honestly"
PERSON_B = "fresh bread in the morning, easily the best one for me"


def human(name: str, turns: int = 8) -> Transcript:
    return chat(name, [([PERSON_A], [PERSON_B])] * turns)


def condition_tells(pairings: list[Pairing]) -> dict[str, dict[tuple[str, str], float]]:
    built = build_questionnaire(StudySpec(x_turns=[4], catch_pairs=0, seed=2), pairings)
    return {
        condition: {(row.side, row.name): row.difference for row in rows}
        for condition, rows in study_tells(built.questionnaire, built.key).items()
    }


def test_a_tell_of_one_condition_is_its_own_not_diluted_by_the_others() -> None:
    model = {"model": "mock/chatty", "interrogator": "human", "pseudo_turns": 0}
    eliza = {"model": "eliza/classic", "interrogator": "human", "pseudo_turns": 0}
    like_a_person = chat("m", [([PERSON_A], [PERSON_B])] * 6, **model)
    # ELIZA answers every line with two, and its User A writes twice in a row.
    bursty = chat("e", [([PERSON_A, PERSON_A], [PERSON_B, PERSON_B])] * 6, **eliza)
    pairings = [Pairing(like_a_person, None, human("h1"), None)]
    pairings += [Pairing(bursty, None, human(f"h{n}"), None) for n in (2, 3, 4)]
    tells = condition_tells(pairings)
    eliza_key = "eliza/classic (baseline), burst, turn 6 (N=0, X=4)"
    model_key = "mock/chatty, burst, turn 6 (N=0, X=4)"
    assert set(tells) == {eliza_key, model_key}
    # In B's runs: 4 of ELIZA's 8 lines come right after its own, none of the human's.
    assert tells[eliza_key][("B", "runs")] == pytest.approx(0.5)
    # A's first line opens the window, so 4 of the other 7 follow A's own.
    assert tells[eliza_key][("A", "runs")] == pytest.approx(4 / 7)
    assert tells[eliza_key][("B", "messages")] == pytest.approx(8 - 4)
    assert tells[model_key][("B", "runs")] == 0 and tells[model_key][("B", "messages")] == 0


def test_side_a_of_a_simulated_interrogator_is_compared_and_warned_about() -> None:
    meta = {"model": "mock/chatty", "interrogator": "mock/chatty", "pseudo_turns": 0}
    simulated = chat("s", [(["lol"], [PERSON_B])] * 6, **meta)
    built = build_questionnaire(
        StudySpec(x_turns=[4], catch_pairs=0), [Pairing(simulated, None, human("h"), None)]
    )
    ((condition, rows),) = study_tells(built.questionnaire, built.key).items()
    assert condition.endswith("simulated User A (mock/chatty)")
    chars = {row.side: row for row in rows if row.name == "chars"}
    assert (chars["A"].bot, chars["A"].human) == (3, len(PERSON_A))
    assert chars["B"].difference == 0
    (warning,) = tell_warnings(rows, condition)
    assert warning.startswith(f"{condition}, side A characters per message: bot 3.0, human 49.0")


def test_burstiness_is_the_share_of_lines_right_after_the_same_speaker() -> None:
    # U R R U R R R: of B's five lines, three follow B's own.
    talk = chat("t", [(["a"], ["b", "c"]), (["d"], ["e", "f", "g"])])
    assert transcript_side([talk.messages]).follows == (False, True, False, True, True)
    assert transcript_side([talk.messages], "A").follows == (False,)


def test_openings_and_closings_are_tells() -> None:
    bot = chat("b", [(["hey there!"], ["hi"]), ([PERSON_A], [PERSON_B])])
    goodbye = chat("h", [([PERSON_A], [PERSON_B]), (["Good talk!"], ["see ya!"])])
    rows = compare(transcript_side([bot.messages]), transcript_side([goodbye.messages]))
    warned = " ".join(tell_warnings(rows))
    assert "side B share of chats closed with a goodbye: bot 0%, human 100%" in warned
    assert transcript_side([bot.messages], "A").opens == (True,)
    assert transcript_side([goodbye.messages], "A").opens == (False,)


def test_the_report_shows_side_a_beside_side_b_for_a_simulated_user_a(tmp_path: Path) -> None:

    meta = {"model": "mock/chatty", "interrogator": "mock/chatty", "pseudo_turns": 0}
    simulated = chat("s", [(["lol"], [PERSON_B])] * 6, **meta)
    built = build_questionnaire(
        StudySpec(x_turns=[4], catch_pairs=0), [Pairing(simulated, None, human("h"), None)]
    )
    tells = study_tells(built.questionnaire, built.key)
    report = build_report(judgement_table([]), tmp_path, tells=tells, reps=0)
    (section,) = [s for s in report.sections if s.title.startswith("Tells")]
    (row,) = [r for r in section.rows if r[1] == "characters per message"]
    shown = dict(zip(section.header, row, strict=True))
    assert shown["condition"].endswith("simulated User A (mock/chatty)")
    # Side B's bot and human write alike; side A's program writes 3 characters, the person 49.
    assert shown["B: bot - human"] == "0.00"
    assert (shown["A: bot"], shown["A: human"]) == ("3.00", f"{len(PERSON_A):.2f}")
