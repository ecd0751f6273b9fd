"""A simulated User A is no person: the build warns, nothing a judge reads says User A is
a person, and ELIZA never interrogates ELIZA."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.commands.simulate import default_interrogator
from sdtt.errors import InputError
from sdtt.judges.llm import run_llm_judge
from sdtt.judges.reveal import run_reveal_judge
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.model import get_model
from sdtt.models.registry import DEFAULT_MODEL
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.exports import export_text
from sdtt.questionnaires.pairing import Pairing
from sdtt.surveys.tool import ExportOptions, RevealNotSupported
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.study import DesignSpec, StudySpec
from tests.questionnaires.helpers import conversation

TOPIC = "Cats or dogs?"
PERSON_CLAIM = re.compile(
    r"User A (is|are) (a )?(person|human|people)|User A's are people|every chat, User A is",
    re.IGNORECASE,
)
"""Any wording that calls User A a person (the sentences sdtt once wrote, and kin)."""


def built(interrogator: str, **spec: object) -> BuildResult:
    meta = {"model": "mock/chatty", "interrogator": interrogator, "pseudo_turns": 0}
    bots = [conversation(f"bot{n}", TOPIC, 4, tag=f"b{n}", meta=meta) for n in range(2)]
    humans = [conversation(f"human{n}", TOPIC, 6, tag=f"h{n}") for n in range(2)]
    pairs = [Pairing(b, None, h, None) for b, h in zip(bots, humans, strict=True)]
    return build_questionnaire(StudySpec(x_turns=[3], catch_pairs=1, **spec), pairs)


def built_warnings(interrogator: str) -> list[str]:
    return built(interrogator).warnings


def every_export(study: BuildResult) -> dict[str, str]:
    texts = {name: export_text(study.questionnaire, name) for name in TOOLS}
    for name in TOOLS:
        with contextlib.suppress(RevealNotSupported):
            texts[f"{name} (reveal)"] = export_text(
                study.questionnaire, name, ExportOptions(reveal=True)
            )
    return texts


def test_a_simulated_user_a_beside_a_human_human_chat_is_warned_about() -> None:
    (warning,) = [w for w in built_warnings("mock/chatty") if "simulated User A" in w]
    assert warning.startswith("2 bot chat(s) have a simulated User A (mock/chatty)")
    assert not any("simulated User A" in w for w in built_warnings("human"))


@pytest.mark.parametrize("interrogator", ["mock/chatty", "script"])
def test_no_export_calls_user_a_a_person_when_a_program_plays_it(interrogator: str) -> None:
    exports = every_export(built(interrogator))
    assert len(exports) >= 7
    for name, text in exports.items():
        assert PERSON_CLAIM.search(text) is None, (name, PERSON_CLAIM.search(text))
        assert "computer program plays User A" in text, name


def test_with_people_as_user_a_every_export_still_says_so() -> None:
    for name, text in every_export(built("human")).items():
        assert "User A is a person" in text, name


def test_a_researchers_intro_calling_user_a_a_person_is_refused() -> None:
    with pytest.raises(InputError, match="intro"):
        built("mock/chatty", intro="Read the chats. User A is always a person.")
    assert built("human", intro="Read the chats. User A is always a person.").questionnaire


@pytest.mark.trio
@pytest.mark.parametrize("kind", ["paired", "zero-shot", "one-shot"])
async def test_no_llm_judge_prompt_calls_user_a_a_human_when_a_program_plays_it(
    kind: str,
) -> None:
    study = built("mock/chatty", design=DesignSpec(pairs_per_judge=2))
    prompts: list[Prompt] = []

    def record(prompt: Prompt, config: GenerateConfig) -> str:
        prompts.append(prompt)
        return "A" if kind == "paired" else "AI"

    model = get_model("mock/record", replies=record)
    await run_llm_judge(model, study.questionnaire, study.key, kind=kind)
    assert prompts
    for prompt in prompts:
        text = prompt.completion_text() + prompt.task
        assert PERSON_CLAIM.search(text) is None, PERSON_CLAIM.search(text)
        assert "computer program plays User A" in text


@pytest.mark.trio
async def test_no_reveal_judge_prompt_calls_user_a_a_human_when_a_program_plays_it() -> None:
    study = built("mock/chatty")
    prompts: list[Prompt] = []

    def record(prompt: Prompt, config: GenerateConfig) -> str:
        prompts.append(prompt)
        return "50"

    await run_reveal_judge(get_model("mock/r", replies=record), study.questionnaire, study.key)
    assert prompts
    for prompt in prompts:
        assert PERSON_CLAIM.search(prompt.completion_text()) is None


def test_eliza_as_the_bot_gets_the_default_model_as_its_interrogator() -> None:
    assert default_interrogator("eliza/classic") == DEFAULT_MODEL
    assert default_interrogator("mock/chatty") == "mock/chatty"


def test_eliza_without_the_local_extra_names_the_flag_to_pass(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # llama-cpp-python missing, as on an install without the local extra.
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "2000")
    code = main(["simulate", "--model", "eliza/classic", "--turns", "1", "--out", "chats"])
    error = capsys.readouterr().err
    assert code == 2
    assert "--interrogator" in error and "--script" in error and "sdtt[local]" in error
    assert len(error.strip().splitlines()) == 1
    assert not (tmp_path / "chats").exists()
    # Named, ELIZA's interrogator runs on what is installed.
    args = ["simulate", "--model", "eliza/classic", "--turns", "1", "--out", "chats"]
    assert main([*args, "--interrogator", "mock/chatty", "--virtual-clock"]) == 0
