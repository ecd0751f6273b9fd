"""Word association: the bundled cues, the papers' post-processing, machine answers from
a (mock) model and human answers from CSV, with errors naming file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.models import GenerateConfig, Prompt, get_model
from sdtt.single.catch import response_catch_items
from sdtt.single.cues import ADJECTIVES, CUES, NOUNS, VERBS, read_cues
from sdtt.single.lemma import lemmatise
from sdtt.single.response import SingleResponse, Truth, read_responses, write_responses
from sdtt.single.svm import svm_judge
from sdtt.single.wordassoc import machine_associations, read_human_associations
from sdtt.single.wordclean import STOP_WORDS, clean_association


def test_the_bundled_cues_are_150_words_of_three_kinds() -> None:
    assert (len(NOUNS), len(VERBS), len(ADJECTIVES)) == (50, 50, 50)
    assert len(set(CUES)) == 150
    assert all(len(cue) >= 3 and cue.isalpha() and cue.islower() for cue in CUES)
    assert not set(CUES) & STOP_WORDS


@pytest.mark.parametrize(
    ("cue", "answer", "word", "reason"),
    [
        ("cold", "Ice-Cream!", "icecream", None),
        ("cat", "Dogs", "dog", None),
        ("race", "ran", "run", None),
        ("sleep", "dreaming", "dream", None),
        ("river", "the", "the", "stop word"),
        ("farm", "ox", "ox", "fewer than 3 letters"),
        ("grand", "grandiose", "grandiose", "too similar to the cue"),
        ("happy", "unhappy", "unhappy", "too similar to the cue"),
        ("run", "running", "run", "too similar to the cue"),
        ("house", "  ", "", "empty"),
    ],
)
def test_post_processing_follows_the_papers_steps(
    cue: str, answer: str, word: str, reason: str | None
) -> None:
    cleaned = clean_association(cue, answer)
    assert (cleaned.word, cleaned.reason) == (word, reason)


@pytest.mark.parametrize(
    ("word", "lemma"),
    [
        ("cities", "city"),
        ("boxes", "box"),
        ("children", "child"),
        ("went", "go"),
        ("making", "make"),
        ("hopping", "hop"),
        ("cooked", "cook"),
        ("dancing", "dance"),
        ("glass", "glass"),
        ("news", "news"),
        ("morning", "morning"),
        ("water", "water"),
        ("better", "good"),
        ("bigger", "big"),
    ],
)
def test_the_rule_based_lemmatiser_on_everyday_words(word: str, lemma: str) -> None:
    assert lemmatise(word) == lemma


@pytest.mark.trio
async def test_machine_answers_are_post_processed_and_refusals_asked_again(
    tmp_path: Path,
) -> None:
    answers = {"bread": ["Butter."], "river": ["rivers", "a", "Stream"], "dog": ["the"] * 3}

    def script(prompt: Prompt, config: GenerateConfig) -> str:
        cue = prompt.task.rsplit(" ", 1)[-1].rstrip("?")
        return answers[cue].pop(0)

    async with get_model("mock/test", replies=script) as model:
        found = await machine_associations(model, ["bread", "river", "dog"], seed=5)
    assert [(r.stimulus, r.response, r.exclusion_reason) for r in found] == [
        ("bread", "butter", None),
        ("river", "stream", None),
        ("dog", "the", "stop word"),
    ]
    assert [r.meta["attempts"] for r in found] == [1, 3, 3]
    assert {r.truth for r in found} == {"machine"}
    assert found[0].raw == "Butter." and found[0].agent == "mock/test"
    # Every call asked the papers' question about its cue.
    path = tmp_path / "responses.jsonl"
    write_responses(path, found)
    assert read_responses(path) == found


@pytest.mark.trio
async def test_the_prompted_version_lists_the_examples_first() -> None:
    async with get_model("mock/test", replies=["tea"]) as model:
        await machine_associations(model, ["coffee"], examples=[("salt", "pepper")])
        (prompt,) = model.api.prompts  # type: ignore[attr-defined]
    assert prompt.task.index("salt -> pepper") < prompt.task.index(
        "Name a word that you associate with coffee?"
    )


@pytest.mark.trio
async def test_seeds_differ_per_cue_and_attempt_and_repeat_across_runs() -> None:
    async with get_model("mock/short") as model:
        first = await machine_associations(model, list(CUES[:20]), seed=1)
        again = await machine_associations(model, list(CUES[:20]), seed=1)
    assert [r.response for r in first] == [r.response for r in again]
    assert len({r.response for r in first}) > 3


def test_human_answers_from_csv_are_post_processed(tmp_path: Path) -> None:
    path = tmp_path / "human.csv"
    path.write_text(
        "Cue,Association,Participant\nbread,Butter,p1\n\nriver,the,p2\nhappy,unhappy,p3\n",
        encoding="utf-8",
    )
    found = read_human_associations(path, cues=CUES)
    assert [(r.stimulus, r.response, r.exclusion_reason, r.agent) for r in found] == [
        ("bread", "butter", None, "p1"),
        ("river", "the", "stop word", "p2"),
        ("happy", "unhappy", "too similar to the cue", "p3"),
    ]
    assert {r.truth for r in found} == {"human"}
    assert [r.origin for r in found] == ["human.csv:2", "human.csv:4", "human.csv:5"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cue,answer\nbread,butter\n", r"human.csv:1: no 'association' column"),
        ("cue,association\nbread,\n", r"human.csv:2 field 'association': the cell is empty"),
        (
            "cue,association\nbread,butter\nbreadd,jam\n",
            r"human.csv:3 field 'cue': 'breadd' is not",
        ),
        ("", r"human.csv: the file is empty"),
    ],
)
def test_bad_csv_files_name_file_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "human.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_human_associations(path, cues=CUES)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "human.csv"
    path.write_bytes("cue,association\nbread,caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"human\.csv: the file is not UTF-8"):
        read_human_associations(path)


def test_a_cue_file_of_ones_own(tmp_path: Path) -> None:
    path = tmp_path / "cues.txt"
    path.write_text("# mine\nApple\n\npear  # fruit\n", encoding="utf-8")
    assert read_cues(path) == ("apple", "pear")
    path.write_text("apple\nice cream\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cues.txt:2: a cue is one word"):
        read_cues(path)
    path.write_text("apple\napple\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cues.txt:2: 'apple' is listed again"):
        read_cues(path)


def test_catch_items_repeat_the_cue_and_never_train_the_svm() -> None:
    items = response_catch_items("wordassoc", CUES, 5, seed=1)
    assert len({i.stimulus for i in items}) == 5
    assert all(i.response == i.stimulus and i.catch and i.truth == "machine" for i in items)
    assert response_catch_items("wordassoc", CUES, 5, seed=1) == items
    with pytest.raises(InputError, match="cannot make 151 catch items"):
        response_catch_items("wordassoc", CUES, 151)
    pairs: tuple[tuple[Truth, str], ...] = (("human", "apple"), ("machine", "serenity"))
    real = [
        SingleResponse(
            task="wordassoc", id=f"{t}{i}", stimulus=cue, response=word, truth=t, origin="test"
        )
        for i, cue in enumerate(CUES[:10])
        for t, word in pairs
    ]
    result = svm_judge([*real, *response_catch_items("wordassoc", CUES[:10], 3)], folds=2)
    assert len(result.verdicts) == len(real)
