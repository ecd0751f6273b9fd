"""``sdtt simulate``: a live burst (or ping-pong) chat between the persona bot and a
simulated interrogator, run by the burst engine, saved under ``transcripts/``."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

import trio
from rich.console import Console

from sdtt.commands.common import EXIT_NOTHING_USABLE, check_base_url
from sdtt.commands.console import CliConsole
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Message
from sdtt.dialogue.pingpong import convert_to_pingpong, has_runs
from sdtt.dialogue.render import format_time
from sdtt.display import SIDE_STYLES, terminal_text
from sdtt.engine.events import (
    ErrorEvent,
    Event,
    MessageDropped,
    MessageSent,
    TeeSink,
    UserMessage,
)
from sdtt.engine.interrogator import (
    SCRIPT_INTERROGATOR,
    ScriptExhaustedError,
    ScriptInterrogator,
    interrogator_config,
    llm_interrogator,
    read_script,
)
from sdtt.engine.opening import (
    BOT_CONFIG,
    Options,
    interrogator_session,
    open_model,
    role_seed,
    simulate_condition,
)
from sdtt.engine.session import Replier, new_session_id
from sdtt.engine.simulate import (
    INTERROGATOR,
    SimulationResult,
    for_virtual_clock,
    run_on_virtual_clock,
)
from sdtt.errors import ConfigError, OutOfCharacterError
from sdtt.files import output_folder
from sdtt.generate.chainfile import count_pseudo_turns, load_pseudo_messages
from sdtt.models.base import GenerateConfig
from sdtt.models.model import Model, get_model
from sdtt.models.registry import (
    DEFAULT_MODEL,
    base_url_for,
    provider_of,
    provider_status,
    split_name,
)
from sdtt.personas.budget import PromptPlan, plan_prompt
from sdtt.personas.persona import Persona
from sdtt.personas.store import find_persona
from sdtt.questionnaires.pairing_topics import in_pool, live_topic
from sdtt.redact import shown


class ConsoleSink:
    """Prints the chat as it happens: messages, dropped messages and errors."""

    def __init__(
        self,
        console: Console,
        *,
        bot_label: str = "Bot",
        user_label: str = "Interrogator",
        errors_of: str | None = None,
    ) -> None:
        self.console = console
        self.errors_of = errors_of
        """When set, print only this side's errors, naming it."""
        self.labels = {"user": user_label, "response": bot_label}
        self.width = max(len(user_label), len(bot_label))

    def emit(self, event: Event) -> None:
        """Print the events a reader cares about."""
        if self.errors_of is not None:
            if isinstance(event, ErrorEvent) and event.kind != ScriptExhaustedError.__name__:
                self.console.print(
                    f"[yellow]{self.errors_of} error ({event.kind}): "
                    f"{terminal_text(event.message)}[/]"
                )
            return
        if isinstance(event, UserMessage | MessageSent):
            side = "user" if isinstance(event, UserMessage) else "response"
            label = self.labels[side].ljust(self.width)
            self.console.print(
                f"[dim]{format_time(event.time)} {event.clock:7.1f}s[/] "
                f"[{SIDE_STYLES[side]}]{terminal_text(label)}[/] {terminal_text(event.text)}"
            )
        elif isinstance(event, MessageDropped):
            self.console.print(
                f"[dim]{' ' * 28}(dropped: {terminal_text(event.text)} - "
                f"{terminal_text(event.reason)})[/]"
            )
        elif isinstance(event, ErrorEvent):
            self.console.print(
                f"[yellow]bot error ({event.kind}): {terminal_text(event.message)}[/]"
            )


def start_time(text: str | None) -> datetime:
    """The chat's start from ``--start`` (ISO 8601; UTC unless it has an offset), or now."""
    if text is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        start = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(
            f"--start must be a date and time such as 2025-01-01T12:00, not {text!r}."
        ) from None
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    return start.replace(microsecond=0)


