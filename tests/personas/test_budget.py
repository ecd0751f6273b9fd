"""Fitting a bot's prompt into a context (issue 49): the persona keeps a stated minimum of
its own history, the pseudo-dialogue gives way from its oldest turns, and a prompt that
cannot fit is refused before any call."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.dialogue.message import Message, segment_turns
from sdtt.dialogue.render import render_messages
from sdtt.errors import ConfigError
from sdtt.personas.budget import MIN_HISTORY_TURNS, plan_prompt, tokens_of
from sdtt.personas.prompt import PROMPT_RESERVE_TOKENS, history_text
from tests.generate.helpers import START, make_persona

PERSONA = make_persona(conversations=40)  # 160 turns of its own history


def pseudo_dialogue(turns: int) -> list[Message]:
    """A pseudo-dialogue of ``turns`` turns of about 80 characters each."""
    messages = []
    for index in range(turns):
        at = START + timedelta(days=100, minutes=index)
        messages.append(Message(side="user", text=f"what about thing {index}?", time=at))
        messages.append(
            Message(
                side="response", text=f"honestly no idea {index}", time=at + timedelta(seconds=9)
            )
        )
    return messages


def prompt_tokens(history_turns: int, pseudo: list[Message]) -> float:
    return tokens_of(history_text(PERSONA, history_turns)) + tokens_of(render_messages(pseudo))


def test_a_long_pseudo_dialogue_gives_way_from_its_oldest_turns_not_the_persona() -> None:
    pseudo = pseudo_dialogue(100)
    context = 4000
    plan = plan_prompt(PERSONA, pseudo, context_tokens=context, reply_tokens=256, history_turns=100)
    # The persona keeps at least its minimum; before, it was cut "from 100 to 0 turns".
    assert plan.history_turns >= MIN_HISTORY_TURNS
    assert 0 < plan.pseudo_turns < 100 and plan.pseudo_total == 100 and plan.pseudo_cut
    # What is kept is the newest end of the pseudo-dialogue, whole turns.
    assert plan.pseudo == pseudo[-len(plan.pseudo) :]
    assert len(segment_turns(plan.pseudo)) == plan.pseudo_turns
    # It fits, and one more pseudo-dialogue turn would not have.
    room = context - 256 - PROMPT_RESERVE_TOKENS
    assert prompt_tokens(plan.history_turns, plan.pseudo) <= room
    one_more = pseudo[-len(plan.pseudo) - 2 :]
    assert prompt_tokens(MIN_HISTORY_TURNS, one_more) > room


def test_room_left_after_the_pseudo_dialogue_goes_back_to_the_history() -> None:
    plan = plan_prompt(
        PERSONA, pseudo_dialogue(5), context_tokens=8192, reply_tokens=256, history_turns=100
    )
    assert plan.pseudo_turns == 5 and not plan.pseudo_cut
    assert plan.history_turns > MIN_HISTORY_TURNS


def test_a_context_too_small_for_the_persona_is_refused_naming_the_numbers() -> None:
    with pytest.raises(ConfigError) as refused:
        plan_prompt(
            PERSONA, pseudo_dialogue(10), context_tokens=2800, reply_tokens=256, history_turns=100
        )
    said = str(refused.value)
    assert "cannot fit a context of 2800 tokens" in said
    assert f"history of {MIN_HISTORY_TURNS} turns" in said and "256" in said
    assert "--n-ctx" in said
    # Not the flags the user already gave: the advice is to change the context itself.
    assert "--history-turns" not in said


@settings(max_examples=40, deadline=None)
@given(
    turns=st.integers(0, 120),
    context=st.integers(2500 + 256 + 1200, 20000),
    wanted=st.integers(0, 160),
)
def test_every_plan_fits_and_keeps_the_minimum(turns: int, context: int, wanted: int) -> None:
    pseudo = pseudo_dialogue(turns)
    try:
        plan = plan_prompt(
            PERSONA, pseudo, context_tokens=context, reply_tokens=256, history_turns=wanted
        )
    except ConfigError:
        floor = tokens_of(history_text(PERSONA, min(wanted, MIN_HISTORY_TURNS)))
        assert floor > context - 256 - PROMPT_RESERVE_TOKENS
        return
    assert plan.history_turns >= min(wanted, MIN_HISTORY_TURNS)
    assert plan.history_turns <= wanted
    assert prompt_tokens(plan.history_turns, plan.pseudo) <= context - 256 - PROMPT_RESERVE_TOKENS
