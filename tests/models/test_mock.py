"""The ``mock`` provider: scripted replies and the built-in scripts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
import trio
import trio.testing

from sdtt.dialogue.parse import parse_reply
from sdtt.errors import ConfigError, RateLimitError, ServerError
from sdtt.models import GenerateConfig, Prompt, RetryPolicy, Usage, get_model
from sdtt.models.mock import CHATTY_REPLIES, MockExhaustedError, MockItem, MockModelAPI, MockReply

CONFIG = GenerateConfig()
PROMPT = Prompt(
    instructions="You are Sam, a student.",
    history="Response: [2024-04-30 09:00:00] old message",
    dialogue=("User: [2024-05-01 10:00:00] hey!\nUser: [2024-05-01 10:00:04] what are you up to"),
    task="Write Sam's next messages.",
)


async def texts(api: MockModelAPI, calls: int) -> list[str]:
    return [(await api.generate(PROMPT, CONFIG)).text for _ in range(calls)]


@pytest.mark.trio
async def test_a_list_is_used_in_order_then_fails_clearly() -> None:
    api = MockModelAPI(["one", "two"], name="mock/test")
    assert await texts(api, 2) == ["one", "two"]
    with pytest.raises(
        MockExhaustedError, match=r"mock/test: call 3, but all 2 scripted replies are used up"
    ):
        await api.generate(PROMPT, CONFIG)


@pytest.mark.trio
async def test_a_list_can_cycle() -> None:
    api = MockModelAPI(["one", "two"], cycle=True)
    assert await texts(api, 5) == ["one", "two", "one", "two", "one"]


@pytest.mark.trio
async def test_a_generator_supplies_one_reply_per_call() -> None:
    def counting() -> Iterator[MockItem]:
        for number in range(2):
            yield f"reply {number}"

    api = MockModelAPI(counting())
    assert await texts(api, 2) == ["reply 0", "reply 1"]
    with pytest.raises(MockExhaustedError):
        await api.generate(PROMPT, CONFIG)


@pytest.mark.trio
async def test_a_callable_sees_the_prompt_and_config() -> None:
    api = MockModelAPI(lambda prompt, config: f"{len(prompt.dialogue)}/{config.max_tokens}")
    output = await api.generate(PROMPT, GenerateConfig(max_tokens=9))
    assert output.text == f"{len(PROMPT.dialogue)}/9"
    assert api.prompts == [PROMPT]


@pytest.mark.trio
async def test_exceptions_are_raised_on_cue() -> None:
    api = MockModelAPI(["fine", RateLimitError("slow down", retry_after=2.0), "fine again"])
    assert (await api.generate(PROMPT, CONFIG)).text == "fine"
    with pytest.raises(RateLimitError) as caught:
        await api.generate(PROMPT, CONFIG)
    assert caught.value.retry_after == 2.0
    assert (await api.generate(PROMPT, CONFIG)).text == "fine again"


@pytest.mark.trio
async def test_replies_can_be_slow_or_fail_late(autojump_clock: trio.testing.MockClock) -> None:
    api = MockModelAPI([MockReply("slow", delay=3.0), MockReply(delay=2.0, error=ServerError("x"))])
    start = trio.current_time()
    assert (await api.generate(PROMPT, CONFIG)).text == "slow"
    assert trio.current_time() - start == pytest.approx(3.0)
    with pytest.raises(ServerError):
        await api.generate(PROMPT, CONFIG)
    assert trio.current_time() - start == pytest.approx(5.0)


@pytest.mark.trio
async def test_usage_is_estimated_in_words_with_a_cached_prefix() -> None:
    api = MockModelAPI(["two words"], cycle=True)
    first = await api.generate(PROMPT, CONFIG)
    second = await api.generate(PROMPT, CONFIG)
    system_words = len(PROMPT.system_text().split())
    total = system_words + len(PROMPT.user_text().split())
    # A pure function of the prompt: the same prompt reports the same usage every time.
    assert (
        first.usage
        == second.usage
        == Usage(input_tokens=total, cached_input_tokens=system_words, output_tokens=2)
    )
    stable = replace(PROMPT, stable_dialogue_chars=PROMPT.dialogue.index("\n"))
    assert (await api.generate(stable, CONFIG)).usage.cached_input_tokens == system_words + 4
    opening = replace(PROMPT, dialogue="")
    assert (await api.generate(opening, CONFIG)).usage.cached_input_tokens == 0


@pytest.mark.trio
async def test_scripted_usage_is_reported_as_given() -> None:
    usage = Usage(input_tokens=5, cached_input_tokens=1, output_tokens=2)
    output = await MockModelAPI([MockReply("x", usage=usage)]).generate(PROMPT, CONFIG)
    assert output.usage == usage


def test_an_empty_list_is_refused() -> None:
    with pytest.raises(ConfigError, match="at least one"):
        MockModelAPI([])


@pytest.mark.trio
async def test_echo_repeats_the_last_user_line() -> None:
    output = await get_model("mock/echo").generate(PROMPT)
    assert output.text.startswith("Response: [2024-05-01 10:00:")
    assert output.text.endswith("] what are you up to")
    messages = parse_reply(output.text, now=datetime(2024, 5, 1, 10, 0, 5, tzinfo=UTC))
    assert [m.text for m in messages] == ["what are you up to"]


@pytest.mark.trio
async def test_chatty_answers_in_bursts_that_parse_into_several_messages() -> None:
    model = get_model("mock/chatty")
    now = datetime(2024, 5, 1, 10, 0, 5, tzinfo=UTC)
    first = parse_reply((await model.generate(PROMPT)).text, now=now)
    assert tuple(m.text for m in first) in CHATTY_REPLIES
    assert len(first) >= 2
    # Timestamps come from the reply (after the prompt's last one), strictly increasing.
    times = [m.time for m in first]
    assert times == sorted(times)
    assert len(set(times)) == len(times)
    assert times[0] > datetime(2024, 5, 1, 10, 0, 4, tzinfo=UTC)


@pytest.mark.trio
async def test_chatty_without_timestamps_still_writes_response_lines() -> None:
    output = await get_model("mock/chatty").generate(Prompt(instructions="", dialogue="hi"))
    assert all(line.startswith("Response: ") for line in output.text.splitlines())


@pytest.mark.trio
async def test_fail_always_raises_a_server_error(autojump_clock: trio.testing.MockClock) -> None:
    model = get_model("mock/fail", retry=RetryPolicy(max_attempts=3))
    with pytest.raises(ServerError, match="Gave up after 3 attempts"):
        await model.generate(PROMPT)
    assert model.calls == 1


@pytest.mark.trio
async def test_a_builtin_script_can_be_slowed_down(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = get_model("mock/echo", delay=4.0)
    output = await model.generate(PROMPT)
    assert output.latency == pytest.approx(4.0)


def test_an_unknown_script_lists_the_builtin_ones() -> None:
    with pytest.raises(ConfigError, match=r"mock/nope.*mock/echo, mock/chatty, mock/fail"):
        get_model("mock/nope")


@pytest.mark.trio
async def test_any_name_works_with_replies_given_in_code() -> None:
    model = get_model("mock/my-test", replies=["scripted"])
    output = await model.generate(PROMPT)
    assert (output.text, output.model) == ("scripted", "mock/my-test")


def _chat_prompt(line: str) -> Prompt:
    return replace(PROMPT, dialogue=f"User: [2024-05-01 10:00:00] {line}")


@pytest.mark.trio
@pytest.mark.parametrize("name", ["mock/chatty", "mock/echo"])
async def test_a_builtin_reply_depends_only_on_the_call(name: str) -> None:
    # Replies must not depend on what was asked before, in this model or another one.
    prompts = [_chat_prompt(f"message {n}") for n in range(12)]
    fresh = [(await get_model(name).generate(p)).text for p in prompts]
    shared = get_model(name)
    in_reverse = [(await shared.generate(p)).text for p in reversed(prompts)]
    again = [(await shared.generate(p)).text for p in prompts]
    assert fresh == again == in_reverse[::-1]
    outputs = [await get_model(name).generate(p) for p in prompts]
    assert [o.usage for o in outputs] == [(await shared.generate(p)).usage for p in prompts]


@pytest.mark.trio
async def test_chatty_varies_with_the_prompt_and_the_seed() -> None:
    model = get_model("mock/chatty")
    by_prompt = {(await model.generate(_chat_prompt(f"hi {n}"))).text for n in range(12)}
    assert len(by_prompt) >= 3
    by_seed = {(await model.generate(PROMPT, GenerateConfig(seed=seed))).text for seed in range(12)}
    assert len(by_seed) >= 3


def judge_prompt(task: str, seed: int | None = None) -> tuple[Prompt, GenerateConfig]:
    return (
        Prompt(instructions="Decide which chat is the AI.", dialogue="Chat 1 ...", task=task),
        GenerateConfig(max_tokens=16, temperature=0.0, seed=seed),
    )


@pytest.mark.trio
async def test_chatty_as_a_judge_answers_a_valid_option() -> None:
    from sdtt.judges.parsing import parse_label, parse_option
    from sdtt.judges.prompts import PAIRED_TASK, SINGLE_TASK

    model = get_model("mock/chatty")
    paired = [(await model.generate(*judge_prompt(PAIRED_TASK, seed))).text for seed in range(20)]
    assert all(parse_option(text) in ("A", "B") for text in paired)
    assert {parse_option(text) for text in paired} == {"A", "B"}
    single = [(await model.generate(*judge_prompt(SINGLE_TASK, seed))).text for seed in range(20)]
    assert {parse_label(text) for text in single} == {"human", "ai"}
    # Deterministic: the same seed gives the same verdict.
    again = [(await model.generate(*judge_prompt(PAIRED_TASK, seed))).text for seed in range(20)]
    assert again == paired


@pytest.mark.trio
async def test_chatty_lists_fresh_topics() -> None:
    from sdtt.generate.topics import generate_topics

    model = get_model("mock/chatty")
    topics = await generate_topics(model, 8, seed=3)
    assert len(topics) == len(set(topics)) == 8
    assert topics == await generate_topics(get_model("mock/chatty"), 8, seed=3)


@pytest.mark.trio
async def test_echo_stays_a_judge_that_never_answers() -> None:
    from sdtt.judges.parsing import parse_option
    from sdtt.judges.prompts import PAIRED_TASK

    output = await get_model("mock/echo").generate(*judge_prompt(PAIRED_TASK))
    assert parse_option(output.text) is None
