"""The stages of ``sdtt demo``: what they share (:class:`DemoRun`) and one function per
stage, each printing what it did to the demo's console and writing its files."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import trio
from rich.console import Console

from sdtt.analysis.beliefs import add_to_report
from sdtt.analysis.format import number, percent
from sdtt.analysis.metrics import summarise
from sdtt.analysis.report import build_report, write_report
from sdtt.analysis.table import judgement_table
from sdtt.analysis.tells import TellRow, study_tells
from sdtt.beliefs.traces import BeliefTrace
from sdtt.commands.score_common import print_summary
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.store import read_transcripts, write_transcripts
from sdtt.display import print_conversation, terminal_text, usage_line
from sdtt.engine.interrogator import SCRIPT_INTERROGATOR, ScriptInterrogator
from sdtt.engine.opening import Options, open_bot, open_model, simulate_condition
from sdtt.engine.simulate import DEMO_SCRIPT, DEMO_TOPIC
from sdtt.generate.chain import ChainSettings, resolve_style, usage_of
from sdtt.generate.chainfile import read_chain
from sdtt.generate.runner import ChainProgress, generate_pseudo_dialogue
from sdtt.judges.llm import run_llm_judge
from sdtt.models.base import ModelOutput, Usage
from sdtt.models.model import get_model
from sdtt.personas.budget import plan_prompt
from sdtt.personas.persona import Persona
from sdtt.questionnaires.pipeline import build_demo_questionnaire
from sdtt.redact import shown
from sdtt.seeds import seeded_rng
from sdtt.tasks.judgements import Judgement, write_judgements
from sdtt.tasks.questionnaire import load_key, load_questionnaire

OPENING = ("hey!! how's it going", "did you get up to anything fun this weekend?")
PSEUDO_TOPICS = ("plans for the weekend", "a show or movie you saw lately")
PSEUDO_TURNS = 3
DEMO_HISTORY_TURNS = 30
"""Turns of persona history in every demo prompt: shorter than the default 100, so the
demo stays quick on the embedded model (sdtt simulate and sdtt chat use 100)."""
DEMO_MAX_TOKENS = 400
"""Token cap of a pseudo-dialogue call: three burst turns fit. A small model that never
stops on its own would otherwise write up to 2048 tokens a call, minutes on a CPU."""
DEMO_TIMEOUT = 120.0
"""Seconds per call attempt of the pseudo-dialogue."""
DEMO_REPS = 200
"""Bootstrap replicates in the demo: a handful of judgements needs no more."""


def demo_history_turns(persona: Persona, context_tokens: int) -> int:
    """The most persona history turns (up to the demo's 30) whose prompts fit the context;
    a context too small for the least a bot keeps is refused (:func:`plan_prompt`)."""
    plan = plan_prompt(
        persona,
        (),
        context_tokens=context_tokens,
        reply_tokens=DEMO_MAX_TOKENS,
        history_turns=DEMO_HISTORY_TURNS,
    )
    return plan.history_turns


def slug(text: str) -> str:
    """``text`` reduced to a safe file-name part."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")[:60] or "x"


@dataclass
class DemoRun:
    """What the demo's stages share: settings, the persona, and what has been produced."""

    persona: Persona
    model_name: str
    out: Path
    seed: int
    console: Console
    started: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    outputs: list[ModelOutput] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    base_url: str | None = None
    """Endpoint of an OpenAI- or Anthropic-compatible server for the model, if any."""
    api_key_env: str | None = None
    """Environment variable holding the key for ``base_url``, if any."""
    chat: Transcript | None = None
    """The simulated live chat, which the questionnaire stage compares."""
    pseudo: list[Message] = field(default_factory=list)
    """The self-directed pseudo-dialogue the live chat's bot has in its prompt."""
    pseudo_turns: int = 0
    pseudo_path: Path | None = None
    """The chain file of the pseudo-dialogue, recorded in the live chat's condition."""
    """N: its turn count."""
    history_turns: int = DEMO_HISTORY_TURNS
    """Persona history turns in the prompts (fewer when the context is small)."""

    @property
    def stem(self) -> str:
        """The file-name stem of this persona, model and seed: a rerun finds its files."""
        return f"demo-{slug(self.persona.name)}-{slug(self.model_name)}-s{self.seed}"


