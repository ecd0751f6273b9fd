"""The papers' zero-shot LLM judge: their prompt per stimulus, responses shuffled, labels
read from the "Summary of Classifications", unreadable replies giving no verdict."""

from __future__ import annotations

import re

import pytest

from sdtt.analysis.metrics import Confusion
from sdtt.errors import ConfigError, InputError
from sdtt.models import GenerateConfig, Prompt, get_model
from sdtt.models.base import Image
from sdtt.single.response import SingleResponse, response_id
from sdtt.single.tally import add_verdict
from sdtt.single.zeroshot import read_labels, zero_shot_judge


def response(task: str, stimulus: str, text: str, truth: str) -> SingleResponse:
    return SingleResponse(
        task=task,  # type: ignore[arg-type]
        id=response_id(task, stimulus, text, truth),
        stimulus=stimulus,
        response=text,
        truth=truth,  # type: ignore[arg-type]
        origin="test",
    )


def test_labels_are_read_from_the_summary_only() -> None:
    reply = (
        "1. Human - short and casual.\n2. AI-generated - too neat.\n\n"
        "Summary of Classifications:\n- AI-generated\n- Human\n"
    )
    assert read_labels(reply, 2) == ["machine", "human"]
    assert read_labels(reply, 3) is None
    assert read_labels("1. Human\n2. Human", 2) is None


@pytest.mark.trio
async def test_a_judge_answers_per_cue_and_is_scored() -> None:
    records = [
        response("wordassoc", "bread", "butter", "human"),
        response("wordassoc", "bread", "nourishment", "machine"),
        response("wordassoc", "river", "water", "human"),
        response("wordassoc", "river", "tranquility", "machine"),
    ]

    def judge(prompt: Prompt, config: GenerateConfig) -> str:
        # A judge that calls long words AI-generated, in the order it was asked.
        words = re.findall(r"\d+\. (\w+)", prompt.task.split("Associated Words:")[1])
        labels = ["AI-generated" if len(w) > 6 else "Human" for w in words]
        return "Summary of Classifications\n" + "\n".join(f"- {label}" for label in labels)

    async with get_model("mock/judge", replies=judge) as model:
        verdicts = await zero_shot_judge(model, records, seed=3)
        prompts = model.api.prompts  # type: ignore[attr-defined]
    assert len(prompts) == 2
    assert all("Target Word:" in p.task and "2 associated words" in p.task for p in prompts)
    assert [v.said for v in verdicts] == ["human", "machine", "human", "machine"]
    tally = Confusion()
    for verdict in verdicts:
        assert verdict.said is not None
        add_verdict(tally, verdict.said, verdict.truth)
    assert tally.detectability == 1.0


@pytest.mark.trio
async def test_an_unreadable_reply_gives_no_verdicts() -> None:
    records = [
        response("wordassoc", "bread", w, t) for w, t in (("jam", "human"), ("toast", "machine"))
    ]
    async with get_model("mock/judge", replies=["I cannot tell."]) as model:
        verdicts = await zero_shot_judge(model, records)
    assert [v.said for v in verdicts] == [None, None]


@pytest.mark.trio
async def test_responses_are_split_into_prompts_of_at_most_per_prompt() -> None:
    records = [response("wordassoc", "bread", f"word{i}", "human") for i in range(25)]
    async with get_model("mock/judge", replies=lambda p, c: "no summary") as model:
        await zero_shot_judge(model, records)
        asked = [p.task for p in model.api.prompts]  # type: ignore[attr-defined]
    sizes = sorted(len(re.findall(r"\d+\. word\d+", task)) for task in asked)
    words = [
        w for task in asked for w in re.findall(r"word\d+", task.split("Associated Words:")[1])
    ]
    assert sizes == [5, 10, 10]
    # Every response asked once, in a shuffled order.
    assert sorted(words) == sorted(f"word{i}" for i in range(25))
    assert words != [f"word{i}" for i in range(25)]


@pytest.mark.trio
async def test_captions_need_their_image_and_an_image_model() -> None:
    records = [response("caption", "0001.png", "A dog.", "human")]
    image = Image(b"\x89PNG\r\n\x1a\n", "image/png", name="0001.png")
    async with get_model("mock/judge", replies=["Summary of Classifications\n- Human"]) as model:
        (verdict,) = await zero_shot_judge(model, records, images={"0001.png": image})
        (prompt,) = model.api.prompts  # type: ignore[attr-defined]
        assert prompt.images == (image,) and "Captions: 1. A dog." in prompt.task
        with pytest.raises(InputError, match=r"no image '0001\.png'"):
            await zero_shot_judge(model, records, images={})
    assert verdict.said == "human"
    async with get_model("eliza/classic") as model:
        with pytest.raises(ConfigError, match="cannot be shown images"):
            await zero_shot_judge(model, records, images={"0001.png": image})
