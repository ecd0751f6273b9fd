"""The demo's pseudo-dialogue stage: 2 topics x 3 turns before the live chat."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from sdtt.commands.demo_stages import PSEUDO_TOPICS, PSEUDO_TURNS, DemoRun, stage_pseudo_dialogue
from sdtt.dialogue.turns import count_turns
from sdtt.generate.chainfile import read_chain
from tests.generate.helpers import make_persona


@pytest.mark.trio
async def test_the_demo_writes_a_small_pseudo_dialogue_for_the_live_chat(tmp_path):
    output = io.StringIO()
    demo = DemoRun(
        persona=make_persona(),
        model_name="mock/chatty",
        out=tmp_path,
        seed=7,
        console=Console(file=output, width=100),
    )
    await stage_pseudo_dialogue(demo)
    chain = read_chain(demo.files[-1])
    assert len(chain.turns) == len(PSEUDO_TOPICS) * PSEUDO_TURNS == 6
    assert demo.pseudo == chain.messages
    assert count_turns(demo.pseudo) == 6
    shown = output.getvalue()
    assert all(topic in shown for topic in PSEUDO_TOPICS)
    assert "Self-directed pseudo-dialogue" in shown
