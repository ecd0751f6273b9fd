"""The paper's design with mock models: a study at 3, 10 and 110 total turns.

Runs every step in one process, offline, in about a minute:

1. ``sdtt generate``: 100 turns of self-directed pseudo-dialogue (10 topics x 10 turns);
2. three ``sdtt simulate`` chats on one corpus topic: 3 live turns (0+3), 10 live turns
   (0+10), and 10 live turns with the pseudo-dialogue in the bot's prompt (100+10);
3. ``sdtt questionnaire build --total-turns 3 --total-turns 10 --total-turns 110``
   pairs each with a real human chat from the corpus;
4. an LLM judge (a scripted mock: it answers "A" or "B" from a hash of the prompt, both
   orders of every pair) writes ``judgements.jsonl``;
5. ``sdtt score --by turns`` and ``sdtt report``: the report's "Pass rate against turns"
   figure has one point at each of 3, 10 and 110 turns.

Usage: ``python examples/turns_study.py OUT_FOLDER``. Swap ``mock/chatty`` for a real
model (and the scripted judge for ``sdtt judge --model ...``) to run the study for real.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import trio

from sdtt.cli import main
from sdtt.judges.llm import run_llm_judge
from sdtt.models import get_model
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.questionnaires.judgements import write_judgements
from sdtt.questionnaires.questionnaire import load_key, load_questionnaire

PERSONA = "chitchat-32b20fa3"
MODEL = "mock/chatty"
TOPIC = "Can computers fall in love?"
"""A topic of the chitchat corpus, so that real human chats on it can be paired."""
TOTALS = (3, 10, 110)
DAY = "2025-01-01"
"""The simulated chats start at fixed times of this day (``--start``), not now: their
prompts then hold the same times on every run, so the mock chats, and the whole study,
come out the same."""


def sdtt(*args: str) -> None:
    """Run one sdtt command; stop at the first failure."""
    code = main(list(args))
    if code != 0:
        raise SystemExit(f"sdtt {' '.join(args)} failed with exit code {code}")


def scripted_judge(prompt: Prompt, config: GenerateConfig) -> str:
    """A stand-in for an LLM judge: a fixed, arbitrary answer per prompt."""
    return "A" if zlib.crc32(prompt.user_text().encode("utf-8")) % 2 else "B"


async def judge(study: Path) -> int:
    """Judge every pair of ``study`` with the scripted mock; returns the records written."""
    questionnaire = load_questionnaire(study)
    key = load_key(study, questionnaire)
    async with get_model("mock/judge", replies=scripted_judge) as model:
        judgements = await run_llm_judge(model, questionnaire, key)
    return write_judgements(study / "judgements.jsonl", judgements)


def run(out: Path) -> Path:
    """Build, judge, score and report the 3/10/110-turn study under ``out``; returns the
    report folder."""
    chats = out / "chats"
    sdtt("generate", "--persona", PERSONA, "--model", MODEL, "--turns", "100",
         "--turns-per-topic", "10", "--out", str(out / "pseudo"))  # fmt: skip
    (chain,) = sorted((out / "pseudo").glob("*.jsonl"))
    common = ["--persona", PERSONA, "--model", MODEL, "--topic", TOPIC, "--virtual-clock",
              "--quiet", "--out", str(chats)]  # fmt: skip
    # An hour apart, so the chats' files (named by start time) sort in the order they ran.
    sdtt("simulate", *common, "--turns", "3", "--start", f"{DAY}T12:00")
    sdtt("simulate", *common, "--turns", "10", "--start", f"{DAY}T13:00")
    sdtt("simulate", *common, "--turns", "10", "--pseudo", str(chain), "--start", f"{DAY}T14:00")
    bots = sorted(p for p in chats.glob("*.jsonl") if not p.name.endswith(".events.jsonl"))
    study = out / "study"
    build = ["questionnaire", "build", "--human", "corpus", "--seed", "1", "--out", str(study)]
    for bot in bots:
        build += ["--bot", str(bot)]
    for total in TOTALS:
        build += ["--total-turns", str(total)]
    sdtt(*build)
    trio.run(judge, study)
    judgements = str(study / "judgements.jsonl")
    sdtt("score", judgements, "--by", "turns", "--bootstrap", "200")
    report = out / "report"
    sdtt("report", judgements, "--study", str(study), "--out", str(report), "--bootstrap", "200")
    return report


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(run(Path(sys.argv[1])) / "report.html")
