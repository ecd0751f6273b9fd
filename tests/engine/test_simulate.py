"""Simulated chats: a scripted or LLM interrogator against the persona bot, end to end."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
import trio.testing

from sdtt.cli import main
from sdtt.dialogue.message import Message, segment_turns
from sdtt.dialogue.store import read_transcripts
from sdtt.engine.events import ListSink, MessageSent, UserMessage, play, read_event_log
from sdtt.engine.interrogator import (
    ScriptExhaustedError,
    ScriptInterrogator,
    interrogator_instructions,
    llm_interrogator,
    read_script,
)
from sdtt.engine.session import SessionSettings
from sdtt.engine.simulate import (
    for_virtual_clock,
    run_on_virtual_clock,
    run_simulated_chat,
    thinking_time,
)
from sdtt.engine.virtual_clock import VirtualClock
from sdtt.errors import InputError
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt
from sdtt.models.mock import MockModelAPI, chatty_script
from sdtt.personas.bot import PersonaBot
from sdtt.personas.prompt import BotPromptBuilder
from tests.engine.helpers import START
from tests.fakes.openai_fake import FakeOpenAIServer, chatty_reply

SCRIPT = [
    ["hey!", "how's your week going"],
    ["ha nice", "i just got back from a run"],
    ["what do you do on weekends?"],
    ["sounds fun"],
    ["ok gotta go, bye"],
]


def chatty_bot(delay: float = 2.0) -> PersonaBot:
    return PersonaBot(
        model=MockModelAPI(chatty_script(), name="mock/chatty", delay=delay),
        prompts=BotPromptBuilder(instructions="be the person", history=""),
    )


def sides(messages: list[Message]) -> str:
    return "".join("U" if m.side == "user" else "R" for m in messages)


@pytest.mark.trio
async def test_a_burst_chat_stops_after_exactly_the_turns_asked(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    sink = ListSink()
    result = await run_simulated_chat(
        chatty_bot(),
        ScriptInterrogator(SCRIPT),
        turns=3,
        bot_settings=SessionSettings(seed=2),
        sink=sink,
        out_dir=tmp_path,
        session_id="sim",
        started=START,
    )
    assert result.stopped == "turns"
    assert result.turns == 3
    assert len(segment_turns(result.transcript.messages)) == 3
    assert result.transcript.messages[-1].side == "response"
    # Every scripted message the bot saw came in script order, each once.
    flat = [text for burst in SCRIPT for text in burst]
    said = [m.text for m in result.transcript.messages if m.side == "user"]
    assert said == flat[: len(said)]
    assert result.transcript_path == tmp_path / "sim.jsonl"
    (saved,) = read_transcripts(tmp_path / "sim.jsonl")
    replay = read_event_log(tmp_path / "sim.events.jsonl")
    assert saved.messages == result.transcript.messages == replay.transcript.messages
    assert replay.header.meta["simulated"] is True
    live = [(e.clock, e.text) for e in sink.events if isinstance(e, UserMessage | MessageSent)]
    assert [(clock, m.text) for clock, m in replay.timeline] == live


@pytest.mark.trio
async def test_pingpong_chat_alternates_strictly(autojump_clock: trio.testing.MockClock) -> None:
    result = await run_simulated_chat(
        chatty_bot(),
        ScriptInterrogator(SCRIPT),
        turns=5,
        bot_settings=SessionSettings(mode="pingpong", seed=3),
        started=START,
    )
    assert result.stopped == "turns"
    assert sides(result.transcript.messages) == "UR" * 5
    assert [m.text for m in result.transcript.messages if m.side == "user"] == [
        "hey!",
        "how's your week going",
        "ha nice",
        "i just got back from a run",
        "what do you do on weekends?",
    ]


@pytest.mark.trio
async def test_a_chat_whose_script_runs_out_ends_as_stalled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    result = await run_simulated_chat(
        chatty_bot(),
        ScriptInterrogator([["hi"], ["bye"]]),
        turns=10,
        started=START,
    )
    assert result.stopped == "stalled"
    assert result.turns == 2
    assert result.interrogator_errors >= 1


@pytest.mark.trio
async def test_an_llm_interrogator_gets_its_own_point_of_view(
    autojump_clock: trio.testing.MockClock,
) -> None:
    asked = MockModelAPI(chatty_script(), name="mock/chatty", delay=1.0)
    interrogator = llm_interrogator(asked, topic="weekend plans", mode="burst")
    result = await run_simulated_chat(
        chatty_bot(), interrogator, turns=2, started=START, max_duration=3600
    )
    assert result.stopped == "turns"
    first, later = asked.prompts[0], asked.prompts[-1]
    assert "weekend plans" in first.instructions
    assert first.dialogue == ""
    # The bot's messages reach the interrogator as "User" lines, its own as "Response".
    bot_text = next(m.text for m in result.transcript.messages if m.side == "response")
    assert f"] {bot_text}" in later.dialogue
    assert any(
        line.startswith("User:") and line.endswith(bot_text) for line in later.dialogue.splitlines()
    )


def test_virtual_clock_runs_a_long_chat_in_a_moment() -> None:
    async def chat() -> float:
        result = await run_simulated_chat(
            chatty_bot(delay=20.0), ScriptInterrogator(SCRIPT), turns=4, started=START
        )
        return result.duration

    assert run_on_virtual_clock(chat) > 60.0


@pytest.mark.trio
async def test_script_interrogator_completes_a_burst_cut_short() -> None:
    script = ScriptInterrogator([["a", "b", "c"], ["d"]])
    now = START
    rng = random.Random(0)
    sent_a = [Message(side="response", text="a", time=now)]
    assert [m.text for m in (await script.reply(sent_a, now, rng)).messages] == ["b", "c"]
    all_sent = [Message(side="response", text=t, time=now) for t in "abc"]
    assert [m.text for m in (await script.reply(all_sent, now, rng)).messages] == ["d"]
    with pytest.raises(ScriptExhaustedError):
        await script.reply([*all_sent, Message(side="response", text="d", time=now)], now, rng)


def test_read_script_splits_bursts_on_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("# opening\nhey\nyou there?\n\n\nok\n")
    assert read_script(path) == [["hey", "you there?"], ["ok"]]
    path.write_text("# nothing\n\n")
    with pytest.raises(InputError, match="no messages"):
        read_script(path)
    with pytest.raises(InputError, match="not found"):
        read_script(tmp_path / "missing.txt")


def test_interrogator_instructions_mention_the_topic_and_the_mode() -> None:
    burst = interrogator_instructions("board games", "burst")
    assert "board games" in burst and "several in a row" in burst
    assert "exactly one message" in interrogator_instructions(None, "pingpong")


@pytest.mark.trio
async def test_play_re_emits_a_log_at_its_pace(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    await run_simulated_chat(
        chatty_bot(),
        ScriptInterrogator(SCRIPT),
        turns=2,
        out_dir=tmp_path,
        session_id="p",
        started=START,
    )
    replay = read_event_log(tmp_path / "p.events.jsonl")
    sink = ListSink()
    begin = trio.current_time()
    await play(replay.events, sink, speed=2.0)
    assert sink.events == replay.events
    assert trio.current_time() - begin == pytest.approx(replay.events[-1].clock / 2)


def test_cli_simulate_writes_transcript_and_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.txt"
    script.write_text("hey\nwhat's up\n\nnot much\n\nbye\n")
    out = tmp_path / "out"
    code = main(
        [
            "simulate",
            "--model",
            "mock/chatty",
            "--script",
            str(script),
            "--turns",
            "2",
            "--virtual-clock",
            "--delays",
            "jones-bergen",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "2 turn(s)" in printed
    (log,) = out.glob("*.events.jsonl")
    replay = read_event_log(log)
    assert replay.header.settings["delays"] == "jones-bergen"
    (transcript,) = read_transcripts(log.with_name(log.name.replace(".events", "")))
    assert transcript.messages == replay.transcript.messages
    assert len(segment_turns(transcript.messages)) == 2


CALL_TIMEOUT = 3600.0
"""Virtual seconds a threaded call may take: a clock that leaps while it thinks hits it."""


class ThreadModel:
    """Stands in for the local provider: it computes in a worker thread. With ``block``
    the thread finishes only once the call has timed out, so only a leaping clock ends it."""

    name = "local/fake"

    def __init__(self, *, block: bool = False) -> None:
        self.block = block
        self.held_during_call: bool | None = None

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        clock = trio.lowlevel.current_clock()
        assert isinstance(clock, VirtualClock)
        self.held_during_call = clock.still
        done = threading.Event()
        if not self.block:
            done.set()
        try:
            with trio.fail_after(CALL_TIMEOUT):
                await trio.to_thread.run_sync(done.wait, abandon_on_cancel=True)
        finally:
            done.set()
        return ModelOutput(text="Response: hi", model=self.name)


async def timed_call(model: Generator) -> tuple[float, bool]:
    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, VirtualClock)
    start = trio.current_time()
    await model.generate(Prompt(instructions=""), GenerateConfig())
    return trio.current_time() - start, clock.still


def test_real_time_calls_let_a_threaded_model_run_on_a_virtual_clock() -> None:
    model = ThreadModel()
    took, held_after = run_on_virtual_clock(timed_call, for_virtual_clock(model))
    assert model.held_during_call, "the clock stood still, no jumps, during the call"
    # No leap to the timeout, and not its real time either: the answer's thinking time.
    assert took == thinking_time(ModelOutput(text="Response: hi", model="")) == 0.56
    assert not held_after, "the clock jumps again once the call is over"
    with pytest.raises(trio.TooSlowError):
        run_on_virtual_clock(timed_call, ThreadModel(block=True))


def test_mock_models_keep_their_virtual_delays() -> None:
    model = MockModelAPI(["Response: hi"], name="mock/slow", delay=3600.0)
    assert for_virtual_clock(model) is model
    took, _ = run_on_virtual_clock(timed_call, model)
    assert took == 3600.0


def test_importing_the_simulator_loads_no_test_tooling() -> None:
    # trio.testing pulls in pytest when it is installed; only a virtual clock needs it.
    probe = "import sys, sdtt.engine.simulate; print('trio.testing' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_cli_simulate_from_a_set_start_repeats_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.txt"
    script.write_text("hey\nwhat's up\n\nnot much\n")
    chats = []
    for run in ("a", "b"):
        out = tmp_path / run
        args = ["simulate", "--model", "mock/chatty", "--script", str(script), "--turns", "2"]
        assert (
            main([*args, "--virtual-clock", "--start", "2025-01-01T12:00", "--out", str(out)]) == 0
        )
        (log,) = out.glob("*.events.jsonl")
        assert log.name.startswith("chat-20250101-120000-")
        replay = read_event_log(log)
        assert replay.header.started == datetime(2025, 1, 1, 12, tzinfo=UTC)
        chats.append(replay)
    first, second = chats
    assert first.transcript.messages[0].time == datetime(2025, 1, 1, 12, tzinfo=UTC)
    assert first.transcript.messages == second.transcript.messages
    assert first.events == second.events
    capsys.readouterr()
    assert (
        main(["simulate", "--model", "mock/chatty", "--start", "noon", "--out", str(tmp_path)]) != 0
    )
    assert "--start must be a date and time such as 2025-01-01T12:00, not 'noon'" in (
        capsys.readouterr().err
    )


def test_cli_simulate_of_a_served_model_repeats_exactly_whatever_its_latency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server answers alike every time, after a random real wait.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runs = []
    with FakeOpenAIServer(reply=chatty_reply, jitter=0.03) as server:
        for run in ("a", "b"):
            out = tmp_path / run
            command = [
                "simulate", "--persona", "chitchat-32b20fa3", "--model", "openai/served",
                "--base-url", server.base_url, "--virtual-clock", "--quiet",
                "--start", "2025-02-01T12:02", "--turns", "4", "--out", str(out),
            ]  # fmt: skip
            assert main(command) == 0
            runs.append({path.name: path.read_bytes() for path in out.iterdir()})
    assert len(runs[0]) == 2
    assert runs[0] == runs[1]


@pytest.mark.parametrize("seed", range(4))
def test_a_mock_chat_from_a_set_start_stops_at_the_turns_asked_and_repeats_byte_for_byte(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both sessions often have something due at one virtual instant; trio runs such tasks
    # in a random order (its scheduler's own generator), so each repeat seeds that
    # generator differently to try other orders.
    import trio._core._run as trio_run

    runs = []
    for repeat in range(3):
        monkeypatch.setattr(trio_run, "_r", random.Random(repeat))
        out = tmp_path / str(repeat)
        command = [
            "simulate", "--persona", "chitchat-32b20fa3", "--model", "mock/chatty",
            "--virtual-clock", "--quiet", "--start", "2025-02-01T12:02", "--seed", str(seed),
            "--topic", "What's your favorite smell?", "--turns", "10", "--out", str(out),
        ]  # fmt: skip
        assert main(command) == 0
        (transcript_path,) = (p for p in out.iterdir() if not p.name.endswith(".events.jsonl"))
        (transcript,) = read_transcripts(transcript_path)
        assert len(segment_turns(transcript.messages)) == 10
        assert transcript.condition is not None and transcript.condition.live_turns == 10
        assert "10 turn(s)," in capsys.readouterr().out
        runs.append({path.name: path.read_bytes() for path in out.iterdir()})
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.trio
async def test_a_bot_that_only_echoes_its_instructions_sends_nothing_and_is_counted(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    instructions = "You are a real person chatting by text message, never an assistant."
    echo = MockModelAPI(
        lambda prompt, config: f"Response: {instructions}", name="mock/echo", delay=1.0
    )
    bot = PersonaBot(
        model=echo,
        prompts=BotPromptBuilder(instructions=instructions, history=""),
        empty_retries=1,
    )
    result = await run_simulated_chat(
        bot,
        ScriptInterrogator(SCRIPT[:1]),
        turns=1,
        out_dir=tmp_path,
        session_id="sim",
        started=START,
    )
    assert result.turns == 0
    assert all(m.side == "user" for m in result.transcript.messages)
    # Each of the bot's calls asked twice, and both answers were caught.
    finished = [
        e
        for e in read_event_log(tmp_path / "sim.events.jsonl").events
        if e.type == "model_call_finished"
    ]
    assert finished and all((e.ok, e.out_of_character) == (False, 2) for e in finished)
    caught = {"bot": 2 * len(finished), "interrogator": 0}
    assert result.out_of_character == caught
    (saved,) = read_transcripts(tmp_path / "sim.jsonl")
    assert saved.meta["out_of_character"] == caught
    assert saved.messages == result.transcript.messages
