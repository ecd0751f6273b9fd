"""``sdtt serve export``: a played study scored by ``sdtt score`` and ``sdtt report``."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from sdtt.beliefs.traces import read_traces
from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts
from sdtt.engine.events import read_event_log
from sdtt.tasks.judgements import read_judgements
from tests.serve.helpers import Browser, make_server, write_spec
from tests.serve.test_two_party import play_bot_game

pytestmark = pytest.mark.trio


async def play_study(spec: Path) -> None:
    """Three bot games (two judged human, one a bot) and one human-witness game."""
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        for index, said in enumerate(("yes", "yes", "no")):
            browser = await play_bot_game(server, nursery, f"B{index}", verdict=said)
            assert browser.phase() == "done"
        nursery.cancel_scope.cancel()
    server.store.close()
    spec.write_text(
        spec.read_text().replace("human_witness_share = 0.0", "human_witness_share = 1.0")
    )
    server = make_server(spec)  # the same study, served again
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = Browser(server, "J1"), Browser(server, "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        await judge.wait_phase("chat")
        await judge.say({"type": "send", "text": "hi who are you"})
        await witness.wait(lambda: bool(witness.texts("them")))
        await witness.say({"type": "send", "text": "just me, a person"})
        await judge.wait(lambda: len(judge.texts()) == 2)
        await trio.sleep(30)
        await judge.say({"type": "send", "text": "ok and then?"})
        await witness.wait(lambda: len(witness.texts("them")) == 2)
        await witness.say({"type": "send", "text": "then nothing"})
        await judge.wait_phase("verdict")
        await judge.say({"type": "verdict", "human": "no", "confidence": 55, "reason": ""})
        await judge.wait_phase("done")
        nursery.cancel_scope.cancel()
    server.store.close()


async def test_export_writes_files_that_score_and_report_read(
    tmp_path: Path, autojump_clock: object, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, turns=2)
    await play_study(spec)
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    assert "4 judgement(s)" in capsys.readouterr().out

    judgements = read_judgements(out / "judgements.jsonl")
    bots = [j for j in judgements if j.witness == "bot"]
    assert [j.verdict for j in bots] == ["human", "human", "ai"]
    assert [j.correct for j in bots] == [False, False, True]
    assert all(j.x_turns == 2 and j.total_turns == 2 and j.choice is None for j in bots)
    [person] = [j for j in judgements if j.witness == "human"]
    assert (person.verdict, person.correct) == ("ai", False)
    assert bots[0].shown.bot and bots[0].shown.bot.model == "mock/chatty"

    chats = sorted((out / "chats").glob("*.jsonl"))
    transcripts = [
        t for p in chats if not p.name.endswith(".events.jsonl") for t in read_transcripts(p)
    ]
    assert len(transcripts) == 4
    logs = sorted((out / "chats").glob("*.events.jsonl"))
    assert len(logs) == 3
    for log in logs:
        replay = read_event_log(log)
        assert replay.complete
        [transcript] = read_transcripts(log.with_name(log.name.replace(".events", "")))
        assert [m.text for m in replay.transcript.messages] == [m.text for m in transcript.messages]

    assert main(["score", str(out / "judgements.jsonl"), "--by", "turns", "--bootstrap", "0"]) == 0
    scored = capsys.readouterr().out
    assert "66.7%" in scored  # two of three bot witnesses judged human
    assert "By turns" in scored
    assert (
        main(
            [
                "report",
                str(out / "judgements.jsonl"),
                "--bootstrap",
                "0",
                "--out",
                str(tmp_path / "report"),
            ]
        )
        == 0
    )
    assert (tmp_path / "report" / "report.html").exists()


async def test_export_refuses_a_study_never_served(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    assert main(["serve", "export", str(spec), "--out", str(tmp_path / "x")]) == 2


async def test_slider_readings_export_as_belief_traces_that_score_reads(
    tmp_path: Path, autojump_clock: object, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, turns=2)
    await play_study(spec)
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.replace("\n", "")  # rich wraps long lines
    assert "(3 belief trace(s))" in printed and "export/beliefs.jsonl --by turns" in printed

    traces = read_traces(out / "beliefs.jsonl")
    assert len(traces) == 3  # the three bot games moved the slider; the fourth did not
    for index, trace in enumerate(traces):
        assert (trace.item_kind, trace.target, trace.judge_id) == ("single", "chat", f"B{index}")
        assert trace.target_human is False and trace.x_turns == 2
        assert [p.belief for p in trace.points] == [40, 41]
        assert all(p.source == "slider" for p in trace.points)
        assert [p.turn for p in trace.points] == [0, 1]  # replies seen when moved
        first, second = trace.points
        assert first.message is not None and second.message is not None
        assert 1 <= first.message < second.message
        assert first.time_s is not None and second.time_s is not None
        assert 0 <= first.time_s < second.time_s
        assert second.text  # the bot's reply seen between the two readings
        assert trace.shown.bot and trace.shown.bot.model == "mock/chatty"

    judgements = out / "judgements.jsonl"
    assert main(["score", str(judgements), str(out / "beliefs.jsonl"), "--bootstrap", "0"]) == 0
    scored = capsys.readouterr().out
    assert "Beliefs: calibration of final beliefs" in scored
    assert "66.7%" in scored  # the verdicts still score as before, not twice
    report = tmp_path / "report"
    args = ["report", str(judgements), str(out / "beliefs.jsonl"), "--bootstrap", "0"]
    assert main([*args, "--out", str(report)]) == 0
    assert "calibration" in (report / "report.html").read_text().lower()
