"""Algorithm 1: exactly m turns per topic, append-only prompts, rebuildable calls."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from sdtt.dialogue.message import segment_turns
from sdtt.errors import InputError
from sdtt.generate.chain import (
    ChainSettings,
    ChainSpec,
    SettingsError,
    chain_header,
    topic_targets,
)
from sdtt.generate.chainfile import read_chain, rebuild_prompt
from sdtt.generate.pseudo import (
    COPY_TOLERANCE,
    ChainState,
    ChainStuckError,
    drop_repeats,
)
from sdtt.generate.runner import ChainRunner, chain_path
from sdtt.models.base import GenerateConfig, Prompt, Usage
from sdtt.personas.persona import Persona
from tests.generate.helpers import (
    TOPICS,
    FakeChatModel,
    FakeCompletionModel,
    chat_lines,
    hashed_script,
    make_persona,
)


def spec(
    model: str = "mock/fake",
    *,
    turns: int = 9,
    per_topic: int = 3,
    mode: str = "burst",
    style: str = "whole",
    seed: int = 1,
    **settings: object,
) -> ChainSpec:
    return ChainSpec(
        persona="tester",
        model=model,
        mode=mode,  # type: ignore[arg-type]
        seed=seed,
        topics=topic_targets(TOPICS, turns, per_topic),
        settings=ChainSettings(style=style, **settings),  # type: ignore[arg-type]
    )


async def run_one(chain: ChainSpec, model: object, tmp_path: Path, persona: Persona | None = None):
    runner = ChainRunner(chain, persona or make_persona(), model, chain_path(tmp_path, chain))  # type: ignore[arg-type]
    async with runner:
        await runner.run()
    return read_chain(runner.path)


def per_topic_turns(chain_file) -> dict[int, int]:
    counts: dict[int, int] = {}
    for turn in chain_file.turns:
        counts[turn.topic_index] = counts.get(turn.topic_index, 0) + 1
    return counts


@pytest.mark.trio
async def test_short_outputs_are_continued_until_each_topic_has_exactly_m_turns(tmp_path):
    # One round per call: every topic needs three calls, and the later ones continue it.
    model = FakeChatModel(lambda prompt, config: chat_lines(1, f"c{len(model.prompts)}"))
    chain = await run_one(spec(turns=9, per_topic=3), model, tmp_path)
    assert per_topic_turns(chain) == {0: 3, 1: 3, 2: 3}
    assert len(model.prompts) == 9
    assert "Write a new chat of 3 rounds" in model.prompts[0].task
    assert "Continue it from its last line with 2 more rounds" in model.prompts[1].task
    assert "with 1 more round." in model.prompts[2].task
    # The continuation shows the topic's chat so far.
    assert "c1 question 0" in model.prompts[1].dialogue
    assert [turn.turn for turn in chain.turns] == list(range(9))


@pytest.mark.trio
async def test_long_output_is_cut_to_m_turns_and_the_excess_is_never_shown(tmp_path):
    model = FakeChatModel(lambda prompt, config: chat_lines(7, f"c{len(model.prompts)}"))
    chain = await run_one(spec(turns=6, per_topic=3), model, tmp_path)
    assert per_topic_turns(chain) == {0: 3, 1: 3}
    assert len(model.prompts) == 2
    second = model.prompts[1].dialogue
    assert "c1 question 2" in second
    assert "c1 question 3" not in second
    assert chain.calls[0].parsed == 14 and len(chain.calls[0].messages) == 6


@pytest.mark.trio
async def test_a_last_turn_without_an_answer_is_completed_by_another_call(tmp_path):
    replies = iter(
        [
            chat_lines(2, "a") + "\nUser: [2000-01-01 00:00:00] hanging question",
            "Response: [2000-01-01 00:00:00] late answer\nUser: [2000-01-01 00:00:00] extra",
        ]
    )
    model = FakeChatModel(lambda prompt, config: next(replies))
    chain = await run_one(spec(turns=3, per_topic=3), model, tmp_path)
    last = chain.turns[-1]
    assert [m.text for m in last.messages] == ["hanging question", "late answer"]
    assert len(chain.turns) == 3


@pytest.mark.trio
async def test_pingpong_keeps_one_message_per_side_and_turn(tmp_path):
    model = FakeChatModel(hashed_script(1, 3, burst=3))
    chain = await run_one(spec(turns=6, per_topic=3, mode="pingpong"), model, tmp_path)
    assert len(chain.turns) == 6
    for turn in chain.turns:
        assert [m.side for m in turn.messages] == ["user", "response"]
    assert "exactly one message" in model.prompts[0].instructions


@pytest.mark.trio
async def test_burst_turns_keep_every_message_of_a_burst(tmp_path):
    model = FakeChatModel(hashed_script(3, 3, burst=3))
    chain = await run_one(spec(turns=3, per_topic=3), model, tmp_path)
    assert [len(turn.messages) for turn in chain.turns] == [4, 4, 4]
    assert "several messages in a row" in model.prompts[0].instructions


def test_lines_a_chat_model_copies_before_continuing_are_dropped():
    existing = make_persona().conversations[0].messages[:4]
    fresh = [m.model_copy(update={"text": f"new {i}"}) for i, m in enumerate(existing[:2])]
    # Started over from the first line, then wrote new lines.
    assert drop_repeats(existing, [*existing[:2], *fresh]) == fresh
    # Repeated the last line first.
    assert drop_repeats(existing, [existing[-1], *fresh]) == fresh
    # Nothing copied: nothing dropped.
    assert drop_repeats(existing, fresh) == fresh


@pytest.mark.trio
async def test_lines_style_writes_one_message_per_call_and_exactly_m_turns(tmp_path):
    model = FakeCompletionModel(empty_every=5)
    chain = await run_one(spec("local/fake", turns=4, per_topic=2, style="lines"), model, tmp_path)
    assert per_topic_turns(chain) == {0: 2, 1: 2}
    assert all(len(call.messages) <= 1 for call in chain.calls)
    # Empty answers are asked again; the runaway second line is never kept.
    assert any(call.problem for call in chain.calls)
    assert all("runaway" not in m.text for m in chain.messages)
    assert all(config.stop == ("\n",) for config in model.configs)
    # A topic's first line gets its start time; later lines only the side label.
    prefixes = [prompt.continue_with for prompt in model.prompts]
    assert prefixes[0].startswith("User: [20")
    assert all(p.startswith("User: [20") or p in ("User: [", "Response: [") for p in prefixes)
    assert {"User: [", "Response: ["} <= set(prefixes)
    for turn in chain.turns:
        assert turn.messages[0].side == "user" and turn.messages[-1].side == "response"


@pytest.mark.trio
async def test_a_completion_model_copying_the_line_above_is_asked_again_then_let_be(tmp_path):
    class Copier(FakeCompletionModel):
        """Writes a fresh line at a topic's start, then copies the last line forever."""

        async def generate(self, prompt, config):
            output = await super().generate(prompt, config)
            last = prompt.dialogue.splitlines()[-1]
            if "] " in last and not prompt.continue_with.endswith("]"):
                copied = "2000-01-01 00:00:00] " + last.split("] ", 1)[1]
                output = replace(output, text=copied)
            return output

    model = Copier()
    chain = await run_one(spec("local/fake", turns=2, per_topic=2, style="lines"), model, tmp_path)
    assert per_topic_turns(chain) == {0: 2}
    refused = [call for call in chain.calls if call.problem == "the line copies a recent message"]
    kept = [call for call in chain.calls if call.messages]
    assert len(refused) == COPY_TOLERANCE * (len(kept) - 1)


