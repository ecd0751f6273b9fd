"""The steps of a study, in dependency order, with the files each one writes.

A step is done when its marker ``OUT/.done/<id>`` exists beside its output (written
after the output is complete), running when its output has begun, else missing. The
order is the order of the dependencies: topics, chains, chats, questionnaire, the
similarity rating task and its LLM cohorts (``[cohorts.NAME]``), judgements (LLM
judges; the survey export, then its answers), report.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sdtt.dialogue.condition import ChatMode
from sdtt.generate.chain import ChainSpec
from sdtt.generate.chain_spec import PlanSettings, grid_specs, load_topic_list
from sdtt.generate.runner import chain_path
from sdtt.study.spec import SURVEY_JUDGEMENTS, Study
from sdtt.surveys.tools import TOOLS

Stage = Literal["topics", "chains", "chats", "questionnaire", "align", "judges", "survey", "report"]
STAGES: tuple[Stage, ...] = (
    "topics",
    "chains",
    "chats",
    "questionnaire",
    "align",
    "judges",
    "survey",
    "report",
)
State = Literal["done", "running", "missing"]
DONE_FOLDER = ".done"
QUESTIONNAIRE_FOLDER = "questionnaire"
JUDGEMENTS_FOLDER = "judgements"
SURVEY_FOLDER = "survey"
REPORT_FOLDER = "report"
RESULTS_FOLDER = "results"
"""The report's tables as data (CSV, JSON), written with the report."""
ALIGN_FOLDER = "align"
"""The rating task (``rating-task.json``, ``rating-key.json``), as ``sdtt align build``."""
RATINGS_FOLDER = "ratings"
"""``OUT/align/ratings/NAME.jsonl``: the ratings of ``[cohorts.NAME]``."""
TOPICS_FILE = "topics.txt"
PSEUDO_FOLDER = "pseudo"


@dataclass(frozen=True)
class Cell:
    """One chat of the design: persona x model x mode x (N, X) x topic."""

    number: int
    persona: str
    model: str
    mode: ChatMode
    n: int
    x: int
    topic: str

    @property
    def id(self) -> str:
        """The folder name of the cell's chat."""
        return f"cell-{self.number:03d}"

    @property
    def label(self) -> str:
        """The condition as people read it (the ledger's ``condition``)."""
        return f"{self.persona} {self.model} {self.mode} N={self.n} X={self.x} topic {self.topic!r}"

    @property
    def total(self) -> int:
        """N + X, the total turn index judges see."""
        return self.n + self.x


@dataclass(frozen=True)
class Step:
    """One piece of the study and what it writes."""

    id: str
    stage: Stage
    label: str
    output: Path
    human: bool = False
    """A person does this step (the runner stops at it and says what to do)."""


def cells(study: Study) -> list[Cell]:
    """Every cell of the design, numbered in a stable order."""
    d = study.spec.design
    product = itertools.product(d.personas, d.models, d.modes, d.turns, d.topics)
    return [
        Cell(i, persona, model, mode, n, x, topic)
        for i, (persona, model, mode, (n, x), topic) in enumerate(product, start=1)
    ]


def pseudo_model(study: Study, cell: Cell) -> str:
    """The model that writes the cell's pseudo-dialogue."""
    return study.spec.pseudo.model or cell.model


def chain_topics(study: Study) -> list[str]:
    """The topics the chains walk through (read when the chains are planned)."""
    if study.spec.pseudo.topics == "generate":
        path = study.out / TOPICS_FILE
        return load_topic_list(str(path)) if path.exists() else []
    return load_topic_list(study.spec.pseudo.topics, study.folder)


def chain_spec(study: Study, cell: Cell, topics: list[str]) -> ChainSpec:
    """The chain whose N turns go into the cell's prompt (cells that share persona,
    model, mode and N share it)."""
    (spec,) = grid_specs(
        personas=[cell.persona],
        models=[pseudo_model(study, cell)],
        modes=[cell.mode],
        seeds=[study.spec.study.seed],
        turns=[cell.n],
        topics=topics,
        turns_per_topic=study.spec.pseudo.turns_per_topic,
        settings=PlanSettings(),
    )
    return spec


def chain_key(study: Study, cell: Cell) -> tuple[str, str, str, int]:
    """What identifies a cell's chain before its topics are known."""
    return (cell.persona, pseudo_model(study, cell), cell.mode, cell.n)


def chain_step_id(key: tuple[str, str, str, int]) -> str:
    """The step id of a chain."""
    persona, model, mode, n = key
    return f"chain {persona} {model} {mode} N={n}"


def steps(study: Study) -> list[Step]:
    """Every step of the study, in the order they run."""
    out = study.out
    found: list[Step] = []
    all_cells = cells(study)
    with_pseudo = [c for c in all_cells if c.n > 0]
    if with_pseudo and study.spec.pseudo.topics == "generate":
        found.append(Step("topics", "topics", "topic list", out / TOPICS_FILE))
    topics = chain_topics(study) if with_pseudo else []
    chains = {chain_key(study, c): c for c in reversed(with_pseudo)}
    for key in dict.fromkeys(chain_key(study, c) for c in with_pseudo):
        # Its file is known once its topics are (a generated list: after the topics step).
        output = (
            chain_path(out / PSEUDO_FOLDER, chain_spec(study, chains[key], topics))
            if topics
            else out / PSEUDO_FOLDER / "(topics pending)"
        )
        found.append(Step(chain_step_id(key), "chains", chain_step_id(key), output))
    for cell in all_cells:
        found.append(
            Step(
                f"chat {cell.id}",
                "chats",
                cell.label,
                out / "chats" / cell.id,
                human=not study.simulated,
            )
        )
    found.append(
        Step("questionnaire", "questionnaire", "pairs and answer key", out / QUESTIONNAIRE_FOLDER)
    )
    if study.spec.cohorts:
        found.append(Step("rating task", "align", "similarity rating task", out / ALIGN_FOLDER))
    for name in study.spec.cohorts:
        found.append(Step(f"cohort {name}", "align", name, ratings_path(study, name)))
    for name in study.spec.judges:
        found.append(
            Step(f"judge {name}", "judges", name, out / JUDGEMENTS_FOLDER / f"{name}.jsonl")
        )
    survey = study.spec.survey
    if survey is not None:
        found.append(
            Step(
                "survey export",
                "survey",
                f"{survey.format} export",
                out / SURVEY_FOLDER / TOOLS[survey.format].filename,
            )
        )
        found.append(
            Step(
                "survey answers",
                "survey",
                "judges' answers",
                out / JUDGEMENTS_FOLDER / f"{SURVEY_JUDGEMENTS}.jsonl",
                human=True,
            )
        )
    found.append(Step("report", "report", "report and figures", out / REPORT_FOLDER))
    return found


def ratings_path(study: Study, name: str) -> Path:
    """The rating file of ``[cohorts.NAME]``."""
    return study.out / ALIGN_FOLDER / RATINGS_FOLDER / f"{name}.jsonl"


def marker(study: Study, step: Step) -> Path:
    """The file whose presence says ``step`` finished."""
    name = step.id.replace("/", "_").replace(" ", "_")
    return study.out / DONE_FOLDER / name


def state(study: Study, step: Step) -> State:
    """Whether ``step`` is done, begun or not begun."""
    if marker(study, step).exists() and step.output.exists():
        return "done"
    return "running" if step.output.exists() else "missing"


def mark_done(study: Study, step: Step) -> None:
    """Record that ``step`` finished (after its output is complete)."""
    path = marker(study, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(step.id + "\n", encoding="utf-8")