async def stage_burst_reply(demo: DemoRun) -> None:
    """Stage 1: the persona bot answers a two-message opening burst."""
    console = demo.console
    console.rule("1. Persona bot: a burst reply")
    path = demo.out / f"{demo.stem}-reply.jsonl"
    if path.exists():
        # A rerun: the reply of the earlier run stands.
        (earlier,) = read_transcripts(path)
        print_conversation(console, earlier.messages, bot_label=demo.persona.name)
        console.print(f"[dim]kept from an earlier run: {shown(str(path))}[/]")
        demo.files.append(path)
        return
    opening = [
        Message(side="user", text=text, time=demo.started + timedelta(seconds=6 * index))
        for index, text in enumerate(OPENING)
    ]
    now = opening[-1].time + timedelta(seconds=2)
    # The bot of every other stage, opened from its condition by the same open_bot.
    condition = Condition(
        persona=demo.persona.name,
        model=demo.model_name,
        pseudo_turns=0,
        live_turns=1,
        seed=demo.seed,
    )
    with console.status(f"loading {shown(demo.model_name)}..."):
        model = open_model(condition, base_url=demo.base_url, api_key_env=demo.api_key_env)
    async with model:
        options = Options(history_turns=demo.history_turns)
        setup = open_bot(condition, model, options=options, persona=demo.persona, pseudo=[])
        with console.status("the persona bot is writing..."):
            reply = await setup.bot.reply(opening, now, seeded_rng(demo.seed, "reply"))
    demo.outputs.extend(reply.outputs)
    transcript = Transcript(
        id=f"{demo.stem}-reply",
        messages=[*opening, *reply.messages],
        condition=setup.condition,
        meta={"stage": "burst-reply"},
    )
    print_conversation(console, transcript.messages, bot_label=demo.persona.name)
    console.print(usage_line(reply.outputs))
    write_transcripts(path, [transcript])
    demo.files.append(path)