def _session_id(args: argparse.Namespace, started: datetime, inputs: list[object]) -> str:
    """A fresh id; with ``--start``, one that everything shaping the chat decides (so a
    repeated run is byte-identical), numbered on when that transcript is already there."""
    if args.start is None:
        return new_session_id(started)
    script = args.script.read_text(encoding="utf-8") if args.script else None
    # Where the files go and what is printed do not change the chat.
    shaping = sorted(set(vars(args)) - {"func", "out", "quiet"})
    key = repr([vars(args)[name] for name in shaping])
    key += repr([script, *inputs])
    for attempt in itertools.count(1):
        session_id = new_session_id(started, key if attempt == 1 else f"{key}#{attempt}")
        if not (Path(args.out) / f"{session_id}.jsonl").exists():
            return session_id
    raise AssertionError("unreachable")


def default_interrogator(model: str) -> str:
    """Who plays User A without ``--interrogator``: the bot's own model, unless that is
    rule-based (ELIZA), which cannot lead a chat: then :data:`DEFAULT_MODEL`, when it can
    run here; when it cannot (no ``local`` extra), a :class:`ConfigError` naming the flags
    to pass instead."""
    provider = provider_of(model)
    if provider is None or not provider.rule_based:
        return model
    status = provider_status(split_name(DEFAULT_MODEL)[0].name)
    if status.usable:
        return DEFAULT_MODEL
    raise ConfigError(
        f"{model} is rule-based and cannot play User A, and the default interrogator, "
        f"{DEFAULT_MODEL}, cannot run here ({status.reason.rstrip('.')}). Pass "
        "--interrogator MODEL (e.g. openai/gpt-4o-mini, or mock/chatty for a dry run) or "
        "--script FILE, or install the local extra: pip install 'sdtt[local]'."
    )


def _check(args: argparse.Namespace) -> None:
    if args.turns < 1:
        raise ConfigError(f"--turns must be at least 1, not {args.turns}.")
    Options(t1=args.t1, max_messages=args.max_messages).check()
    start_time(args.start)  # a bad --start fails before anything is loaded or written


def _pseudo_messages(
    path: Path | None, mode: str, console: Console, *, drop_meaningless: bool = False
) -> tuple[list[Message], int, dict[str, int]]:
    """The pseudo-dialogue for the prompt (a burst one converted in ping-pong mode), its
    turn count N (none: ``[]``, 0) and what the conversion changed."""
    if path is None:
        return [], 0, {}
    messages = load_pseudo_messages(path)
    pseudo_turns = count_pseudo_turns(path)
    if mode != "pingpong" or not (has_runs(messages) or drop_meaningless):
        return messages, pseudo_turns, {}
    done = convert_to_pingpong(messages, drop_meaningless=drop_meaningless)
    filtered = f", {done.filtered_turns} meaningless turn(s) left out" if drop_meaningless else ""
    what = (
        "is a burst pseudo-dialogue; converted to ping-pong for --mode pingpong (first "
        "message of each run kept)"
        if done.removed_messages
        else "filtered for --drop-meaningless"
    )
    console.print(
        f"[yellow]note:[/] {shown(str(path))} {what}: "
        f"{len(done.messages)} of {len(messages)} messages kept{filtered}."
    )
    report = {
        "pseudo_original_messages": len(messages),
        "pseudo_removed_messages": done.removed_messages,
    }
    if drop_meaningless:
        report["pseudo_filtered_turns"] = done.filtered_turns
    return done.messages, pseudo_turns - done.filtered_turns, report


def _fitting_prompt(
    args: argparse.Namespace,
    persona: Persona,
    pseudo: list[Message],
    config: GenerateConfig,
    console: Console,
) -> PromptPlan:
    """The history and pseudo-dialogue turns that fit ``--context-tokens`` beside the live
    chat and the reply (:func:`~sdtt.personas.budget.plan_prompt`), each cut said."""
    plan = plan_prompt(
        persona,
        pseudo,
        context_tokens=args.context_tokens,
        reply_tokens=config.max_tokens,
        history_turns=args.history_turns,
        mode=args.mode,
    )
    fit = f"to fit a context of {args.context_tokens} tokens (--context-tokens)"
    if plan.history_turns < args.history_turns:
        console.print(
            f"[yellow]note:[/] the persona's history is cut from {args.history_turns} to "
            f"{plan.history_turns} turns {fit}."
        )
    if plan.pseudo_cut:
        console.print(
            f"[yellow]note:[/] the bot's prompt holds the last {plan.pseudo_turns} of the "
            f"pseudo-dialogue's {plan.pseudo_total} turns {fit}; the chat is still recorded "
            "at turn N + X, with the turns its prompt held."
        )
    return plan


