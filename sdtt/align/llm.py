"""LLM judges as simulated participants of a rating task.

A cohort is ``n`` participants of one model under one set of hyperparameters (sampling
temperature and a named prompt variant); each participant has its own seed, so with a
temperature above zero they answer like different people would, and its own shuffled
order of trials. As in Ogg et al. (after Aher et al.), participants may be given an
identity, a surname and an honorific (8 x 3 = 24 of them), and may rate every pair in
both orders. Each participant reads what a human judge reads (the items' plain text, no
ids or names) and answers with one number. An answer that is not exactly one number on
the scale is asked again (at most ``attempts`` times in all) and then recorded as
missing: a rating is never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial

from sdtt.align.ratings import Rating, RatingKey
from sdtt.align.task import RatingKey as TaskKey
from sdtt.errors import InputError
from sdtt.judges.batched import judge_each
from sdtt.judges.llm import RAW_LIMIT, ask
from sdtt.judges.llm_options import DEFAULT_ATTEMPTS
from sdtt.judges.prompts import chat_text, completion_cue
from sdtt.models.base import GenerateConfig, Generator, Prompt
from sdtt.seeds import derive_seed, seeded_rng
from sdtt.tasks.rating_task import RatingPair, RatingTask

PROMPTS: dict[str, str] = {
    "plain": (
        "You are taking part in a study about text chats. You will read two short pieces "
        "of chat, Excerpt 1 and Excerpt 2, and rate how similar they are."
    ),
    "participant": (
        "Imagine you are an ordinary adult taking part in an online study. You will read "
        "two short pieces of text chat, Excerpt 1 and Excerpt 2. Go with your first "
        "impression, as a person would, and rate how similar they are."
    ),
    "style": (
        "You are taking part in a study about how people write in text chats. You will "
        "read two short pieces of chat, Excerpt 1 and Excerpt 2. Pay attention to the way "
        "they are written (spelling, punctuation, length, tone), not to what they are "
        "about, and rate how similar they are."
    ),
}
"""Named prompt variants (the instructions a participant reads before the items)."""
TEMPERATURES: tuple[float, ...] = (0.01, 0.7, 1.0, 1.5)
"""The temperatures Ogg et al. swept."""
SURNAMES = ("Snyder", "Smalls", "Rodriguez", "Olson", "Nguyen", "Kim", "Jeanbaptiste", "Garcia")
HONORIFICS = ("Ms.", "Mr.", "Dr.")
IDENTITIES: tuple[str, ...] = tuple(f"{h} {s}" for s in SURNAMES for h in HONORIFICS)
"""Ogg et al.'s participant identities: each surname crossed with each honorific."""
ORDERS = ("shown", "both")
"""Each pair as the task shows it, or in both orders (Ogg et al.'s LLM participants)."""
RETRY_NOTE = "Your previous reply could not be read. Reply with one whole number only."
MAX_TOKENS = 8


@dataclass(frozen=True)
class Cohort:
    """One model under one set of hyperparameters, ``participants`` times."""

    model: str
    participants: int = 10
    temperature: float = 1.0
    prompt: str = "plain"
    seed: int = 0
    """Participant i (from 1) samples with :meth:`participant_seed` of it."""
    identities: bool = False
    """Address participant i as :data:`IDENTITIES` [i - 1] (at most 24 participants)."""
    orders: str = "shown"
    """``shown`` or ``both``: see :data:`ORDERS`."""

    def __post_init__(self) -> None:
        if self.participants < 1:
            raise InputError("a cohort needs at least one participant.", field="--participants")
        if self.identities and self.participants > len(IDENTITIES):
            raise InputError(
                f"with identities a cohort has at most {len(IDENTITIES)} participants "
                f"({len(SURNAMES)} surnames x {len(HONORIFICS)} honorifics).",
                field="--participants",
            )
        if self.orders not in ORDERS:
            raise InputError(
                f"unknown order {self.orders!r}.", field="--orders", hint="Use shown or both."
            )
        if self.prompt not in PROMPTS:
            raise InputError(
                f"unknown prompt variant {self.prompt!r}.",
                field="--prompt",
                hint=f"Use one of {', '.join(PROMPTS)}.",
            )
        if not 0 <= self.temperature <= 2:
            raise InputError("temperature must be between 0 and 2.", field="--temperature")

    @property
    def name(self) -> str:
        """The cohort label ratings carry: model and hyperparameters."""
        name = f"{self.model} t={self.temperature:g} prompt={self.prompt}"
        if self.identities:
            name += " identities"
        return name + (" both orders" if self.orders == "both" else "")

    def judge_id(self, participant: int) -> str:
        """Participant ``participant``'s judge id."""
        base = f"llm:{self.model}:t{self.temperature:g}:{self.prompt}:s{self.seed}"
        return base + (":ids" if self.identities else "") + f":p{participant}"

    def identity(self, participant: int) -> str | None:
        """Participant ``participant``'s surname and honorific, with identities."""
        return IDENTITIES[participant - 1] if self.identities else None

    def participant_seed(self, participant: int) -> int:
        """The seed participant ``participant`` samples and shuffles with (the one rule,
        :func:`~sdtt.seeds.derive_seed`)."""
        return derive_seed(self.seed, "participant", participant)

    def trials(self, pairs: Sequence[RatingPair], participant: int) -> list[RatingPair]:
        """The participant's own order of trials: every pair (and with ``both`` orders
        its mirror), shuffled with the participant's seed."""
        shown = list(pairs)
        if self.orders == "both":
            shown += [p.model_copy(update={"first": p.second, "second": p.first}) for p in pairs]
        seeded_rng(self.participant_seed(participant), "trials").shuffle(shown)
        return shown