class TurnLines:
    """Progress of a pseudo-dialogue as one line per turn written (a local model on a
    slow CPU takes minutes for stage 2: the screen must show that it is moving)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown = -1

    def chain_update(self, progress: ChainProgress) -> None:
        """Say how many turns are written, each time that changes."""
        if progress.turns_done == self.shown or progress.status == "waiting":
            return
        self.shown = progress.turns_done
        self.console.print(
            f"[dim]pseudo-dialogue: {progress.turns_done} of {progress.turns_total} turns "
            f"written ({progress.calls} model call(s), {progress.usage.output_tokens} "
            "output tokens)[/]"
        )


async def stage_pseudo_dialogue(demo: DemoRun) -> None:
    """Stage 2: the model writes a short pseudo-dialogue itself (Algorithm 1), which the
    live chat then continues from."""
    console = demo.console
    console.rule(
        f"2. Self-directed pseudo-dialogue: {len(PSEUDO_TOPICS)} topics x {PSEUDO_TURNS} turns"
    )
    async with get_model(
        demo.model_name, base_url=demo.base_url, api_key_env=demo.api_key_env
    ) as model:
        settings = ChainSettings(
            style=resolve_style("auto", model.name),
            history_turns=demo.history_turns,
            max_tokens=DEMO_MAX_TOKENS,
            timeout=DEMO_TIMEOUT,
        )
        with console.status("the model is writing chats between the persona and a friend..."):
            # Resumes the chain file of an earlier run with the same seed, if any.
            path = await generate_pseudo_dialogue(
                demo.persona,
                model,
                PSEUDO_TOPICS,
                PSEUDO_TURNS,
                seed=demo.seed,
                out=demo.out / f"{demo.stem}-pseudo",
                settings=settings,
                display=TurnLines(console),
            )
    chain = read_chain(path)
    demo.pseudo_path = path
    demo.pseudo = chain.messages
    demo.pseudo_turns = len(chain.turns)
    for topic in PSEUDO_TOPICS:
        console.print(f"[bold]topic:[/] {terminal_text(topic)}")
        turns = [turn for turn in chain.turns if turn.topic == topic]
        messages = [message for turn in turns for message in turn.messages]
        print_conversation(console, messages, user_label="Friend", bot_label=demo.persona.name)
    usage = sum((usage_of(call.usage) for call in chain.calls), Usage())
    console.print(
        f"[dim]{len(chain.calls)} model call(s), {usage.input_tokens} input tokens "
        f"({usage.cached_text()}), {usage.output_tokens} output tokens; "
        "the live chat below has this dialogue in its prompt[/]"
    )
    demo.files.append(path)


async def stage_simulated_chat(demo: DemoRun) -> None:
    """Stage 3: a scripted interrogator chats with the persona bot through the burst
    engine for three turns, on a virtual clock (minutes of chat in seconds)."""
    console = demo.console
    console.rule("3. Burst engine: a simulated live chat (virtual clock)")
    transcript_path = demo.out / f"{demo.stem}-chat.jsonl"
    log_path = demo.out / f"{demo.stem}-chat.events.jsonl"
    if transcript_path.exists() and _closed(log_path):
        # A rerun: the chat of the earlier run stands.
        (demo.chat,) = read_transcripts(transcript_path)
        print_conversation(
            console, demo.chat.messages, user_label="Interrogator", bot_label=demo.persona.name
        )
        console.print(f"[dim]kept from an earlier run: {shown(str(transcript_path))}[/]")
        demo.files.extend((transcript_path, log_path))
        return
    # An interrupted chat cannot be continued exactly: it starts again.
    for partial in (transcript_path, log_path):
        partial.unlink(missing_ok=True)
    # The condition as 'sdtt simulate --script' records it, opened by the same open_bot:
    # the pseudo-dialogue file and its N, the mode, the seed and who played User A.
    condition = Condition(
        persona=demo.persona.name,
        model=demo.model_name,
        pseudo=None if demo.pseudo_path is None else str(demo.pseudo_path),
        pseudo_turns=demo.pseudo_turns,
        live_turns=len(DEMO_SCRIPT),
        seed=demo.seed,
        interrogator=SCRIPT_INTERROGATOR,
    )
    options = Options(history_turns=demo.history_turns, virtual_clock=True)
    async with open_model(condition, base_url=demo.base_url, api_key_env=demo.api_key_env) as model:
        with console.status("the interrogator and the persona bot are chatting..."):
            result = await simulate_condition(
                condition,
                model,
                ScriptInterrogator(DEMO_SCRIPT),
                turns=len(DEMO_SCRIPT),
                options=options,
                persona=demo.persona,
                topic=DEMO_TOPIC,
                out_dir=demo.out,
                session_id=f"{demo.stem}-chat",
                started=demo.started,
            )
    print_conversation(
        console, result.transcript.messages, user_label="Interrogator", bot_label=demo.persona.name
    )
    console.print(
        f"[dim]{result.turns} turn(s), {result.duration:.0f} s of chat time; the event log "
        "replays every message at its exact time[/]"
    )
    demo.files.extend(path for path in (result.transcript_path, result.log_path) if path)
    demo.chat = result.transcript


def _closed(log_path: Path) -> bool:
    """True when the event log records a session that ended (not one cut by a kill)."""
    if not log_path.exists():
        return False
    with log_path.open(encoding="utf-8") as log:
        return any('"session_closed"' in line for line in log)


def stage_questionnaire(demo: DemoRun) -> None:
    """Stage 4: a judge questionnaire pairing the simulated chat with a real corpus chat."""
    console = demo.console
    console.rule("4. Questionnaire: the chat next to a real human chat, for judges")
    if demo.chat is None:
        return
    with console.status("pairing with a real conversation from the corpus..."):
        made = build_demo_questionnaire(
            demo.chat, demo.out / f"{demo.stem}-questionnaire", seed=demo.seed
        )
    for note in made.notes:
        console.print(f"[yellow]note:[/] {shown(note)}")
    console.print(
        f"last {made.x_turns} turn(s) of both chats, one catch pair; the answer key is "
        "kept apart from what judges get"
    )
    demo.files.extend(made.files)


def study_folder(demo: DemoRun) -> Path:
    """Where the questionnaire stage wrote the study."""
    return demo.out / f"{demo.stem}-questionnaire"


def stage_llm_judge(demo: DemoRun) -> list[Judgement]:
    """Stage 5: the demo's model judges the questionnaire (both orders of every pair)."""
    console = demo.console
    console.rule("5. LLM judge: which chat is the AI? (both orders of every pair)")
    folder = study_folder(demo)
    if not (folder / "answer-key.json").exists():
        console.print("[yellow]no questionnaire was built, so there is nothing to judge[/]")
        return []
    questionnaire = load_questionnaire(folder)
    key = load_key(folder, questionnaire)

    async def judge() -> list[Judgement]:
        async with get_model(
            demo.model_name, base_url=demo.base_url, api_key_env=demo.api_key_env
        ) as model:
            return await run_llm_judge(model, questionnaire, key, kind="paired")

    with console.status(f"{shown(demo.model_name)} is judging the pairs..."):
        judgements = trio.run(judge)
    path = folder / "judgements.jsonl"
    write_judgements(path, judgements)
    for judgement in judgements:
        order = judgement.shown.order or ""
        if judgement.excluded:
            verdict = f"[yellow]{shown(judgement.exclusion_reason or '')}[/]"
        else:
            verdict = "[green]found the AI[/]" if judgement.correct else "[red]fooled[/]"
        console.print(
            f"  pair {judgement.pair_id} ({judgement.pair_kind}, {order} order): "
            f"answered {judgement.choice or '-'} -> {verdict}"
        )
    demo.files.append(path)
    return judgements