class ErrorCollector:
    """An event sink that keeps the model errors' messages, distinct, in order."""

    def __init__(self) -> None:
        self.messages: dict[str, None] = {}
        self.out_of_character = 0
        """Replies left unsent because they broke character (either side)."""

    def emit(self, event: Event) -> None:
        """Keep the message of an error event."""
        if isinstance(event, ErrorEvent):
            self.messages.setdefault(event.message)
            if event.kind == OutOfCharacterError.__name__:
                self.out_of_character += 1


def run(args: argparse.Namespace) -> int:
    """Run ``sdtt simulate`` from parsed arguments; exit 1 when no turn could be answered."""
    _check(args)
    if not args.script and args.interrogator is None:
        args.interrogator = default_interrogator(args.model)
    output_folder(args.out)
    interrogator_model = [] if args.script else [args.interrogator]
    check_base_url(args.base_url, [args.model, *interrogator_model])
    errors = ErrorCollector()
    console = CliConsole(highlight=False)
    persona = find_persona(args.persona)
    pseudo, pseudo_turns, conversion = _pseudo_messages(
        args.pseudo, args.mode, console, drop_meaningless=args.drop_meaningless
    )
    if args.topic is None:
        args.topic = live_topic(args.seed)
        console.print(
            f"[dim]topic (from the chitchat corpus, --seed {args.seed}): {shown(args.topic)}[/]"
        )
    elif not in_pool(args.topic):
        console.print(
            "[yellow]note:[/] no chitchat corpus chat is on this topic, so "
            "'questionnaire build --human corpus' will find nothing to pair this chat with; "
            "pair it with --human FILE, or leave --topic out to get a corpus topic."
        )
    config = BOT_CONFIG
    seen: dict[str, int] = {}
    if args.context_tokens is not None:
        plan = _fitting_prompt(args, persona, pseudo, config, console)
        args.history_turns, pseudo = plan.history_turns, plan.pseudo
        seen = {"history_turns": plan.history_turns}
        if plan.pseudo_cut:
            seen["pseudo_turns_in_prompt"] = plan.pseudo_turns
    started = start_time(args.start)
    interrogator_name = SCRIPT_INTERROGATOR if args.script else args.interrogator
    condition = Condition(
        persona=persona.name,
        model=args.model,
        mode=args.mode,
        pseudo=str(args.pseudo) if args.pseudo else None,
        pseudo_turns=pseudo_turns,
        live_turns=args.turns,
        delays=args.delays,
        seed=args.seed,
        interrogator=interrogator_name,
    )
    options = Options(
        t1=args.t1,
        max_messages=args.max_messages,
        history_turns=args.history_turns,
        virtual_clock=args.virtual_clock,
    )
    interrogator_session_settings = interrogator_session(condition, options)
    max_duration = 60.0 * (args.max_minutes if args.max_minutes is not None else 10 * args.turns)
    meta = {
        "topic": args.topic,
        "pseudo_messages": len(pseudo),
        **conversion,
        **seen,
        "virtual_clock": args.virtual_clock,
    }
    session_id = _session_id(
        args,
        started,
        [condition, meta, options, interrogator_session_settings, pseudo, max_duration],
    )
    console.print(
        f"[bold]sdtt simulate[/] {session_id}: persona [bold]{terminal_text(persona.name)}[/] on "
        f"{terminal_text(args.model)}, interrogator {terminal_text(interrogator_name)}, "
        f"{args.mode}, "
        f"{args.turns} turn(s){', virtual clock' if args.virtual_clock else ''}"
    )

    async def main() -> SimulationResult:
        models: list[Model] = []
        try:
            loading = console.status(f"loading {shown(args.model)}...")
            with nullcontext() if args.quiet else loading:
                bot_model = open_model(
                    condition, base_url=args.base_url, api_key_env=args.api_key_env
                )
                models.append(bot_model)
                interrogator = _interrogator(args, condition, config, models)
            return await simulate_condition(
                condition,
                bot_model,
                interrogator,
                turns=args.turns,
                options=options,
                persona=persona,
                pseudo=pseudo,
                sink=TeeSink(None if args.quiet else ConsoleSink(console), errors),
                interrogator_sink=TeeSink(ConsoleSink(console, errors_of="interrogator"), errors),
                out_dir=args.out,
                session_id=session_id,
                topic=args.topic,
                meta=meta,
                started=started,
                max_duration=max_duration,
            )
        finally:
            for model in models:
                await model.aclose()

    result = run_on_virtual_clock(main) if args.virtual_clock else trio.run(main)
    _summary(console, result, scripted=args.script is not None)
    caught = result.out_of_character
    if any(caught.values()):
        unsent = (
            f"; {errors.out_of_character} repl(ies) broke it in every attempt, so that side "
            "sent nothing that turn (an OutOfCharacterError in the event log)"
            if errors.out_of_character
            else ""
        )
        console.print(
            f"[yellow]note:[/] {caught['bot']} bot and {caught['interrogator']} interrogator "
            "message(s) broke character (repeated the model's instructions or said it is an "
            f"AI): none was sent, each reply was asked again{unsent}. The transcript "
            "records the counts (meta out_of_character), and the report counts them per "
            "condition."
        )
    if result.turns == 0:
        CliConsole(stderr=True, highlight=False).print(
            f"[bold red]error:[/] {_nothing_answered(result, list(errors.messages), args)}"
        )
        return EXIT_NOTHING_USABLE
    return 0