@pytest.mark.trio
async def test_a_model_that_never_gives_usable_turns_is_declared_stuck(tmp_path):
    model = FakeChatModel(lambda prompt, config: "Sure! Here is a chat about that.")
    with pytest.raises(ChainStuckError, match="still lacks turns after 6 calls"):
        await run_one(spec(turns=3, per_topic=3), model, tmp_path)
    assert len(model.prompts) == 6


@pytest.mark.trio
async def test_every_prompt_is_an_append_only_extension_of_the_previous(tmp_path):
    model = FakeChatModel(hashed_script(1, 4))
    await run_one(spec(turns=12, per_topic=4), model, tmp_path)
    prefixes = [p.system_text() + "\n\n" + p.dialogue for p in model.prompts]
    for before, after in itertools.pairwise(prefixes):
        assert after.startswith(before)
    assert len({p.system_text() for p in model.prompts}) == 1


@pytest.mark.trio
@pytest.mark.parametrize(
    ("style", "mode"), [("whole", "burst"), ("whole", "pingpong"), ("lines", "burst")]
)
async def test_the_stable_dialogue_part_is_kept_verbatim_by_every_later_prompt(
    tmp_path, style, mode
):
    model = FakeChatModel(hashed_script(1, 4)) if style == "whole" else FakeCompletionModel()
    await run_one(spec(model.name, turns=9, per_topic=3, style=style, mode=mode), model, tmp_path)
    prompts = model.prompts
    stable = [p.dialogue[: p.stable_dialogue_chars] for p in prompts]
    for index, prompt in enumerate(prompts):
        assert 0 <= prompt.stable_dialogue_chars <= len(prompt.dialogue)
        for later in prompts[index + 1 :]:
            assert later.dialogue.startswith(stable[index])
    # The promise is exactly the chats of the finished topics (none during the first
    # topic): the prompt's own topic starts right after it.
    for prompt, promised in zip(prompts, stable, strict=True):
        finished = prompt.dialogue.count("(New chat.") - 1
        assert promised.count("(New chat.") == finished
        tail = prompt.dialogue[len(promised) :]
        assert tail.startswith("\n\n(New chat." if finished else "(New chat.")
    assert {p.stable_dialogue_chars == 0 for p in prompts} == {True, False}