def stage_pass_rates(demo: DemoRun, judgements: list[Judgement]) -> None:
    """Stage 6: the X-Turn Pass Rate table of the LLM judgements."""
    console = demo.console
    console.rule("6. Pass rate")
    if not judgements:
        return
    frame = judgement_table(judgements)
    summary = summarise(frame, reps=DEMO_REPS, seed=demo.seed)
    print_summary(console, "LLM judge, test pairs", pd.DataFrame([summary.row()]), None)
    console.print(
        f"[dim]pass rate {percent(summary.pass_rate)} over {summary.judgements} usable "
        f"judgement(s); position bias {number(summary.position_bias)} (share naming "
        "chat 1); "
        "with one test pair these numbers only show the machinery[/]"
    )


def stage_report(demo: DemoRun, judgements: list[Judgement]) -> None:
    """Stage 7: the HTML and Markdown report with figures."""
    console = demo.console
    console.rule("7. Report")
    if not judgements:
        return
    folder = study_folder(demo)
    questionnaire = load_questionnaire(folder)
    tells = study_tells(questionnaire, load_key(folder, questionnaire))
    with console.status("drawing figures..."):
        files = write_demo_report(demo, judgements, tells, DEMO_REPS)
    console.print(f"open {shown(str(files[0]))} in a browser")
    demo.files.extend(files)


def write_demo_report(
    demo: DemoRun,
    judgements: list[Judgement],
    tells: dict[str, list[TellRow]],
    reps: int,
    traces: list[BeliefTrace] | None = None,
) -> list[Path]:
    """Write the demo's report (with the belief traces, if any); its files."""
    out = demo.out / f"{demo.stem}-report"
    report = build_report(
        judgement_table(judgements),
        out,
        title=f"sdtt demo: {demo.persona.name} on {demo.model_name}",
        tells=tells,
        reps=reps,
    )
    if traces:
        add_to_report(report, traces, out)
    return write_report(report, out)