def rating_task_text(task: RatingTask) -> str:
    """The question and the scale, ending with the answer format the parser reads."""
    return (
        f"{task.question}\n"
        f"Use a scale from {task.scale_min} ({task.min_label}) to {task.scale_max} "
        f"({task.max_label}).\n"
        f"Answer with one whole number from {task.scale_min} to {task.scale_max} only."
    )


def rating_prompt(
    task: RatingTask,
    pair: RatingPair,
    variant: str,
    attempt: int = 1,
    *,
    identity: str | None = None,
) -> Prompt:
    """What a participant reads for one pair (items in ``pair``'s order), addressed by
    ``identity`` when given."""
    first, second = task.item(pair.first), task.item(pair.second)
    dialogue = f"Excerpt 1:\n{chat_text(first.lines)}\n\nExcerpt 2:\n{chat_text(second.lines)}"
    question = rating_task_text(task)
    if attempt > 1:
        question = f"{question}\n\n{RETRY_NOTE}"
    instructions = PROMPTS[variant]
    if identity is not None:
        instructions = f"You are {identity}. {instructions}"
    return Prompt(
        instructions=instructions,
        dialogue=dialogue,
        task=question,
        continue_with=completion_cue(question),
    )


_ANSWER = re.compile(
    r"^(?:(?:rating|answer|score)\s*[:=]?\s*)?\**\s*(?P<value>-?\d+)\s*\**"
    r"\s*(?:(?:/|out of)\s*(?P<of>\d+))?\s*[.!]?$"
)


def parse_rating(text: str, low: int, high: int) -> int | None:
    """The rating in a reply that is just one number on the scale, else None.

    ``"5"``, ``"Rating: 5"``, ``"**5**"``, ``"5/7"`` read as 5; ``"5 or 6"``, ``"5.5"``,
    ``"five"``, ``"9"`` on a 1-7 scale, ``"5/10"`` and any sentence read as nothing.
    """
    match = _ANSWER.match(text.strip().casefold())
    if match is None:
        return None
    if match.group("of") is not None and int(match.group("of")) != high:
        return None
    value = int(match.group("value"))
    return value if low <= value <= high else None


async def rate_pair(
    model: Generator,
    task: RatingTask,
    task_key: TaskKey,
    pair: RatingPair,
    cohort: Cohort,
    participant: int,
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    trial: int | None = None,
) -> Rating:
    """One participant's rating of one pair, items in ``pair``'s order (a missing rating
    when none could be read); ``trial`` is its place in the participant's order."""
    seed = cohort.participant_seed(participant)
    config = GenerateConfig(max_tokens=MAX_TOKENS, temperature=cohort.temperature, seed=seed)

    def parse(text: str) -> str | None:
        value = parse_rating(text, task.scale_min, task.scale_max)
        return None if value is None else str(value)

    asked = await ask(
        model,
        partial(rating_prompt, task, pair, cohort.prompt, identity=cohort.identity(participant)),
        parse,
        attempts=attempts,
        config=config,
    )
    reason = None
    rater: dict[str, object] = {
        "temperature": cohort.temperature,
        "prompt": cohort.prompt,
        "seed": seed,
        "participant": participant,
    }
    if cohort.identities:
        rater["identity"] = cohort.identity(participant)
    if trial is not None:
        rater["trial"] = trial
    if asked.error is not None:
        reason = f"model_error: {asked.error}"
    elif asked.answer is None:
        reason = f"non_compliant: no rating on the scale in {attempts} attempt(s)"
        rater["raw_answers"] = [text[:RAW_LIMIT] for text in asked.raw]
    return Rating(
        task=task_key.task,
        task_id=task.id,
        judge_id=cohort.judge_id(participant),
        judge_type="llm",
        judge_model=model.name,
        cohort=cohort.name,
        pair_id=pair.id,
        first=pair.first,
        second=pair.second,
        rating=None if asked.answer is None else int(asked.answer),
        scale_min=task.scale_min,
        scale_max=task.scale_max,
        excluded=reason is not None,
        exclusion_reason=reason,
        source=f"llm:{model.name}",
        rater=rater,
    )


async def run_cohort(
    model: Generator,
    task: RatingTask,
    task_key: TaskKey,
    cohort: Cohort,
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 4,
    settled: Collection[RatingKey] = (),
    on_rating: Callable[[Rating], None] | None = None,
    on_done: Callable[[int, int], None] | None = None,
) -> list[Rating]:
    """Every participant of ``cohort`` rates every pair (in both orders, with ``both``)
    not in ``settled`` yet, in the participant's own shuffled order.

    ``on_rating`` receives each rating as soon as it is made (to write it at once);
    ``on_done(done, total)`` follows progress. Records come back participant by
    participant, each in its order of trials.
    """
    if attempts < 1:
        raise InputError("attempts must be at least 1.", field="--attempts")
    todo = [
        (participant, trial, pair)
        for participant in range(1, cohort.participants + 1)
        for trial, pair in enumerate(cohort.trials(task.pairs, participant), start=1)
        if (task.id, cohort.judge_id(participant), pair.id, pair.first) not in settled
    ]
    results: dict[tuple[int, int], Rating] = {}

    async def one(todo_item: tuple[int, int, RatingPair]) -> None:
        participant, trial, pair = todo_item
        rating = await rate_pair(
            model, task, task_key, pair, cohort, participant, attempts=attempts, trial=trial
        )
        results[(participant, trial)] = rating
        if on_rating is not None:
            on_rating(rating)
        if on_done is not None:
            on_done(len(results), len(todo))

    await judge_each(todo, one, concurrency=concurrency)
    return [results[(participant, trial)] for participant, trial, _ in todo]
