from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.analysis.metrics import summarise
from sdtt.analysis.table import judgement_table
from sdtt.errors import ServerError
from sdtt.judges.llm import run_llm_judge, swapped
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt
from sdtt.models.model import Model, get_model
from sdtt.models.retry import RetryPolicy
from sdtt.tasks.judgements import read_judgements, write_judgements
from sdtt.tasks.layout import pair_text
from sdtt.tasks.study import DesignSpec, StudySpec
from tests.questionnaires.helpers import SECRET_WORDS, fixture_study


def _bot_chat(prompt: Prompt) -> int:
    """Which chat of the prompt holds the bot (fixture bot lines start with 'b0'/'b1')."""
    first = prompt.dialogue.split("Chat 2")[0]
    return 1 if " b0 " in first or " b1 " in first else 2


@pytest.mark.trio
async def test_a_judge_that_always_names_chat_1_shows_full_position_bias() -> None:
    study = fixture_study()
    model = get_model("mock/first", replies=lambda prompt, config: "A")
    judgements = await run_llm_judge(model, study.questionnaire, study.key)
    assert len(judgements) == 2 * len(study.questionnaire.items)
    summary = summarise(judgement_table(judgements), reps=100)
    assert summary.position_bias == 1.0
    assert summary.order_consistency == 0.0
    assert summary.pass_rate == pytest.approx(0.5)
    assert summary.judgements == 4 and summary.pairs == 2


@pytest.mark.trio
async def test_a_perfect_judge_passes_no_bot_and_is_order_consistent() -> None:
    study = fixture_study()
    model = get_model(
        "mock/oracle", replies=lambda prompt, config: "A" if _bot_chat(prompt) == 1 else "B"
    )
    judgements = await run_llm_judge(model, study.questionnaire, study.key)
    summary = summarise(judgement_table(judgements), reps=100)
    assert summary.pass_rate == 0.0
    assert summary.order_consistency == 1.0
    assert summary.position_bias == pytest.approx(0.5)
    assert {j.judge_model for j in judgements} == {"mock/oracle"}


@pytest.mark.trio
async def test_the_judge_sees_what_humans_see_and_no_secrets() -> None:
    study = fixture_study()
    prompts: list[Prompt] = []

    def record(prompt: Prompt, config: GenerateConfig) -> str:
        prompts.append(prompt)
        return "B"

    await run_llm_judge(get_model("mock/x", replies=record), study.questionnaire, study.key)
    shown = {p.dialogue for p in prompts}
    for item in study.questionnaire.items:
        assert pair_text(item) in shown
        assert pair_text(swapped(item)) in shown
    for prompt in prompts:
        text = prompt.completion_text() + prompt.task
        for secret in SECRET_WORDS:
            assert secret not in text


@pytest.mark.trio
async def test_non_compliant_answers_are_retried_then_recorded_never_guessed(
    tmp_path: Path,
) -> None:
    study = fixture_study()
    calls: list[str] = []

    def waffle(prompt: Prompt, config: GenerateConfig) -> str:
        calls.append(prompt.task)
        return "Could be A or B, hard to say."

    model = get_model("mock/waffle", replies=waffle)
    judgements = await run_llm_judge(model, study.questionnaire, study.key, attempts=3)
    assert len(calls) == 3 * len(judgements)
    assert sum("could not be read" in task for task in calls) == 2 * len(judgements)
    for judgement in judgements:
        assert judgement.choice is None and judgement.correct is None
        assert judgement.excluded
        assert (judgement.exclusion_reason or "").startswith("non_compliant")
    path = tmp_path / "j.jsonl"
    write_judgements(path, judgements)
    summary = summarise(judgement_table(read_judgements(path)), reps=10)
    assert summary.judgements == 0 and summary.exclusions == {"non_compliant": 4}


@pytest.mark.trio
async def test_a_second_attempt_that_complies_counts() -> None:
    study = fixture_study()
    replies = iter(["hmm", "A"] * 20)
    model = get_model("mock/slow", replies=lambda p, c: next(replies))
    judgements = await run_llm_judge(model, study.questionnaire, study.key, concurrency=1)
    assert all(j.choice == "A" and not j.excluded for j in judgements)


