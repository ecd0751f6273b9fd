"""Answers in each tool's own export format import into the same judgement table.

The fixture files were written by hand from each tool's documented layout, for the
questionnaire ``fixture_study()`` builds (seed 11). Three judges answer the same way in
every file: PID001 gets everything right, PID002 misses both test pairs, PID003 fails
the catch pair (and so is excluded). Some files add what only that tool produces (a
Qualtrics preview, unfinished responses).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.questionnaires.answers import import_responses
from sdtt.tasks.judgements import Judgement
from tests.questionnaires.helpers import fixture_study

FIXTURES = Path(__file__).parent / "fixtures"
CATCH, SMELL, MUSIC = "pzwkzrh", "ppb2bgn", "pm6h8nh"
FILES = {
    "surveyjs": "surveyjs-results.json",
    "qualtrics": "qualtrics-responses.csv",
    "jspsych": "jspsych-data.csv",
    "limesurvey": "limesurvey-responses.csv",
    "csv": "generic-answers.csv",
}
EXPECTED = {
    ("PID001", CATCH): ("A", True),
    ("PID001", SMELL): ("A", True),
    ("PID001", MUSIC): ("B", True),
    ("PID002", CATCH): ("A", True),
    ("PID002", SMELL): ("B", False),
    ("PID002", MUSIC): ("A", False),
    ("PID003", CATCH): ("B", False),
    ("PID003", SMELL): ("A", True),
    ("PID003", MUSIC): ("B", True),
}
DEMOGRAPHICS = {
    "PID001": {
        "age": "25-34",
        "gender": "Woman",
        "education": "Bachelor's degree",
        "language": "English",
        "aiuse": "Daily",
    },
    "PID003": {
        "age": "35-44",
        "gender": "Prefer not to say",
        "education": "Doctorate",
        "language": "Spanish",
        "aiuse": "A few times a week",
    },
}


def imported(format_name: str, file: str | None = None) -> list[Judgement]:
    study = fixture_study()
    result = import_responses(
        [FIXTURES / (file or FILES[format_name])], format_name, study.questionnaire, study.key
    )
    return result.judgements


def core(judgements: list[Judgement]) -> dict[tuple[str, str], tuple[str | None, bool | None]]:
    return {
        (j.judge_id, j.pair_id): (j.choice, j.correct)
        for j in judgements
        if j.judge_id in ("PID001", "PID002", "PID003")
    }


def test_fixture_study_has_the_ids_the_fixtures_use() -> None:
    study = fixture_study()
    assert [item.id for item in study.questionnaire.items] == [CATCH, SMELL, MUSIC]
    assert study.questionnaire.id == "qrp597d"
    assert study.key.items[CATCH].kind == "catch"


@pytest.mark.parametrize("format_name", list(FILES))
def test_every_tool_gives_the_same_judgements(format_name: str) -> None:
    judgements = imported(format_name)
    assert core(judgements) == EXPECTED
    by_judge = {j.judge_id: j for j in judgements}
    assert by_judge["PID001"].demographics == DEMOGRAPHICS["PID001"]
    assert by_judge["PID003"].demographics == DEMOGRAPHICS["PID003"]
    assert by_judge["PID001"].strategy == "Looked for typos and slang"
    assert by_judge["PID002"].strategy is None
    assert all(j.source == f"{format_name}:{FILES[format_name]}" for j in judgements)
    assert all(j.study == "fixture" and j.judge_type == "human" for j in judgements)


def test_qualtrics_numeric_values_export_matches_choice_text_export() -> None:
    text = imported("qualtrics")
    numeric = imported("qualtrics", "qualtrics-responses-numeric.csv")
    strip = [j.model_dump(exclude={"source"}) for j in text]
    assert strip == [j.model_dump(exclude={"source"}) for j in numeric]


@pytest.mark.parametrize("format_name", list(FILES))
def test_failed_catch_pair_excludes_all_of_that_judges_answers(format_name: str) -> None:
    judgements = [j for j in imported(format_name) if j.judge_id in ("PID001", "PID002", "PID003")]
    excluded = {j.judge_id for j in judgements if j.excluded}
    assert excluded == {"PID003"}
    reasons = {j.exclusion_reason for j in judgements if j.judge_id == "PID003"}
    assert reasons == {"failed 1 catch pair(s) (at most 0 allowed)"}
    # Kept in the table with their answers, not dropped.
    assert len([j for j in judgements if j.judge_id == "PID003"]) == 3


def test_topic_answers_are_scored_and_labelled() -> None:
    judgements = {(j.judge_id, j.pair_id): j for j in imported("surveyjs")}
    assert judgements["PID001", SMELL].topic_answer == "What's your favorite smell?"
    assert judgements["PID001", SMELL].topic_correct is True
    wrong = judgements["PID003", SMELL]
    assert wrong.topic_correct is False
    assert wrong.topic_answer == "Which app on your phone do you use the most?"


def test_response_times_where_the_tool_records_them() -> None:
    def seconds(format_name: str) -> float | None:
        found = imported(format_name)
        return next(
            j for j in found if (j.judge_id, j.pair_id) == ("PID001", SMELL)
        ).response_time_s

    assert seconds("surveyjs") == 45.75
    assert seconds("qualtrics") == 45.75
    assert seconds("jspsych") == 45.75
    assert seconds("csv") == 45.75
    assert seconds("limesurvey") is None


def test_x_turns_and_condition_come_from_the_answer_key() -> None:
    judgement = next(j for j in imported("csv") if j.pair_id == MUSIC)
    assert judgement.x_turns == 3
    assert judgement.pair_kind == "test"
    assert judgement.shown.bot_conversation == "bot-conv-2"
    assert judgement.shown.bot and judgement.shown.bot.model == "openai/gpt-4o-2024-08-06"
    catch = next(j for j in imported("csv") if j.pair_id == CATCH)
    assert catch.pair_kind == "catch"


def test_qualtrics_preview_and_unfinished_responses_are_kept_but_excluded() -> None:
    judgements = imported("qualtrics")
    preview = [j for j in judgements if j.judge_id == "R_4d5e6f7g8h9i0j1"]
    assert len(preview) == 3
    assert all(j.excluded for j in preview)
    assert all("preview, test or spam response" in (j.exclusion_reason or "") for j in preview)
    unfinished = {j.pair_id: j for j in judgements if j.judge_id == "PID004"}
    assert all("did not finish" in (j.exclusion_reason or "") for j in unfinished.values())
    assert unfinished[CATCH].choice == "A"
    assert unfinished[SMELL].choice is None
    assert "no answer" in (unfinished[SMELL].exclusion_reason or "")


def test_limesurvey_incomplete_response_is_excluded() -> None:
    judgements = [j for j in imported("limesurvey") if j.judge_id == "PID004"]
    assert len(judgements) == 3
    assert all("did not finish" in (j.exclusion_reason or "") for j in judgements)


def test_a_judge_answering_twice_is_marked_as_repeat(tmp_path: Path) -> None:
    study = fixture_study()
    files = [FIXTURES / FILES["csv"], FIXTURES / FILES["csv"]]
    result = import_responses(files, "csv", study.questionnaire, study.key)
    second = result.judgements[len(result.judgements) // 2 :]
    assert all("repeat participation" in (j.exclusion_reason or "") for j in second)
    assert not any("repeat" in (j.exclusion_reason or "") for j in result.judgements[: len(second)])
    assert result.excluded_judges["repeat participation"] == 3


def test_topic_errors_within_the_allowance_do_not_exclude() -> None:
    judgements = [j for j in imported("csv") if j.judge_id == "PID003"]
    # One wrong topic answer, one allowed by default: only the catch pair excludes.
    assert "topic" not in (judgements[0].exclusion_reason or "")


def test_unknown_answer_is_an_error_with_its_location(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("judge_id,question,answer\nj1,pm6h8nh,maybe\n", encoding="utf-8")
    study = fixture_study()
    with pytest.raises(InputError, match=r"answers.csv:2.*'maybe'.*pm6h8nh"):
        import_responses([path], "csv", study.questionnaire, study.key)


def test_answers_to_another_questionnaire_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    text = (FIXTURES / FILES["jspsych"]).read_text(encoding="utf-8").replace("qrp597d", "qother1")
    path.write_text(text, encoding="utf-8")
    study = fixture_study()
    with pytest.raises(InputError, match="questionnaire 'qother1'"):
        import_responses([path], "jspsych", study.questionnaire, study.key)


def test_a_csv_that_is_not_a_qualtrics_export_is_refused() -> None:
    study = fixture_study()
    with pytest.raises(InputError, match="ImportId"):
        import_responses(
            [FIXTURES / FILES["limesurvey"]], "qualtrics", study.questionnaire, study.key
        )
