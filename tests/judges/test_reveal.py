"""LLM judges in reveal mode: a belief per turn, stated and from log-probabilities."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio

import sdtt.models.mock as mock
from sdtt.beliefs.traces import read_traces
from sdtt.cli import main
from sdtt.errors import ServerError
from sdtt.judges.parsing import parse_probability
from sdtt.judges.reveal import logprob_belief, reveal_prompt, run_reveal_judge
from sdtt.models.base import GenerateConfig, ModelOutput, TokenLogprobs
from sdtt.models.model import get_model
from sdtt.models.openai_api import OpenAIAPI
from sdtt.tasks.questionnaire import save_study
from sdtt.tasks.reveal_turns import reveal_turns
from tests.questionnaires.helpers import SECRET_WORDS, fixture_study


@pytest.mark.parametrize(
    ("text", "belief"),
    [
        ("73", 73),
        ("73%", 73),
        ("**40**", 40),
        ("Probability: 12", 12),
        ("62/100", 62),
        ("0", 0),
        ("100.", 100),
        ("I think so.\nAnswer: 35", 35),
        ("0.7", None),  # a probability, or 0.7 %? Ambiguous, so unread.
        ("130", None),
        ("between 40 and 60", None),
        ("Answer: 40\nAnswer: 60", None),
        ("Chat 1", None),
        ("", None),
    ],
)
def test_the_probability_parser_never_guesses(text: str, belief: float | None) -> None:
    assert parse_probability(text) == belief


def _output(token: str, top: list[tuple[str, float]]) -> ModelOutput:
    logprobs = (TokenLogprobs(token, top[0][1], tuple((t, math.log(p)) for t, p in top)),)
    return ModelOutput(text=token, model="m", logprobs=logprobs)


def test_logprob_belief_is_the_expected_number_over_the_top_tokens() -> None:
    output = _output("70", [("70", 0.5), ("80", 0.3), ("hmm", 0.2)])
    assert logprob_belief(output, 70) == pytest.approx((70 * 0.5 + 80 * 0.3) / 0.8)
    # Too little mass on numbers, a number split over tokens, or none: no belief.
    assert logprob_belief(_output("70", [("70", 0.3), ("I", 0.7)]), 70) is None
    assert logprob_belief(_output("7", [("7", 0.9)]), 73) is None
    assert logprob_belief(ModelOutput(text="70", model="m"), 70) is None


def test_reveal_prompts_show_only_what_was_revealed_and_no_secrets() -> None:
    study = fixture_study()
    item = study.questionnaire.items[0]
    turns = reveal_turns(item)
    first = reveal_prompt(item, 1, turns)
    assert item.chats[0][-1].text not in first.dialogue
    assert item.chats[0][0].text in first.dialogue
    whole = reveal_prompt(item, turns, turns)
    for prompt in (first, whole):
        text = " ".join((prompt.instructions, prompt.dialogue, prompt.task)).lower()
        assert not [w for w in SECRET_WORDS if w.lower() in text]
        assert "bot_position" not in text


def test_mock_judge_gives_stated_and_logprob_traces() -> None:
    study = fixture_study()

    async def run() -> list[Any]:
        async with get_model("mock/chatty") as model:
            return await run_reveal_judge(model, study.questionnaire, study.key, logprobs=True)

    traces = trio.run(run)
    items = study.questionnaire.items
    assert len(traces) == 2 * len(items)
    stated = [t for t in traces if t.judge_id.startswith("llm-reveal:")]
    logprob = [t for t in traces if t.judge_id.startswith("llm-reveal-logprob:")]
    assert len(stated) == len(logprob) == len(items)
    for a, b in zip(stated, logprob, strict=True):
        assert len(a.points) == reveal_turns(next(i for i in items if i.id == a.item_id))
        assert all(p.source == "stated" and p.belief is not None for p in a.points)
        assert all(p.source == "logprob" and p.belief is not None for p in b.points)
        assert [p.belief for p in a.points] != [p.belief for p in b.points]


def test_openai_asks_for_and_reads_logprobs() -> None:
    api = OpenAIAPI("gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    kwargs = api.request(
        reveal_prompt(fixture_study().questionnaire.items[0], 1, 3), GenerateConfig(top_logprobs=5)
    )
    assert kwargs["logprobs"] is True and kwargs["top_logprobs"] == 5
    assert "logprobs" not in api.request(
        reveal_prompt(fixture_study().questionnaire.items[0], 1, 3), GenerateConfig()
    )
    top = [SimpleNamespace(token="40", logprob=-0.1), SimpleNamespace(token="60", logprob=-2.0)]
    completion = SimpleNamespace(
        choices=[
            SimpleNamespace(
                message=SimpleNamespace(content="40"),
                logprobs=SimpleNamespace(
                    content=[SimpleNamespace(token="40", logprob=-0.1, top_logprobs=top)]
                ),
            )
        ],
        usage=None,
    )
    output = api.output_of(completion)
    assert output.logprobs is not None and output.logprobs[0].top[1] == ("60", -2.0)


@pytest.fixture
def study(tmp_path: Path) -> Path:
    built = fixture_study()
    folder = tmp_path / "study"
    save_study(folder, built.questionnaire, built.key)
    return folder


def test_cli_reveal_judge_writes_traces_resumes_and_scores(
    study: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    real = mock.create

    def create(model: str, **options: Any) -> mock.MockModelAPI:
        def reply(prompt: Any, config: GenerateConfig) -> str:
            asked.append(prompt.dialogue)
            # An unreadable answer on the first turn: asked again, then missing.
            return "maybe" if "turn 1 of" in prompt.task else "64"

        options["replies"] = reply
        return real(model, **options)

    monkeypatch.setattr(mock, "create", create)
    monkeypatch.setattr(mock, "check_name", lambda model: None)  # its replies are given
    out = study / "traces.jsonl"
    assert main(["judge", str(study), "--model", "mock/j", "--reveal"]) == 0
    traces = read_traces(out)
    assert len(traces) == len(fixture_study().questionnaire.items)
    for trace in traces:
        assert trace.points[0].belief is None  # recorded missing, not coerced
        assert trace.final_belief == 64
    assert "missing:" in capsys.readouterr().out
    # A rerun asks nothing the file already holds; a cut file asks only what is missing.
    asked.clear()
    assert main(["judge", str(study), "--model", "mock/j", "--reveal"]) == 0
    assert asked == []
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:1]), encoding="utf-8")
    assert main(["judge", str(study), "--model", "mock/j", "--reveal"]) == 0
    assert asked and len(read_traces(out)) == len(traces)
    capsys.readouterr()
    assert main(["score", str(out)]) == 0
    assert "LLM judge mock/j (reveal)" in capsys.readouterr().out


def test_cli_reveal_judge_writes_nothing_when_every_call_fails(
    study: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = mock.create

    def create(model: str, **options: Any) -> mock.MockModelAPI:
        options["replies"] = lambda prompt, config: ServerError("down")
        return real(model, **options)

    monkeypatch.setattr(mock, "create", create)
    monkeypatch.setattr(mock, "check_name", lambda model: None)  # its replies are given
    monkeypatch.setattr("sdtt.models.retry.RetryPolicy.max_attempts", 1, raising=False)
    code = main(["judge", str(study), "--model", "mock/j", "--reveal"])
    assert code == 1
    assert not (study / "traces.jsonl").exists()
    assert "every judge call failed" in capsys.readouterr().err


def test_logprobs_are_refused_for_a_provider_without_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Asking for log-probability beliefs from a provider that has none stops at once."""
    code = main(["judge", str(tmp_path), "--model", "eliza/classic", "--reveal", "--logprobs"])
    assert code == 2
    assert "eliza/classic gives no token log-probabilities" in capsys.readouterr().err