@pytest.mark.trio
async def test_provider_failure_is_recorded_as_model_error() -> None:
    study = fixture_study()
    model = get_model(
        "mock/down",
        replies=lambda p, c: ServerError("boom"),
        retry=RetryPolicy(max_attempts=1),
    )
    judgements = await run_llm_judge(model, study.questionnaire, study.key)
    # The provider's message is kept, not only the error's class name.
    assert {j.exclusion_reason for j in judgements} == {"model_error: ServerError: boom"}


@pytest.mark.trio
async def test_zero_shot_judge_labels_each_chat_and_feeds_conditional_rates() -> None:
    study = fixture_study()

    def labeller(prompt: Prompt, config: GenerateConfig) -> str:
        # Calls every chat human: a lenient judge, p(H|M) = 1.
        return "human"

    model = get_model("mock/lenient", replies=labeller)
    judgements = await run_llm_judge(model, study.questionnaire, study.key, kind="zero-shot")
    assert all((j.exclusion_reason or "").startswith("tie") for j in judgements)
    summary = summarise(judgement_table(judgements), reps=10)
    assert summary.confusion.rate("H", "M") == 1.0
    assert summary.confusion.rate("H", "H") == 1.0
    assert summary.confusion.detectability == 0.5


@pytest.mark.trio
async def test_one_shot_judge_shows_a_labelled_example_and_skips_its_pair() -> None:
    study = fixture_study()
    prompts: list[Prompt] = []

    def oracle(prompt: Prompt, config: GenerateConfig) -> str:
        prompts.append(prompt)
        return "AI" if " b0 " in prompt.dialogue or " b1 " in prompt.dialogue else "human"

    model = get_model("mock/one", replies=oracle)
    judgements = await run_llm_judge(model, study.questionnaire, study.key, kind="one-shot")
    assert len(judgements) == len(study.questionnaire.items) - 1
    assert all("Answer: AI" in p.instructions for p in prompts)
    assert all(j.correct for j in judgements)


class CompletionOracle:
    """A completion model: continues the prompt's cue, then rambles on past the answer."""

    name = "fake/completion"

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        text = prompt.completion_text()
        self.texts.append(text)
        letter = "A" if _bot_chat(prompt) == 1 else "B"
        return ModelOutput(
            text=f" {letter}\n\nChat 3\n  1 User A: A or B?\nAnswer: A",
            model=self.name,
            continued_from=prompt.continue_with,
        )

    async def aclose(self) -> None:
        return None


@pytest.mark.trio
async def test_a_completion_model_sees_the_question_and_its_first_line_is_the_answer() -> None:
    study = fixture_study()
    api = CompletionOracle()
    judgements = await run_llm_judge(Model(api), study.questionnaire, study.key)
    assert all(not j.excluded for j in judgements)
    summary = summarise(judgement_table(judgements), reps=100)
    assert summary.order_consistency == 1.0
    assert summary.pass_rate == pytest.approx(0.0)
    assert all("In which chat is User B the AI?" in text for text in api.texts)
    assert all(text.endswith("Answer:") for text in api.texts)


@pytest.mark.trio
async def test_random_orders_ask_each_pair_once_reproducibly() -> None:
    study = fixture_study()

    async def judge(seed: int) -> list[tuple[str, str]]:
        model = get_model("mock/first", replies=lambda prompt, config: "A")
        judgements = await run_llm_judge(
            model, study.questionnaire, study.key, orders="random", seed=seed
        )
        return [(j.pair_id, j.shown.order) for j in judgements]

    first = await judge(3)
    assert [pair for pair, _ in first] == [item.id for item in study.questionnaire.items]
    assert first == await judge(3)
    seen = {order for seed in range(8) for _, order in await judge(seed)}
    assert seen == {"original", "swapped"}


@pytest.mark.trio
async def test_under_a_judge_design_each_pair_is_judged_once_not_per_view() -> None:
    study = fixture_study(
        StudySpec(name="d", seed=3, x_turns=[3], design=DesignSpec(pairs_per_judge=1))
    )
    views = len(study.questionnaire.items)  # 2 pairs x 2 views + 1 catch pair
    assert views == 5
    model = get_model("mock/first", replies=lambda prompt, config: "A")
    judgements = await run_llm_judge(model, study.questionnaire, study.key, orders="original")
    assert len(judgements) == 3
    assert {j.pair_id for j in judgements} == {
        truth.pair or truth.pair_id for truth in study.key.items.values()
    }
