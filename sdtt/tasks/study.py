"""The study spec: what a researcher decides before building a questionnaire.

A small TOML (or JSON) file, overridable by command-line flags: which conversations are
paired, how many final turns X judges see, the demographic questions, the strategy
question, catch pairs, the per-pair topic check, the random seed, exclusion thresholds
and Prolific settings. ``questionnaires/example-study.toml`` shows every field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from sdtt.dialogue.store import validate_record
from sdtt.errors import InputError
from sdtt.files import load_settings_file
from sdtt.tasks.rating_spec import RatingSpec

SPEC_VERSION = 1

QuestionName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9]{0,19}$")]
"""A question code every tool accepts: a letter, then letters or digits, at most 20."""

Timestamps = Literal["hidden", "relative", "time", "datetime"]
TIMESTAMPS: tuple[Timestamps, ...] = ("hidden", "relative", "time", "datetime")

RESERVED_NAMES = frozenset({"strategy", "intro", "about", "final", "pairs", "demographics"})

TOPIC_SENTENCE = "Then answer a short question about what the chats were about. "
DEFAULT_INTRO = (
    "You will read pairs of text chats. In every chat, User A is a person. In one chat "
    "of each pair, User B is also a person; in the other, User B is an AI system writing "
    "as if it were a person. Read both chats of a pair and decide in which one User B "
    "is the AI. " + TOPIC_SENTENCE + "Take your time; there is no time limit."
)

SIMULATED_INTRO = (
    "You will read pairs of text chats. User A is not always a person: in some chats of "
    "this study a computer program plays User A. In one chat of each pair, User B is a "
    "person; in the other, User B is an AI system writing as if it were a person. Read "
    "both chats of a pair and decide in which one User B is the AI. "
    + TOPIC_SENTENCE
    + "Take your time; there is no time limit."
)
"""The default instructions when a program plays User A in some chat of the study."""

DEFAULT_STRATEGY = (
    "How did you decide which User B was the AI? Describe what you paid attention to."
)

DEFAULT_END = "Thank you for taking part. Your answers have been recorded."


class DemographicSpec(BaseModel):
    """One anonymous demographic question: a list of choices, or free text."""

    model_config = ConfigDict(extra="forbid")

    name: QuestionName = Field(description="Question code (letters and digits).")
    text: str = Field(min_length=1, description="The question as judges read it.")
    choices: list[str] | None = Field(
        default=None, description="Answer options; leave out for a free-text answer."
    )
    required: bool = Field(default=True, description="Whether judges must answer.")


DEFAULT_DEMOGRAPHICS: tuple[DemographicSpec, ...] = (
    DemographicSpec(
        name="age",
        text="How old are you?",
        choices=["18-24", "25-34", "35-44", "45-54", "55-64", "65 or older", "Prefer not to say"],
    ),
    DemographicSpec(
        name="gender",
        text="What is your gender?",
        choices=["Woman", "Man", "Non-binary", "Another gender", "Prefer not to say"],
    ),
    DemographicSpec(
        name="education",
        text="What is the highest level of education you have completed?",
        choices=[
            "Secondary school or less",
            "Vocational training",
            "Bachelor's degree",
            "Master's degree",
            "Doctorate",
            "Prefer not to say",
        ],
    ),
    DemographicSpec(name="language", text="What is your native language?"),
    DemographicSpec(
        name="aiuse",
        text="How often do you use AI chat assistants?",
        choices=[
            "Never",
            "Less than once a month",
            "A few times a month",
            "A few times a week",
            "Daily",
        ],
    ),
)


class PairSpec(BaseModel):
    """Which conversations to compare.

    ``bot`` names a transcript file (every conversation in it is used) or one
    conversation in it as ``file#id``. ``human`` is ``"corpus"`` (a real conversation on
    the same topic from the chitchat corpus), ``"persona"`` (one of the imitated person's
    own chats that its persona holds out of every prompt, on the topic where topics
    allow), a file (a conversation on the same topic is picked from it) or ``file#id``.
    Relative paths are relative to the spec file.
    """

    model_config = ConfigDict(extra="forbid")

    bot: str = Field(min_length=1)
    human: str = Field(default="corpus", min_length=1)


class QualitySpec(BaseModel):
    """When a judge's answers are excluded (all of them, with the reason recorded)."""

    model_config = ConfigDict(extra="forbid")

    max_catch_errors: int = Field(
        default=0, ge=0, description="Catch pairs a judge may get wrong or skip."
    )
    max_topic_errors: int = Field(
        default=1, ge=0, description="Topic checks a judge may get wrong or skip."
    )


class ProlificSpec(BaseModel):
    """Prolific integration: capture its URL parameters, send finished judges back."""

    model_config = ConfigDict(extra="forbid")

    capture: bool = Field(
        default=True,
        description="Record PROLIFIC_PID, STUDY_ID and SESSION_ID where the tool can.",
    )
    completion_url: str | None = Field(
        default=None, description="Where to send judges at the end (Prolific's completion URL)."
    )


class DesignSpec(BaseModel):
    """How pairs are split across judges (see :mod:`sdtt.tasks.design`)."""

    model_config = ConfigDict(extra="forbid")

    pairs_per_judge: int | None = Field(
        default=None,
        ge=1,
        description="Test pairs each judge sees (the paper used 5); leave out for every "
        "judge to see every pair. Each pair then goes to the same number of judges, with "
        "the bot's chat first for half of them, and the order balanced.",
    )


