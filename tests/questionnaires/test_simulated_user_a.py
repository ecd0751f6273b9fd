"""A simulated User A is no person: the build warns, and ELIZA never interrogates ELIZA."""

from __future__ import annotations

from sdtt.commands.simulate import default_interrogator
from sdtt.models.registry import DEFAULT_MODEL
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.pairing import Pairing
from sdtt.questionnaires.study import StudySpec
from tests.questionnaires.helpers import conversation

TOPIC = "Cats or dogs?"


def built_warnings(interrogator: str) -> list[str]:
    meta = {"model": "mock/chatty", "interrogator": interrogator, "pseudo_turns": 0}
    bot = conversation("bot", TOPIC, 4, tag="b", meta=meta)
    human = conversation("human", TOPIC, 6, tag="h")
    spec = StudySpec(x_turns=[3], catch_pairs=0)
    return build_questionnaire(spec, [Pairing(bot, None, human, None)]).warnings


def test_a_simulated_user_a_beside_a_human_human_chat_is_warned_about() -> None:
    (warning,) = [w for w in built_warnings("mock/chatty") if "simulated User A" in w]
    assert warning.startswith("1 bot chat(s) have a simulated User A (mock/chatty)")
    assert not any("simulated User A" in w for w in built_warnings("human"))


def test_eliza_as_the_bot_gets_the_default_model_as_its_interrogator() -> None:
    assert default_interrogator("eliza/classic") == DEFAULT_MODEL
    assert default_interrogator("mock/chatty") == "mock/chatty"
