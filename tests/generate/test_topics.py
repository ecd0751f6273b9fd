"""Topics: distinct everyday topics from a model, topic files."""

from __future__ import annotations

import pytest

from sdtt.errors import InputError, ModelOutputError
from sdtt.generate.topics import (
    generate_topics,
    locate_topics,
    parse_topics,
    read_topics,
    similar_topics,
    write_topics,
)
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt


class ListModel:
    """Answers each call with the next scripted text; records the prompts."""

    def __init__(self, *answers: str, completion: bool = False) -> None:
        self.answers = list(answers)
        self.prompts: list[Prompt] = []
        self.completion = completion

    @property
    def name(self) -> str:
        return "mock/topics"

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        self.prompts.append(prompt)
        continued = prompt.continue_with if self.completion else ""
        return ModelOutput(text=self.answers.pop(0), model=self.name, continued_from=continued)


def test_topic_lines_are_cleaned_of_numbering_markup_and_chatter():
    text = (
        "Here are some topics:\n"
        "1. **Travel plans**: where to go next\n"
        "2) Pet anecdotes\n"
        "- <b>Cooking at home</b>\n"
        "\n"
        "* 3D printing\n"
        "I hope these help!\n"
    )
    assert parse_topics(text) == [
        "Travel plans: where to go next",
        "Pet anecdotes",
        "Cooking at home",
        "3D printing",
    ]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Travel experiences", "Travel stories: trips you took"),
        ("Weekend plans", "Plans for the weekend"),
        ("Favourite movies", "Movies"),
        ("Pet anecdotes", "Pet anecdote"),
        ("a new restaurant you have been to", "your favorite restaurant"),
        ("3 books you love", "a book you liked last time"),
    ],
)
def test_near_duplicate_topics_are_recognised(a, b):
    assert similar_topics(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Weekend plans", "Future plans"),
        ("Music and arts", "Martial arts"),
        ("Cooking at home", "Working from home"),
    ],
)
def test_different_topics_are_kept_apart(a, b):
    assert not similar_topics(a, b)


@pytest.mark.trio
async def test_duplicates_are_dropped_and_the_model_is_asked_again_until_there_are_n():
    model = ListModel(
        "Travel plans\nWeekend plans\nTravel stories\nFavourite movies\nweekend plans!",
        "Movies\nCooking\nPets at home\nWork stress",
    )
    topics = await generate_topics(model, 5)
    assert topics == [
        "Travel plans",
        "Weekend plans",
        "Favourite movies",
        "Cooking",
        "Pets at home",
    ]
    assert "List 5 such topics" in model.prompts[0].task
    # The second round asks only for what is missing and names what is taken.
    assert "List 2 such topics" in model.prompts[1].task
    assert "- Favourite movies" in model.prompts[1].task


@pytest.mark.trio
async def test_a_completion_model_continues_the_list():
    model = ListModel("Travel plans\n- Cooking\n- Pets\n", completion=True)
    assert await generate_topics(model, 3) == ["Travel plans", "Cooking", "Pets"]
    assert model.prompts[0].continue_with.endswith("- ")


@pytest.mark.trio
async def test_a_model_that_keeps_repeating_itself_gives_a_clear_error():
    model = ListModel(*["Travel\nTravel plans"] * 3)
    with pytest.raises(ModelOutputError, match="only 1 distinct topics of 4 in 3 rounds"):
        await generate_topics(model, 4, rounds=3)


def test_topic_files_round_trip_and_skip_comments(tmp_path):
    path = write_topics(tmp_path / "t.txt", ["Travel", "Pets\nat home"], source="test")
    assert path.read_text().startswith("# test, ")
    assert read_topics(path) == ["Travel", "Pets / at home"]


def test_the_shipped_chitchat_list_is_readable_by_name(monkeypatch):
    import pathlib

    monkeypatch.chdir(pathlib.Path(__file__).resolve().parents[2])
    topics = read_topics(locate_topics("chitchat"))
    assert len(topics) > 20 and "Mozart or Beethoven?" in topics


def test_missing_or_empty_topic_files_are_explained(tmp_path):
    with pytest.raises(InputError, match=r"no topic file '.*nope'"):
        locate_topics(tmp_path / "nope")
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="holds no topics"):
        read_topics(empty)
