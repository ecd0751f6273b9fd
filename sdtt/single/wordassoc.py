"""The word-association task: machine associations from any sdtt model, human ones
imported from a CSV file, both post-processed alike (:mod:`sdtt.single.wordclean`).

The model is asked as the papers asked people: "Name a word that you associate with
CUE", answered with one word; with ``examples`` (cue and association pairs from a held-out
set of human answers) it is the papers' prompted version instead, the examples listed
first. An answer that post-processing refuses is asked again with another seed, up to
``attempts`` times; the last refused answer is kept with its reason, so what was lost is
counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.models.asking import all_at_once
from sdtt.models.base import GenerateConfig, Generator, Prompt
from sdtt.seeds import derive_seed
from sdtt.single.csvrows import csv_rows
from sdtt.single.response import SingleResponse, Truth, response_id
from sdtt.single.wordclean import clean_association, letters_only

INSTRUCTIONS = (
    "You are taking part in a word-association study. You will be given a cue word. "
    "Answer with a single word that you associate with it, and nothing else."
)
QUESTION = "Name a word that you associate with {cue}?"
"""The papers' free-association question (their Fig. S1B1)."""
EXAMPLES_HEADER = "Here are some examples of word associations:"
DEFAULT_ATTEMPTS = 3
CONFIG = GenerateConfig(max_tokens=10, temperature=1.0)
"""One word needs few tokens; temperature 1 samples associations as they come."""


def association_prompt(cue: str, examples: Sequence[tuple[str, str]] = ()) -> Prompt:
    """The prompt that asks for one association to ``cue`` (with examples: prompted)."""
    lines = []
    if examples:
        lines.append(EXAMPLES_HEADER)
        lines += [f"{example} -> {answer}" for example, answer in examples]
        lines.append("")
    lines.append(QUESTION.format(cue=cue))
    return Prompt(instructions=INSTRUCTIONS, task="\n".join(lines))


async def associate(
    model: Generator,
    cue: str,
    *,
    seed: int = 0,
    examples: Sequence[tuple[str, str]] = (),
    attempts: int = DEFAULT_ATTEMPTS,
    config: GenerateConfig = CONFIG,
) -> SingleResponse:
    """One machine association to ``cue``, post-processed (refused answers asked again)."""
    prompt = association_prompt(cue, examples)
    raw = ""
    tries = 0
    for tries in range(1, max(1, attempts) + 1):
        call = replace(config, seed=derive_seed(seed, "wordassoc", cue, tries))
        raw = (await model.generate(prompt, call)).text.strip()
        if clean_association(cue, raw).reason is None:
            break
    return association_record(
        cue,
        raw,
        truth="machine",
        agent=model.name,
        origin="model",
        salt=str(seed),
        meta={"seed": seed, "attempts": tries, "prompted": bool(examples)},
    )


def association_record(
    cue: str,
    answer: str,
    *,
    truth: Truth,
    agent: str,
    origin: str,
    salt: str = "",
    meta: dict[str, Any] | None = None,
) -> SingleResponse:
    """The record of one answer to ``cue``, post-processed (a refused answer is kept,
    excluded with the reason). ``salt`` tells apart equal answers of one agent (a seed,
    a file line)."""
    cleaned = clean_association(cue, answer)
    return SingleResponse(
        task="wordassoc",
        id=response_id("wordassoc", cue, cleaned.word, agent, salt),
        stimulus=cue,
        response=cleaned.word,
        truth=truth,
        agent=agent,
        raw=answer if answer != cleaned.word else None,
        exclusion_reason=cleaned.reason,
        origin=origin,
        meta=meta or {},
    )


async def machine_associations(
    model: Generator,
    cues: Sequence[str],
    *,
    seed: int = 0,
    examples: Sequence[tuple[str, str]] = (),
    attempts: int = DEFAULT_ATTEMPTS,
) -> list[SingleResponse]:
    """One association per cue, asked concurrently (the model's own limit applies),
    returned in the order of ``cues``."""
    return await all_at_once(
        [
            partial(associate, model, cue, seed=seed, examples=examples, attempts=attempts)
            for cue in cues
        ]
    )


def read_human_associations(
    path: str | Path, cues: Sequence[str] | None = None
) -> list[SingleResponse]:
    """Human associations from a CSV file with columns ``cue`` and ``association``
    (optional: ``participant``), post-processed as machine ones are.

    With ``cues``, a row whose cue is not among them is an :class:`InputError` naming its
    line (a typo would otherwise make an item no machine answered).
    """
    known = {letters_only(cue) for cue in cues} if cues is not None else None
    records = []
    for line, row in csv_rows(path, ("cue", "association"), ("participant",)):
        cue = letters_only(row["cue"])
        if not cue:
            raise InputError(f"{row['cue']!r} is not a word.", path=path, line=line, field="cue")
        if known is not None and cue not in known:
            raise InputError(
                f"{row['cue']!r} is not one of the study's cues.",
                path=path,
                line=line,
                field="cue",
                hint="Check the spelling, or pass the cue list the answers were given to.",
            )
        participant = row.get("participant", "")
        records.append(
            association_record(
                cue,
                row["association"],
                truth="human",
                agent=participant,
                origin=f"{Path(path).name}:{line}",
                salt=f"{path}:{line}",
            )
        )
    return records
