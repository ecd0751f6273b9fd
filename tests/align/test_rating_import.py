"""Human ratings back from SurveyJS, jsPsych and the long CSV; the rating table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.align.rating_import import import_ratings
from sdtt.align.ratings import (
    RepeatedRatingWarning,
    append_ratings,
    load_ratings,
    read_ratings,
)
from sdtt.errors import InputError
from tests.align.helpers import build


def test_surveyjs_results_become_ratings(tmp_path: Path) -> None:
    built = build(tmp_path)
    first, second = built.task.pairs[:2]
    results = [
        {
            "PROLIFIC_PID": "judge1",
            first.id: 7,
            second.id: 2,
            "page_seconds": {first.id + "page": 4.5},
        },
        {"PROLIFIC_PID": "judge2", first.id: "3"},
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    ratings = import_ratings(path, built.task, built.key, "surveyjs")
    got = {(r.judge_id, r.pair_id): r.rating for r in ratings}
    assert got == {("judge1", first.id): 7, ("judge1", second.id): 2, ("judge2", first.id): 3}
    assert ratings[0].response_time_s == 4.5
    assert {r.cohort for r in ratings} == {"human"}
    assert (ratings[0].first, ratings[0].second) == (first.first, first.second)


def test_jspsych_rows_become_ratings(tmp_path: Path) -> None:
    built = build(tmp_path)
    pair = built.task.pairs[0]
    path = tmp_path / "data.csv"
    path.write_text(
        "rt,response,role,question,answer,judge_id,task\n"
        f"1200,,intro,,,j1,{built.task.id}\n"
        f"2500,4,rating,{pair.id},5,j1,{built.task.id}\n",
        encoding="utf-8",
    )
    [rating] = import_ratings(path, built.task, built.key, "jspsych")
    assert (rating.judge_id, rating.rating, rating.response_time_s) == ("j1", 5, 2.5)


def test_long_csv_accepts_values_and_labels_and_never_guesses(tmp_path: Path) -> None:
    built = build(tmp_path)
    a, b, c = (p.id for p in built.task.pairs[:3])
    path = tmp_path / "answers.csv"
    path.write_text(
        f"judge_id,question,answer\nj1,{a},6\nj1,{b},7 - very similar\nj1,{c},9\n",
        encoding="utf-8",
    )
    ratings = import_ratings(path, built.task, built.key, "csv")
    assert [r.rating for r in ratings] == [6, 7, None]
    assert ratings[2].excluded and "not on the scale 1-7" in (ratings[2].exclusion_reason or "")


def test_an_unknown_pair_names_the_line(tmp_path: Path) -> None:
    built = build(tmp_path)
    path = tmp_path / "answers.csv"
    path.write_text("judge_id,question,answer\nj1,nosuch,3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"answers\.csv:2.*'nosuch'"):
        import_ratings(path, built.task, built.key, "csv")


def test_unsupported_import_format(tmp_path: Path) -> None:
    built = build(tmp_path)
    with pytest.raises(InputError, match="not supported for rating tasks"):
        import_ratings(tmp_path / "x.csv", built.task, built.key, "qualtrics")


def test_rating_table_round_trip_keeps_first_usable_answer(tmp_path: Path) -> None:
    built = build(tmp_path)
    a, b = (p.id for p in built.task.pairs[:2])
    path = tmp_path / "answers.csv"
    path.write_text(f"judge_id,question,answer\nj1,{a},2\nj1,{b},x\n", encoding="utf-8")
    ratings = import_ratings(path, built.task, built.key, "csv")
    table = tmp_path / "ratings.jsonl"
    append_ratings(table, ratings)
    append_ratings(table, ratings)  # imported twice by mistake
    assert len(read_ratings(table)) == 4
    with pytest.warns(RepeatedRatingWarning, match="1 repeated rating"):
        [kept] = load_ratings([table])
    assert (kept.pair_id, kept.rating) == (a, 2)


def test_a_bad_rating_record_names_its_line(tmp_path: Path) -> None:
    table = tmp_path / "ratings.jsonl"
    table.write_text('{"version": 1, "task": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"ratings\.jsonl:1"):
        read_ratings(table)
