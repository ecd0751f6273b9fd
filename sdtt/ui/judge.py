"""The in-lab judging app (``sdtt judge-ui``): demographics first, then each pair of the
questionnaire one at a time, then the strategy question.

Each answer is appended at once to ``<out>.answers.csv`` in the generic long format
(``judge_id,question,answer,seconds``, importable with ``sdtt responses import --format
csv``), so a crash loses nothing. At the end the answers are scored with the survey-answer
readers' own :func:`~sdtt.surveys.answer_files.score` against the answer key and
appended to the judgement file. The key is read only to score: nothing of it is shown.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from sdtt.lock import output_lock
from sdtt.redact import printable
from sdtt.seeds import seeded_rng
from sdtt.spreadsheet import safe_cell
from sdtt.surveys.answer_files import ImportResult, JudgeAnswers, score
from sdtt.tasks.judgements import append_judgements, read_judgements
from sdtt.tasks.layout import pair_text
from sdtt.tasks.questionnaire import AnswerKey, PairItem, Question, Questionnaire

ANSWER_COLUMNS = ("judge_id", "question", "answer", "seconds")


@dataclass(frozen=True)
class Step:
    """One question on screen, with the pair it is about (if any)."""

    question: Question
    item: PairItem | None = None


def judging_steps(questionnaire: Questionnaire, judge_id: str) -> list[Step]:
    """Demographics, then per pair its judgement and topic, then the strategy question.

    Pairs are shuffled per judge (seeded by the judge id) when the questionnaire asks for it.
    """
    steps = [Step(question) for question in questionnaire.demographics]
    items = list(questionnaire.items)
    if questionnaire.randomise_order:
        seeded_rng(questionnaire.id, judge_id).shuffle(items)
    for item in items:
        steps.append(Step(item.judgement, item))
        if item.topic is not None:
            steps.append(Step(item.topic, item))
    if questionnaire.strategy is not None:
        steps.append(Step(questionnaire.strategy))
    return steps


def pair_view(item: PairItem) -> Text:
    """Both chats with numbered lines; User B's lines marked and in bold."""
    text = Text()
    for line in printable(pair_text(item)).split("\n"):
        if line.startswith(">"):
            text.append(line + "\n", style="bold")
        elif line.startswith("Chat "):
            text.append(line + "\n", style="bold underline")
        else:
            text.append(line + "\n")
    return text


