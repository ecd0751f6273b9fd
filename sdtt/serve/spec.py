"""The study spec of ``sdtt serve``: a TOML file with the texts participants see, the
lobby rules, the chat limits and the conditions assigned to rooms.

Conditions are the product of the lists under ``[conditions]`` (model × persona ×
pseudo-dialogue × delay preset); the matchmaker keeps the number of rooms per condition
balanced.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.store import validate_record
from sdtt.engine.opening import pseudo_path
from sdtt.engine.schedule import PresetName
from sdtt.errors import InputError
from sdtt.files import load_settings_file
from sdtt.serve.lease import LEASE

SPEC_HINT = "See the 'sdtt serve' section of the README for the study spec format."
STUDY_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

StudyMode = Literal["two-party", "three-party", "market"]
MakerName = Literal["turing-trade", "lmsr"]
OnTimeout = Literal["bot", "end"]
Outcome = Literal[
    "finished",
    "timeout",
    "partner_left",
    "partner_error",
    "server_error",
    "ended",
    "restart",
    "server_lost",
]
"""Why a participant is done (their completion page explains it; ``declined`` gets no
code)."""
PointsFor = Literal[Outcome, "correct_verdict"]
"""What earns points: how a chat ended for a participant, or a right verdict."""
_HUMAN: list[PresetName] = ["human"]
"""The bot's delays unless a study names others: how people reply (the ``human`` preset)."""
Device = Literal["desktop", "tablet", "mobile"]
_DESKTOP: list[Device] = ["desktop"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Question(_Section):
    """One question asked on the verdict page after "why?"."""

    id: str = Field(pattern=r"^[a-z0-9_]{1,40}$", description="Key of the answer in the export.")
    text: str = Field(min_length=1, description="The question as shown.")
    options: list[str] = Field(
        default_factory=list, description="Choices to pick one of ([]: a free-text answer)."
    )
    required: bool = False


class StudySection(_Section):
    """What the study is and what participants read."""

    name: str = Field(description="Short name used in the study link /s/<name>.")
    title: str = "A chat study"
    mode: StudyMode = Field(
        default="two-party",
        description="'two-party': one witness per room; 'three-party': a person and the bot "
        "side by side; 'market': several bettors question the bot and trade on it.",
    )
    own_person: bool = Field(
        default=False,
        description="Human witnesses are only the real person behind the persona, who joins "
        "by the private link the server prints.",
    )
    turns: int = Field(default=5, ge=1, description="X: live burst turns per chat.")
    rounds: int = Field(
        default=1,
        ge=1,
        le=20,
        description="Chats per participant (two- and three-party); paired with a person, "
        "whoever interrogated last is the witness next.",
    )
    human_witness_share: float = Field(
        default=0.0, ge=0, le=1, description="Share of rooms whose witness is a person."
    )
    consent: str = Field(min_length=1, description="Consent text shown first.")
    instructions: str = Field(min_length=1, description="Instructions for the interrogator.")
    witness_instructions: str = Field(
        default="Chat naturally and try to convince your partner that you are human.",
        description="Instructions for a human witness.",
    )
    completion_code: str = Field(min_length=1, description="Shown at the end (or in the URL).")
    completion_url: str | None = Field(
        default=None, description="Where participants are sent at the end (e.g. Prolific's)."
    )
    completion_codes: dict[Outcome, str] = Field(
        default_factory=dict,
        description="A different completion code per outcome (e.g. timeout, partner_left); "
        "outcomes not listed get completion_code.",
    )
    points: dict[PointsFor, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict,
        description="Points per chat by how it ended (finished, partner_left...), for a "
        "lobby wait that found no partner (timeout) and per right verdict "
        "(correct_verdict); summed over rounds, shown on the done page and exported.",
    )
    platform_study_id: str | None = Field(
        default=None,
        description="The platform's study id (Prolific's STUDY_ID): links that carry a "
        "different one are refused.",
    )
    belief_slider: bool = Field(default=False, description="Show the belief slider.")
    feedback: bool = Field(
        default=False,
        description="Tell the interrogator on the done page whether their verdict was right.",
    )
    questions: list[Question] = Field(
        default_factory=list,
        description="Questions asked with the verdict (demographics, AI familiarity, "
        "strategy...); answers are recorded with the verdict.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not STUDY_NAME.match(value):
            raise ValueError("use lower-case letters, digits and '-' (at most 63)")
        return value

    @field_validator("completion_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// or http://")
        return value


class LobbySection(_Section):
    """How long a participant waits for a room, and what happens then."""

    timeout: float = Field(
        default=105.0,
        gt=0,
        description="Mean seconds a participant waits for a human partner (Jones & Bergen: "
        "5 + 100).",
    )
    timeout_sd: float = Field(
        default=7.0,
        ge=0,
        description="Standard deviation of each participant's timeout (a normal draw), so "
        "the wait before a timed-out bot room is no fixed tell.",
    )
    match_waits: int = Field(
        default=5,
        ge=0,
        description="A bot room opens after the lobby wait of one of this many last human "
        "rooms, drawn at random (0: at once), so the wait never tells the bot apart.",
    )
    on_timeout: OnTimeout = Field(
        default="bot",
        description="'bot': chat with the bot after all; 'end': finish with the completion code.",
    )


class ChatSection(_Section):
    """Limits and engine settings of every chat."""

    t1: float = Field(default=3.0, ge=0)
    max_messages: int = Field(default=5, ge=1)
    max_chars: int = Field(default=500, ge=1, le=10_000)
    min_interval: float = Field(
        default=0.3, ge=0, description="Seconds a participant must leave between messages."
    )
    model_errors: int = Field(
        default=2, ge=1, description="Failed model calls in a row after which a room ends."
    )
    block_paste: bool = Field(
        default=True, description="Refuse pasting into the message box (participants type)."
    )
    blocked_words: list[str] = Field(
        default_factory=list,
        description="A message containing one of these words (any case) is refused and "
        "the attempt recorded (message_moderated).",
    )
    dropout_grace: float = Field(
        default=20.0,
        gt=0,
        description="Seconds a participant's browser may stay away (a reload, a lost "
        "connection) before they count as gone: their partner's chat ends, with the code.",
    )
    time_limit: float = Field(
        default=300.0,
        ge=0,
        description="Seconds a chat may last at most (shown as a clock); then the "
        "interrogator gives the verdict. 0: no limit.",
    )
    seed: int = 0
    speed: float = Field(
        default=1.0,
        ge=1,
        le=100,
        description="Run the study's clock this many times faster than real time (delays, "
        "lobby timeout): for trying a study out and for tests; 1 for participants.",
    )


class ConditionsSection(_Section):
    """The lists whose product is the set of conditions."""

    models: list[str] = Field(min_length=1)
    personas: list[str] = Field(min_length=1)
    pseudo: list[str] = Field(
        default_factory=lambda: [""],
        description="Pseudo-dialogue chain files ('' for none), relative to the spec.",
    )
    delays: list[PresetName] = Field(default_factory=lambda: list(_HUMAN))


class MarketSection(_Section):
    """A Turing Trade market game (``mode = "market"``)."""

    bettors: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Bettors per game (the paper's 3); fewer play once the first has "
        "waited the lobby timeout.",
    )
    seconds: float = Field(
        default=120.0,
        ge=0,
        description="How long a game lasts, shown as a clock (the paper's two minutes; 0: "
        "until every bettor is done buying). Replaces [chat] time_limit in a market.",
    )
    end_at_turns: bool = Field(
        default=False,
        description="Also end a game once the target answered X questions (study.turns); "
        "the paper's games end only by the clock or with every bettor done buying.",
    )
    maker: MakerName = Field(
        default="turing-trade",
        description="'turing-trade': the price moves one point per security; 'lmsr': "
        "Hanson's logarithmic market scoring rule with liquidity b.",
    )
    liquidity: float = Field(default=20.0, gt=0, description="LMSR's b, in securities.")
    start_points: float = Field(default=1000.0, gt=0, description="Points of a new bettor.")
    games: int = Field(
        default=1, ge=1, le=20, description="Games per participant (points carry over)."
    )
    max_trade: int = Field(default=20, ge=1, description="Most securities in one trade.")
    target_points: float = Field(
        default=0.0,
        ge=0,
        description="A person target's reward: this many points times the final price of "
        "human over 100 (how sure the bettors ended that it is a person), stored as the "
        "event target_reward and shown to the target at the end; 0: none. The paper "
        "rewards the target by the bettors' bets without giving a formula.",
    )
    reveal_seconds: float = Field(
        default=60.0,
        ge=0,
        description="Seconds a bettor with games left may read a game's reveal before "
        "the lobby counts them for the next game; pressing Continue counts them at once.",
    )
    advantage: float = Field(
        default=5.0,
        ge=0,
        description="Seconds the bettor who asked sees each answer before the other "
        "bettors do (the paper's 5; 0: all at once).",
    )


class ModerationSection(_Section):
    """An OpenAI-compatible moderation endpoint that checks participants' messages
    (``POST {base_url}/moderations``); see :mod:`sdtt.serve.moderation`."""

    base_url: str = Field(
        default="",
        description="The endpoint's base URL, e.g. https://api.openai.com/v1 ('': no "
        "endpoint, only blocked_words).",
    )
    model: str = Field(default="omni-moderation-latest", min_length=1)
    api_key_env: str = Field(
        default="",
        description="NAME of the environment variable that holds the endpoint's key (never "
        "the key itself); '': send no key (a local server).",
    )
    time_limit: float = Field(
        default=2.0,
        gt=0,
        le=30,
        description="Seconds the endpoint may take; then the message is delivered and "
        "moderation_unavailable recorded.",
    )

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// or http://")
        return value.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _key_env(cls, value: str) -> str:
        # The value is never echoed: whoever pasted the key here must not see it in a log.
        if value and not ENV_NAME.match(value):
            raise ValueError(
                "name the environment variable that holds the key (like "
                "OPENAI_MODERATION_KEY), not the key itself"
            )
        return value


class ProlificFilter(_Section):
    """One of Prolific's eligibility filters (``GET /api/v1/filters/`` lists them)."""

    filter_id: str = Field(min_length=1, description="e.g. 'current-country-of-residence'.")
    selected_values: list[str] = Field(
        default_factory=list, description="The choices a select filter keeps (their ids)."
    )
    selected_range: dict[str, float] = Field(
        default_factory=dict, description="A range filter's bounds: {lower = 18, upper = 65}."
    )


Mismatch = Literal["no_record", "not_done", "other_session", "wrong_code"]
"""Why a submission does not agree with the server's record (``sdtt prolific review``):
the server has no record of the participant, has them not done, in another session, or
gave them another code than the one they entered."""
RejectionCategory = Literal[
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
]
"""The ``rejection_category`` values Prolific's submission transition takes."""
REJECTION_MESSAGE_CHARS = 100
"""Prolific refuses a rejection whose message to the participant is shorter."""
ReviewKey = Literal[Mismatch, Outcome]


class ReviewRule(_Section):
    """What ``sdtt prolific review`` does with the submissions one mismatch or one
    outcome covers: approve, reject (with Prolific's category and a message to the
    participant), ask the participant to return it, or leave it to the researcher."""

    action: Literal["approve", "reject", "return", "manual"]
    category: RejectionCategory | None = Field(
        default=None, description="Prolific's rejection_category (action = 'reject')."
    )
    message: str = Field(
        default="",
        description=f"What the participant reads (action = 'reject'; at least "
        f"{REJECTION_MESSAGE_CHARS} characters, as Prolific requires).",
    )
    reasons: list[str] = Field(
        default_factory=list,
        description="Why they are asked to return it (action = 'return'), e.g. "
        '"Didn\'t finish the study".',
    )

    @model_validator(mode="after")
    def _fits_the_action(self) -> ReviewRule:
        if self.action == "reject":
            if self.category is None:
                raise ValueError(
                    "action 'reject' needs category (Prolific's rejection category, "
                    "e.g. 'BAD_CODE')"
                )
            if len(self.message.strip()) < REJECTION_MESSAGE_CHARS:
                raise ValueError(
                    f"action 'reject' needs a message of at least {REJECTION_MESSAGE_CHARS} "
                    f"characters for the participant (this one has {len(self.message.strip())})"
                )
        elif self.category is not None or self.message:
            raise ValueError("category and message go with action 'reject' only")
        if self.action == "return":
            if not [r for r in self.reasons if r.strip()]:
                raise ValueError(
                    "action 'return' needs reasons, e.g. [\"Didn't finish the study\"]"
                )
        elif self.reasons:
            raise ValueError("reasons go with action 'return' only")
        return self


class ProlificSection(_Section):
    """The study's listing on Prolific, used by ``sdtt prolific`` (see
    :mod:`sdtt.serve.prolific`); ``sdtt serve`` itself ignores it."""

    title: str = Field(default="", description="The public title ('': [study] title).")
    description: str = Field(min_length=1, description="What participants read on Prolific.")
    reward: int = Field(
        ge=1,
        description="Pay per participant in the workspace's minor "
        "currency unit (pence or cents), as Prolific takes it.",
    )
    estimated_minutes: int = Field(ge=1, le=600, description="Minutes the study takes.")
    places: int = Field(ge=1, description="Participants to recruit (total_available_places).")
    project: str = Field(min_length=1, description="The Prolific project id the study goes in.")
    filters: list[ProlificFilter] = Field(default_factory=list)
    devices: list[Device] = Field(default_factory=lambda: list(_DESKTOP), min_length=1)
    bonus_per_point: float = Field(
        default=0.0,
        ge=0,
        le=100,
        description="Bonus per point of [study.points], in the workspace's currency (e.g. "
        "0.10 for 10p a point); sdtt prolific bonus pays it.",
    )
    token_env: str = Field(
        default="PROLIFIC_TOKEN",
        description="NAME of the environment variable holding the API token (never the token).",
    )
    api_url: str = Field(default="https://api.prolific.com", description="The API's address.")
    review: dict[ReviewKey, ReviewRule] = Field(
        default_factory=dict,
        description="What sdtt prolific review does beyond approving submissions that "
        "agree with the server: per mismatch (no_record, not_done, other_session, "
        "wrong_code) or per outcome of an agreeing one. Unnamed mismatches are left to "
        "you; unnamed outcomes are approved.",
    )

    @field_validator("token_env")
    @classmethod
    def _token_env(cls, value: str) -> str:
        # The value is never echoed: whoever pasted the token here must not see it in a log.
        if not ENV_NAME.match(value):
            raise ValueError(
                "name the environment variable that holds the token (like PROLIFIC_TOKEN), "
                "not the token itself"
            )
        return value

    @field_validator("api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// or http://")
        return value.rstrip("/")

    @field_validator("review")
    @classmethod
    def _review(cls, value: dict[str, ReviewRule]) -> dict[str, ReviewRule]:
        for key, rule in value.items():
            if key in get_args(Mismatch) and rule.action == "approve":
                raise ValueError(
                    f"{key}: a submission that disagrees with the server is never approved "
                    "by a rule (use reject, return or manual)"
                )
        return value


class StorageSection(_Section):
    """Where the study is kept."""

    path: str = Field(
        default="", description="SQLite file, relative to the spec (default <name>.sqlite3)."
    )
    url: str = Field(
        default="",
        description="A postgresql:// URL instead of the SQLite file, so several server "
        "processes can share the study.",
    )
    lease: float = Field(
        default=LEASE,
        gt=0,
        description="With a url: seconds a server process may go silent before the "
        "others take it for dead and end its rooms (reason server_lost).",
    )

    @field_validator("url")
    @classmethod
    def _postgres(cls, value: str) -> str:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a postgresql:// URL (or empty for the SQLite file)")
        return value


class StudySpec(_Section):
    """A whole study spec (see the README's ``sdtt serve`` section)."""

    study: StudySection
    lobby: LobbySection = LobbySection()
    chat: ChatSection = ChatSection()
    conditions: ConditionsSection
    storage: StorageSection = StorageSection()
    market: MarketSection = MarketSection()
    moderation: ModerationSection = ModerationSection()
    prolific: ProlificSection | None = None

    @property
    def time_limit(self) -> float:
        """Seconds a chat lasts at most (a market game's length; 0: no limit)."""
        return self.market.seconds if self.study.mode == "market" else self.chat.time_limit

    @model_validator(mode="after")
    def _duplicates(self) -> StudySpec:
        for name in ("models", "personas", "pseudo", "delays"):
            values = getattr(self.conditions, name)
            if len(set(values)) != len(values):
                raise ValueError(f"conditions.{name} lists a value twice")
        ids = [q.id for q in self.study.questions]
        if len(set(ids)) != len(ids):
            raise ValueError("study.questions uses an id twice")
        if self.study.mode == "market" and self.study.rounds > 1:
            raise ValueError("a market study plays several games with [market] games, not rounds")
        if self.study.mode == "market" and self.study.points:
            raise ValueError("a market pays in its own points ([market]): leave study.points out")
        return self


@dataclass(frozen=True)
class Study:
    """A checked spec with the folder it was read from."""

    spec: StudySpec
    folder: Path
    path: Path

    @property
    def name(self) -> str:
        """The study's short name."""
        return self.spec.study.name

    @property
    def conditions(self) -> list[Condition]:
        """Every condition, in a stable order (``index`` numbers them). A pseudo-dialogue
        path is relative to the spec's folder; N is counted when a room opens the bot."""
        c = self.spec.conditions
        cells = itertools.product(c.models, c.personas, c.pseudo, c.delays)
        return [
            Condition(
                index=i,
                model=m,
                persona=p,
                pseudo=s or None,
                delays=d,
                mode="burst",
                live_turns=self.spec.study.turns,
                seed=self.spec.chat.seed,
                interrogator="human",
            )
            for i, (m, p, s, d) in enumerate(cells)
        ]

    def pseudo_path(self, condition: Condition) -> Path | None:
        """The pseudo-dialogue file of ``condition``, resolved against the spec's folder."""
        return pseudo_path(condition, self.folder)

    @property
    def store_path(self) -> Path:
        """The SQLite file of the study."""
        given = self.spec.storage.path
        return self.folder / (given or f"{self.name}.sqlite3")


def read_study(path: str | Path) -> Study:
    """Read and check a study spec; problems are :class:`InputError` naming the field."""
    path = Path(path)
    data = load_settings_file(path, what="study spec", toml_hint=SPEC_HINT)
    if not isinstance(data, dict):
        raise InputError("must hold a table of settings.", path=path, hint=SPEC_HINT)
    try:
        spec = validate_record(StudySpec, data, path, hint=SPEC_HINT)
    except InputError as error:
        if error.field is None or path.suffix.lower() == ".json":
            raise
        line = _toml_line(path.read_text(encoding="utf-8-sig"), error.field)
        raise InputError(
            error.problem, path=path, line=line, field=error.field, hint=error.hint
        ) from None
    study = Study(spec=spec, folder=path.resolve().parent, path=path)
    for condition in study.conditions:
        pseudo = study.pseudo_path(condition)
        if pseudo is not None and not pseudo.is_file():
            raise InputError(
                f"pseudo-dialogue file {condition.pseudo!r} not found.",
                path=path,
                field="conditions.pseudo",
                hint="Paths are relative to the spec's folder.",
            )
    return study


def spec_line(path: Path, field: str) -> int | None:
    """The line of ``field`` (``section.key``) in the spec file ``path`` (None in JSON)."""
    if path.suffix.lower() == ".json":
        return None
    return _toml_line(path.read_text(encoding="utf-8-sig"), field)


def _toml_line(text: str, field: str) -> int | None:
    """The line of ``field`` in a TOML text (``section.key``, or ``section.table.key``
    under ``[section.table]``), or of the table it belongs in."""
    parts = field.split(".")
    table_line = None
    for cut in range(len(parts), 0, -1):  # the longest table name first
        key = parts[cut] if cut < len(parts) else None
        key_line, line = _key_line(text, ".".join(parts[:cut]), key)
        if key_line is not None:
            return key_line
        table_line = table_line or line
    return table_line


def _key_line(text: str, section: str, key: str | None) -> tuple[int | None, int | None]:
    """The line of ``key`` under the TOML table ``[section]``, and the table's line."""
    section_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            if section_line is not None:
                break
            if stripped.strip("[] ") == section:
                section_line = number
        elif section_line is not None and key and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number, section_line
    return None, section_line
