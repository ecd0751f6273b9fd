"""``sdtt judge-ui``: an in-lab judging screen for a study's questionnaire."""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

from sdtt.commands.console import CliConsole
from sdtt.errors import InputError
from sdtt.files import output_file
from sdtt.questionnaires.fielded import note_scored
from sdtt.redact import shown
from sdtt.seeds import seeded_rng
from sdtt.tasks.questionnaire import load_key, load_questionnaire


def run(args: argparse.Namespace) -> int:
    """Run ``sdtt judge-ui`` from parsed arguments."""
    from sdtt.ui.judge import JudgeApp

    questionnaire = load_questionnaire(args.study)
    key = load_key(args.study, questionnaire)
    judge_id = args.judge or f"lab-{uuid.uuid4().hex[:8]}"
    out = output_file(args.out or Path(args.study) / "judgements-lab.jsonl")
    forms = questionnaire.forms
    if forms:
        number = args.form or seeded_rng(questionnaire.id, judge_id).randint(1, len(forms))
        if not 1 <= number <= len(forms):
            raise InputError(
                f"--form {number}: the study has forms 1 to {len(forms)}.", field="--form"
            )
        questionnaire = questionnaire.form_questionnaire(forms[number - 1])
        CliConsole(highlight=False).print(f"Judge {shown(judge_id)} gets form {number}.")
    result = JudgeApp(questionnaire, key, judge_id=judge_id, out=out).run()
    console = CliConsole(highlight=False)
    if result is None:
        console.print(
            f"Judge {shown(judge_id)} stopped before the end; the answers given so far are in "
            f"{shown(str(out))}.answers.csv (import them with 'sdtt responses import "
            "--format csv')."
        )
        return 0
    note_scored(args.study, out, command="sdtt judge-ui")
    console.print(
        f"Judge {shown(judge_id)}: {len(result.judgements)} judgement(s) appended to "
        f"{shown(str(out))}."
    )
    return 0