@pytest.mark.trio
async def test_the_exact_prompt_of_every_call_can_be_rebuilt_from_the_file(tmp_path):
    for style, model in (
        ("whole", FakeChatModel(hashed_script(1, 4))),
        ("lines", FakeCompletionModel(empty_every=4)),
    ):
        chain_spec = spec(model.name, turns=6, per_topic=3, style=style)
        chain = await run_one(chain_spec, model, tmp_path)
        assert len(chain.calls) == len(model.prompts)
        for index, sent in enumerate(model.prompts):
            rebuilt = rebuild_prompt(chain.path, index)
            assert isinstance(rebuilt, Prompt)
            assert rebuilt == sent
            assert rebuilt.completion_text() == sent.completion_text()


@pytest.mark.trio
async def test_each_turn_records_topic_indices_model_settings_and_a_usage_share(tmp_path):
    model = FakeChatModel(hashed_script(1, 4))
    chain = await run_one(spec(turns=8, per_topic=4), model, tmp_path)
    calls = sum((Usage(**call.usage) for call in chain.calls), Usage())
    turns = sum((Usage(**turn.usage) for turn in chain.turns), Usage())
    assert calls == turns and calls.input_tokens > 0
    first = chain.turns[0]
    assert (first.topic, first.topic_index, first.turn_index) == (TOPICS[0], 0, 0)
    assert first.model == "mock/fake" and first.settings.style == "whole"
    assert all(turn.calls for turn in chain.turns)


@pytest.mark.trio
async def test_times_only_go_forward_and_each_topic_starts_hours_later(tmp_path):
    model = FakeChatModel(hashed_script(2, 4))
    persona = make_persona()
    chain = await run_one(spec(turns=9, per_topic=3), model, tmp_path, persona)
    times = [m.time for m in chain.messages]
    assert times == sorted(times)
    assert times[0] > persona.messages[-1].time
    starts = [turns[0].messages[0].time for turns in _by_topic(chain.turns)]
    ends = [turns[-1].messages[-1].time for turns in _by_topic(chain.turns)]
    for end, start in zip(ends, starts[1:], strict=False):
        assert (start - end).total_seconds() >= 3 * 3600


def _by_topic(turns):
    grouped: dict[int, list] = {}
    for turn in turns:
        grouped.setdefault(turn.topic_index, []).append(turn)
    return list(grouped.values())


def test_turns_are_split_over_topics_and_too_few_topics_is_a_clear_error():
    targets = topic_targets(["a", "b", "c"], 25, 10)
    assert [(t.topic, t.turns) for t in targets] == [("a", 10), ("b", 10), ("c", 5)]
    with pytest.raises(SettingsError, match="need 4 topics, but only 3"):
        topic_targets(["a", "b", "c"], 31, 10)


def test_a_file_whose_records_were_reordered_is_rejected():
    chain_spec = spec(turns=3, per_topic=3)
    state = ChainState(chain_header(chain_spec, make_persona()))
    step = state.next_step()
    from sdtt.models.base import ModelOutput

    record = state.call_record(step, ModelOutput(text=chat_lines(1, "x"), model="mock/fake"))
    state.apply(record)
    with pytest.raises(InputError, match="out of order"):
        state.apply(record)


def test_generated_turns_match_burst_segmentation_of_their_messages():
    chain_spec = spec(turns=3, per_topic=3)
    state = ChainState(chain_header(chain_spec, make_persona()))
    from sdtt.models.base import ModelOutput

    step = state.next_step()
    record = state.call_record(step, ModelOutput(text=chat_lines(3, "x", burst=2), model="m"))
    state.apply(record)
    pending = state.pending_turns()
    assert len(pending) == 3
    for turn in pending:
        assert len(segment_turns(turn.messages)) == 1


@pytest.mark.trio
async def test_turn_records_are_the_burst_turns_of_each_topic_and_name_their_calls(tmp_path):
    """Replies that end mid-turn, span turns or hold nothing: a topic's turns are found as
    its messages arrive, and must be the turns its whole chat splits into at the end."""
    script = hashed_script(1, 3, burst=2)

    def patchy(prompt: Prompt, config: GenerateConfig) -> str:
        text = script(prompt, config)
        cut = (config.seed or 0) % 4
        return "" if cut == 3 else "\n".join(text.split("\n")[cut:])

    chain_spec = spec(turns=12, per_topic=4, max_calls_per_topic=20)
    chain = await run_one(chain_spec, FakeChatModel(patchy), tmp_path)
    calls_of = {call.call: call for call in chain.calls}
    # What makes the bookkeeping hard happened: calls that kept nothing, turns that more
    # than one call wrote.
    assert any(not call.messages for call in chain.calls)
    assert any(len(turn.calls) > 1 for turn in chain.turns)
    for index in range(3):
        calls = [call for call in chain.calls if call.topic_index == index]
        turns = [turn for turn in chain.turns if turn.topic_index == index]
        chat = [message for call in calls for message in call.messages]
        assert [turn.messages for turn in turns] == [
            list(turn.messages) for turn in segment_turns(chat)
        ]
        for turn in turns:
            for message in turn.messages:
                assert any(message in calls_of[call].messages for call in turn.calls)
        assert {call for turn in turns for call in turn.calls} == {call.call for call in calls}