class AnswerLog:
    """Appends each answer to a long CSV as it is given (flushed per row).

    Free-text answers that a spreadsheet would run as a formula get a leading apostrophe
    (:mod:`sdtt.spreadsheet`); the CSV reader takes it off again.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        new = not path.exists() or path.stat().st_size == 0
        if not new:
            with path.open("rb+") as handle:
                # A last row without its line end would swallow the first new answer.
                handle.seek(-1, 2)
                if handle.read(1) not in (b"\n", b"\r"):
                    handle.write(b"\r\n")
        self._file = path.open("a", encoding="utf-8", newline="")
        self._writer = csv.writer(self._file)
        if new:
            self._writer.writerow(ANSWER_COLUMNS)
            self._file.flush()

    def write(self, judge_id: str, question: str, answer: str, seconds: float | None) -> None:
        """Append one answer."""
        self._writer.writerow(
            [
                safe_cell(judge_id),
                question,
                safe_cell(answer),
                "" if seconds is None else f"{seconds:.1f}",
            ]
        )
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


class JudgeApp(App[ImportResult | None]):
    """Present a questionnaire to one judge and write their judgements."""

    CSS_PATH = "sdtt.tcss"
    TITLE = "sdtt judging"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit_judging", "Quit", priority=True),
        Binding("ctrl+c", "quit_judging", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        questionnaire: Questionnaire,
        key: AnswerKey,
        *,
        judge_id: str,
        out: Path,
    ) -> None:
        super().__init__()
        self.questionnaire = questionnaire
        self._key = key
        self.judge_id = judge_id
        self.out = out
        self.steps = judging_steps(questionnaire, judge_id)
        self.index = 0
        self.answers = JudgeAnswers(judge_id=judge_id, where="judge-ui")
        self.result: ImportResult | None = None
        self._shown_at = 0.0
        self._answer_log: AnswerLog | None = None

    def compose(self) -> ComposeResult:
        """Progress, the pair, the question, its answer widget, the footer."""
        yield Static(id="judge-progress")
        with VerticalScroll(id="judge-pair"):
            yield Static(id="judge-chats")
        yield Static(id="judge-question")
        yield OptionList(id="judge-options")
        yield Input(id="judge-text", placeholder="Type your answer and press Enter")
        yield Footer()

    def on_mount(self) -> None:
        """Open the answer log and show the first question."""
        self._answer_log = AnswerLog(self.out.with_name(self.out.name + ".answers.csv"))
        self.query_one("#judge-chats", Static).update(Text(self.questionnaire.intro))
        self._show()

    def on_unmount(self) -> None:
        """Close the answer log."""
        if self._answer_log is not None:
            self._answer_log.close()

    @property
    def step(self) -> Step | None:
        """The question on screen (``None`` once everything is answered)."""
        return self.steps[self.index] if self.index < len(self.steps) else None

    def _show(self) -> None:
        step = self.step
        options = self.query_one("#judge-options", OptionList)
        text = self.query_one("#judge-text", Input)
        pair = self.query_one("#judge-pair", VerticalScroll)
        progress = self.query_one("#judge-progress", Static)
        if step is None:
            self._finish()
            return
        pairs = [s for s in self.steps if s.item is not None and s.question is s.item.judgement]
        if step.item is not None:
            number = next(i for i, s in enumerate(pairs, 1) if s.item is step.item)
            progress.update(Text(f"Pair {number} of {len(pairs)}"))
            self.query_one("#judge-chats", Static).update(pair_view(step.item))
            if step.question is step.item.judgement:
                pair.scroll_home(animate=False)
        elif self.index < len(self.questionnaire.demographics):
            progress.update(Text("About you"))
        else:
            progress.update(Text("Last question"))
            self.query_one("#judge-chats", Static).update(Text(""))
        pair.display = step.item is not None or self.index == 0
        self.query_one("#judge-question", Static).update(Text(step.question.text))
        if step.question.choices is not None:
            options.clear_options()
            options.add_options(
                [
                    Option(f"{n}. {choice.label}", id=choice.value)
                    for n, choice in enumerate(step.question.choices, 1)
                ]
            )
            options.display = True
            text.display = False
            options.highlighted = None
            options.focus()
        else:
            options.display = False
            text.display = True
            text.value = ""
            text.focus()
        self._shown_at = time.monotonic()

    def _answer(self, value: str) -> None:
        step = self.step
        if step is None:
            return
        seconds = None
        if step.item is not None and step.question is step.item.judgement:
            seconds = time.monotonic() - self._shown_at
            self.answers.seconds[step.item.id] = seconds
        self.answers.answers[step.question.name] = value
        if self._answer_log is not None:
            self._answer_log.write(self.judge_id, step.question.name, value, seconds)
        self.index += 1
        self._show()

    @on(OptionList.OptionSelected, "#judge-options")
    def chose(self, event: OptionList.OptionSelected) -> None:
        """A choice was picked (Enter or click)."""
        if event.option.id is not None:
            self._answer(event.option.id)

    def on_key(self, event: events.Key) -> None:
        """Digits pick the option with that number."""
        key = event.character
        step = self.step
        if step is None or step.question.choices is None or not key or not key.isdigit():
            return
        number = int(key)
        if 1 <= number <= len(step.question.choices):
            self._answer(step.question.choices[number - 1].value)

    @on(Input.Submitted, "#judge-text")
    def typed(self, event: Input.Submitted) -> None:
        """A free-text answer (may be empty when the question is optional)."""
        value = event.value.strip()
        step = self.step
        if step is not None and step.question.required and not value:
            self.notify("Please answer this question.", severity="warning")
            return
        self._answer(value)

    def _finish(self) -> None:
        # Judges at other terminals may finish at the same moment: wait for their turn.
        with output_lock(self.out, wait=60):
            known: set[str] = set()
            if self.out.exists():
                known = {
                    j.judge_id for j in read_judgements(self.out) if j.study == self._key.study
                }
            self.result = score(
                self.questionnaire,
                self._key,
                [self.answers],
                source=f"judge-ui:{self.out.name}",
                known_judges=known,
            )
            append_judgements(self.out, self.result.judgements)
        self.query_one("#judge-progress", Static).update(Text("Done"))
        self.query_one("#judge-pair", VerticalScroll).display = False
        self.query_one("#judge-options", OptionList).display = False
        self.query_one("#judge-text", Input).display = False
        self.query_one("#judge-question", Static).update(
            Text(f"{self.questionnaire.end_text}\n\nPress Ctrl+Q to close.")
        )

    def action_quit_judging(self) -> None:
        """Leave (answers given so far are in the answers file)."""
        self.exit(self.result)