def _nothing_answered(
    result: SimulationResult, messages: Sequence[str], args: argparse.Namespace
) -> str:
    """Why a chat ended with no bot turn answered, and what to change."""
    # A script ends by raising an error of its own: only model errors count here.
    interrogator_failed = result.interrogator_errors and args.script is None
    if result.bot_errors or interrogator_failed:
        causes = " | ".join(messages) or "model errors"
        return (
            "no turn was answered because the model calls failed or their replies broke "
            f"character. {shown(causes)}"
        )
    if result.stopped == "time":
        minutes = result.duration / 60
        if args.virtual_clock:
            # A model's real slowness takes no chat time there: only its thinking times do.
            return (
                f"no turn was answered: the chat's time limit ({minutes:.1f} min) ended it "
                "before the bot replied. Give it more time with --max-minutes."
            )
        return (
            f"no turn was answered: the chat's time limit ({minutes:.1f} min) ended it before "
            "the bot replied (a slow model's call was cut off). Give it more time with "
            "--max-minutes, or a faster model or server."
        )
    return (
        "no turn was answered: neither side wrote again before the chat ended. "
        "Check the transcript; a script needs a first burst, a model a usable reply."
    )


def _interrogator(
    args: argparse.Namespace, condition: Condition, config: GenerateConfig, models: list[Model]
) -> Replier:
    if args.script is not None:
        return ScriptInterrogator(read_script(args.script))
    name = args.interrogator
    model = get_model(
        name,
        config=config,
        seed=role_seed(condition, INTERROGATOR),
        base_url=base_url_for(name, args.base_url),
        api_key_env=args.api_key_env,
    )
    models.append(model)
    return llm_interrogator(
        for_virtual_clock(model) if args.virtual_clock else model,
        topic=args.topic,
        mode=args.mode,
        config=interrogator_config(config),
        seed=role_seed(condition, INTERROGATOR),
    )


def _summary(console: Console, result: SimulationResult, *, scripted: bool) -> None:
    reasons = {
        "turns": "reached the turn count",
        "stalled": "neither side would write again (script used up, or model errors)",
        "time": "hit the time limit",
    }
    usage = result.bot_usage
    console.print(
        f"[bold]{result.turns} turn(s)[/], {len(result.transcript.messages)} messages, "
        f"{result.duration / 60:.1f} min of chat; stopped: {reasons[result.stopped]}."
    )
    # A script signals its end with an error; that is not worth reporting.
    other = "" if scripted else f"; interrogator: {result.interrogator_errors} error(s)"
    console.print(
        f"[dim]bot: {usage.input_tokens} input tokens ({usage.cached_text()}), "
        f"{usage.output_tokens} output tokens, {result.bot_errors} error(s){other}[/]"
    )
    for path in (result.transcript_path, result.log_path):
        if path is not None:
            console.print(f"  {shown(str(path))}")
