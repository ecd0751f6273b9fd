"""The seed paper's labelled example conversations (Zhang, Kreiman et al., Sec. S1),
typed into ``examples/single/paper-s1-conversations.jsonl``, judged as single items by an
LLM judge and scored by class.

The judge is a scripted model that calls a speaker AI when one of its messages occurs
twice in the conversation (the repetition the paper resampled) and human otherwise, so
every figure can be counted here without sdtt's scoring.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import trio

from sdtt.dialogue.store import read_transcripts
from sdtt.judges.single_item import judge_task
from sdtt.models import get_model
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.single.build import StudySettings, build_study
from sdtt.single.items import cut_items, speaker_truth
from sdtt.single.scoring import score_single
from sdtt.tasks.single_task import SingleAnswer

EXAMPLES = Path(__file__).parents[2] / "examples" / "single" / "paper-s1-conversations.jsonl"
PAPER_CLASSES = {
    "paper-s1.1": "HH",  # two humans
    "paper-s1.2": "MM",  # Blenderbot with itself
    "paper-s1.3": "MM",  # GPT3 davinci with itself, successful
    "paper-s1.4": "MM",  # GPT3 davinci with itself, discarded
    "paper-s1.5": "MM",  # GPT3 curie with itself
    "paper-s1.6": "MH",  # "A is Blenderbot and B is a person"
    "paper-s1.7": "HM",  # "A is a person and B is the machine"
    "paper-s1.8": "MH",  # "A is the machine and B is the person"
    "paper-s1.9": "MM",  # DialoGPT with itself
    "paper-s1.10": "MM",  # two LLaMA agents
}


def repeats(lines: list[tuple[str, str]], speaker: str) -> bool:
    """Whether one of ``speaker``'s messages occurs twice in the conversation."""
    seen = Counter(text.casefold() for _, text in lines)
    return any(seen[text.casefold()] > 1 for who, text in lines if who == speaker)


def spotter(prompt: Prompt, config: GenerateConfig) -> str:
    """The scripted judge: reads the conversation after the instructions, line by line."""
    body = prompt.dialogue.removeprefix("Conversation: ")
    lines = [(line[0], line[3:]) for line in body.splitlines() if line[1:3] == ": "]
    return "\n".join(f"{s}: {'AI' if repeats(lines, s) else 'human'}" for s in "AB")


def test_the_file_holds_the_papers_ten_conversations_with_their_labels() -> None:
    transcripts = read_transcripts(EXAMPLES)
    assert [t.id for t in transcripts] == list(PAPER_CLASSES)
    for transcript in transcripts:
        truth = speaker_truth(transcript)
        klass = "".join("H" if truth[s] == "human" else "M" for s in "AB")
        assert klass == PAPER_CLASSES[transcript.id]
        assert len(transcript.messages) == (16 if transcript.id == "paper-s1.9" else 24)
    first = transcripts[0].messages
    assert first[0].text == "Hey! How are you doing?" and first[-1].side == "response"


@pytest.fixture(scope="module")
def judged() -> tuple[list[SingleAnswer], object, list]:
    items, skipped = cut_items(read_transcripts(EXAMPLES), (6, 24))
    assert skipped == [("paper-s1.9", 24)]
    task, key = build_study(items, StudySettings(forms=1, per_form=10, seed=1))

    async def main() -> list[SingleAnswer]:
        async with get_model("mock/spotter", replies=spotter) as model:
            return await judge_task(model, task, kind="zero-shot")

    return trio.run(main), key, items


def test_an_llm_judge_labels_both_speakers_of_every_item(judged: tuple) -> None:
    answers, key, items = judged
    assert len(answers) == len(items) == 19
    assert all(a.exclusion_reason is None for a in answers)
    davinci_discarded = next(a for a in answers if key.entry(a.item).item == "paper-s1.4@24")
    assert davinci_discarded.verdicts == {"A": "machine", "B": "machine"}
    people = next(a for a in answers if key.entry(a.item).item == "paper-s1.1@24")
    assert people.verdicts == {"A": "human", "B": "human"}


def test_the_s1_items_are_scored_by_class_as_counted_by_hand(judged: tuple) -> None:
    answers, key, items = judged
    scores = score_single(answers, key, reps=200)
    by_id = {item.id: item for item in items}
    counts: dict[str, Counter[str]] = {}
    for answer in answers:
        item = by_id[key.entry(answer.item).item]
        lines = [(s.speaker, s.text) for s in item.lines]
        tally = counts.setdefault(item.klass, Counter())
        for speaker in "AB":
            said = "machine" if repeats(lines, speaker) else "human"
            tally[item.truth[speaker] + ">" + said] += 1
    rows = {r.klass: r for r in scores.rows if r.cut == "all"}
    assert set(rows) == {"all", "HH", "HM", "MH", "MM"}
    for klass, tally in counts.items():
        humans = tally["human>human"] + tally["human>machine"]
        machines = tally["machine>machine"] + tally["machine>human"]
        row = rows[klass]
        assert row.trials == humans + machines
        if humans:
            assert row.p_hh == pytest.approx(tally["human>human"] / humans)
        if machines:
            assert row.p_mm == pytest.approx(tally["machine>machine"] / machines)
    # The repetition spotter never calls a person a machine in these examples...
    assert rows["HH"].p_hh == 1.0
    # ...and catches only the machines that repeat themselves.
    assert 0 < rows["MM"].p_mm < 1