class StudySpec(BaseModel):
    """Everything that defines a questionnaire study.

    Which turns a pair shows (its *view*): with ``total_turns``, whole live chats at those
    total turn indices; otherwise the last X turns for each of ``x_turns``. ``chunk_turns``
    adds the first k turns of the same chats for each k.
    """

    model_config = ConfigDict(extra="forbid")

    version: int = SPEC_VERSION
    name: str = Field(
        default="study",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
        description="Researcher-side name (file names, judgement records); judges never see it.",
    )
    title: str = Field(default="Chat study", min_length=1, description="Title judges see.")
    intro: str = Field(default=DEFAULT_INTRO, description="Instructions shown first.")
    end_text: str = Field(default=DEFAULT_END, description="Shown after the last question.")
    seed: int = Field(default=0, description="Seeds ids, positions, order and topic options.")
    x_turns: list[int] = Field(
        default_factory=lambda: [3, 10],
        description=(
            "How many final turns of each conversation judges see (one pair per X). "
            "Ignored when total_turns is set; may be empty when chunk_turns is set."
        ),
    )
    total_turns: list[int] = Field(
        default_factory=list,
        description=(
            "The paper's design: show whole live chats whose total turn index N + X "
            "(pseudo-dialogue turns + live turns) is one of these, e.g. [3, 10, 110]. "
            "Every (model, persona, mode, topic) among the bot conversations needs one at "
            "each total, or the build says which are missing and how to make them."
        ),
    )
    max_live_turns: int = Field(
        default=10,
        ge=1,
        description=(
            "For total_turns: the live turns of the longest live chat; a larger total is "
            "made as (total - this) pseudo turns plus this many live turns."
        ),
    )
    chunk_turns: list[int] = Field(
        default_factory=list,
        description=(
            "Length curves (Zhang/Kreiman): one pair per length k showing the first k "
            "turns of the same chats, e.g. [3, 6, 9, 12, 15, 18, 21, 24]."
        ),
    )
    timestamps: Timestamps = Field(
        default="hidden",
        description=(
            "'hidden' (as in the paper), 'relative' (time since the chat's first shown "
            "line), 'time' (HH:MM:SS) or 'datetime'. With 'time' and 'datetime' both chats "
            "of a pair are moved onto the same made-up day and hour, so real clock times "
            "(a corpus from 2018, bots run tonight) never show which is which."
        ),
    )
    drop_meaningless: bool = Field(
        default=False,
        description="In ping-pong pairs, leave out human turns with an empty or "
        "meaningless message (no letter or digit) after the conversion; counts reported.",
    )
    pairs: list[PairSpec] = Field(default_factory=list)
    catch_pairs: int = Field(default=1, ge=0, description="Pairs with an obvious answer.")
    topic_check: bool = Field(default=True, description="Ask the topic of each pair.")
    topic_options: int = Field(default=4, ge=2, le=8, description="Options of a topic check.")
    demographics: list[DemographicSpec] = Field(
        default_factory=lambda: [spec.model_copy() for spec in DEFAULT_DEMOGRAPHICS]
    )
    strategy_question: str | None = Field(
        default=DEFAULT_STRATEGY, description="Free-text question at the end; empty for none."
    )
    randomise_order: bool = Field(
        default=True,
        description="Shuffle the pair order per judge where the tool can (the built order "
        "is already a seeded shuffle).",
    )
    design: DesignSpec = Field(default_factory=DesignSpec)
    quality: QualitySpec = Field(default_factory=QualitySpec)
    prolific: ProlificSpec = Field(default_factory=ProlificSpec)
    rating: RatingSpec | None = Field(
        default=None,
        description="A pairwise similarity rating task ('sdtt align build'); see sdtt.align.",
    )

    def check(self) -> None:
        """Raise :class:`InputError` for settings that are valid one by one but not together."""
        for name, values in (
            ("x_turns", self.x_turns),
            ("total_turns", self.total_turns),
            ("chunk_turns", self.chunk_turns),
        ):
            if any(x < 1 for x in values):
                raise InputError(f"every value of {name} must be at least 1.", field=name)
            if len(set(values)) != len(values):
                raise InputError(f"a value of {name} is listed twice.", field=name)
        if not (self.x_turns or self.total_turns or self.chunk_turns):
            raise InputError(
                "no turns to show.",
                field="x_turns",
                hint="Give x_turns, total_turns or chunk_turns.",
            )
        names = [spec.name for spec in self.demographics]
        for name in names:
            if names.count(name) > 1:
                raise InputError(f"demographic question name {name!r} is used twice.")
            if name.lower() in RESERVED_NAMES:
                raise InputError(
                    f"demographic question name {name!r} is reserved "
                    f"({', '.join(sorted(RESERVED_NAMES))} are used by sdtt).",
                    field="demographics",
                    hint="Pick another name, e.g. 'age2'.",
                )
        for spec in self.demographics:
            if spec.choices is not None and len(spec.choices) < 2:
                raise InputError(
                    f"demographic question {spec.name!r} needs at least two choices.",
                    field="demographics",
                )


def load_study_spec(path: str | Path) -> StudySpec:
    """Read a study spec from a ``.toml`` or ``.json`` file."""
    path = Path(path)
    data = load_settings_file(path, what="study spec")
    if not isinstance(data, dict):
        raise InputError("must hold a table/object of settings.", path=path)
    version = data.get("version", SPEC_VERSION)
    if not isinstance(version, int) or version > SPEC_VERSION:
        raise InputError(
            f"needs a newer sdtt (spec version {version!r}).", path=path, field="version"
        )
    spec = validate_record(StudySpec, data, path)
    try:
        spec.check()
    except InputError as error:
        raise InputError(error.problem, path=path, field=error.field, hint=error.hint) from None
    return spec
