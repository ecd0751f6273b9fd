"""LLM judges of single items: the papers' prompts, every speaker judged, unreadable
answers asked again and then excluded."""

from __future__ import annotations

import pytest
import trio

from sdtt.errors import InputError
from sdtt.judges.single_item import judge_task
from sdtt.judges.single_prompts import (
    ONE_SHOT,
    ZERO_SHOT,
    parse_verdicts,
    single_item_prompt,
)
from sdtt.models import get_model
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.single.build import StudySettings, build_study
from sdtt.single.items import cut_items
from sdtt.tasks.single_task import ItemView, Judged, Part, SingleTask
from tests.single.helpers import corpus


def _task() -> SingleTask:
    items, _ = cut_items(corpus(1, 6), (3, 6))
    task, _ = build_study(items, StudySettings(forms=1, per_form=4, seed=3))
    return task


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A: human\nB: AI", {"A": "human", "B": "machine"}),
        ("**A:** Human\n**B:** AI.", {"A": "human", "B": "machine"}),
        ("A is a human; B is an AI.", {"A": "human", "B": "machine"}),
        ("A: AI\nB: machine", {"A": "machine", "B": "machine"}),
        ("A: human", None),  # B not answered
        ("A: human or AI\nB: AI", None),  # both for A
        ("I think both are human.", None),
    ],
)
def test_verdicts_are_read_only_when_each_speaker_gets_exactly_one(
    text: str, expected: dict[str, str] | None
) -> None:
    assert parse_verdicts(text, ["A", "B"]) == expected


def test_zero_and_one_shot_prompts_carry_the_papers_words_and_no_ids() -> None:
    task = _task()
    item, example = task.items[0], task.items[-1]
    zero = single_item_prompt(item)
    assert zero.instructions == ZERO_SHOT
    assert zero.dialogue.startswith("Conversation: A: ")
    assert "A: human or AI\nB: human or AI" in zero.task
    one = single_item_prompt(item, example=(example, {"A": "human", "B": "machine"}))
    assert one.instructions.startswith(ONE_SHOT)
    assert "In this example, A is Human; B is AI. Thus, output" in one.instructions
    assert example.lines[0].text in one.instructions
    for prompt in (zero, one):
        whole = prompt.system_text() + prompt.user_text()
        assert item.id not in whole and "persona-name-xyz" not in whole


def test_items_that_are_not_chats_are_asked_about_their_judged_part() -> None:
    view = ItemView(
        id="sabcdef",
        parts=[Part(label="Cue", text="apple"), Part(label="Association", text="pie")],
        judged=[Judged(key="Association", label="Association")],
    )
    prompt = single_item_prompt(view)
    assert "Cue: apple\nAssociation: pie" in prompt.dialogue
    assert prompt.task.endswith("Association: human or AI")
    pictured = view.model_copy(update={"image": "https://example.org/a.jpg"})
    with pytest.raises(InputError, match="vision-capable"):
        single_item_prompt(pictured)


def test_every_item_is_judged_both_speakers_and_bad_answers_retried_then_excluded() -> None:
    task = _task()
    seen: list[Prompt] = []

    def reply(prompt: Prompt, config: GenerateConfig) -> str:
        seen.append(prompt)
        if "message 1" in prompt.dialogue and "hh0" in prompt.dialogue:
            return "I cannot tell."  # never readable
        return "A: human\nB: AI"

    async def main() -> list:
        async with get_model("mock/scripted", replies=reply) as model:
            return await judge_task(model, task, attempts=2, concurrency=2)

    answers = trio.run(main)
    assert [a.item for a in answers] == [item.id for item in task.items]
    for answer in answers:
        view = task.item(answer.item)
        if "hh0" in view.lines[0].text:
            assert answer.exclusion_reason is not None
            assert answer.exclusion_reason.startswith("non_compliant")
            assert answer.verdicts == {"A": None, "B": None}
        else:
            assert answer.verdicts == {"A": "human", "B": "machine"}
            assert answer.judge_type == "llm" and answer.judge_kind == "zero-shot"
    unreadable = sum(1 for a in answers if a.exclusion_reason)
    assert len(seen) == len(task.items) + unreadable  # one retry each
    assert any("could not be read" in p.task for p in seen)


def test_one_shot_needs_its_example_and_does_not_ask_about_it() -> None:
    task = _task()
    example = task.items[0]

    async def main(with_example: bool) -> list:
        async with get_model("mock/chatty") as model:
            return await judge_task(
                model,
                task,
                kind="one-shot",
                example=(example, {"A": "human", "B": "machine"}) if with_example else None,
            )

    with pytest.raises(InputError, match="example"):
        trio.run(main, False)
    answers = trio.run(main, True)
    assert example.id not in {a.item for a in answers}
    assert all(a.exclusion_reason is None for a in answers)  # mock/chatty answers each line
