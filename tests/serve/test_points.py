"""Points per outcome (``[study.points]``): summed over a participant's rounds, shown on
the done page, written to ``points.csv`` by ``sdtt serve export``; played by scripted
participants on the virtual clock."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.serve.spec import read_study
from tests.serve.helpers import Browser, make_server, write_spec

pytestmark = pytest.mark.trio

POINTS = """
[study.points]
finished = 1
partner_left = 0.5
timeout = 0.25
correct_verdict = 2
"""


def _spec(tmp_path: Path, *, rounds: int = 1, **kwargs: Any) -> Path:
    spec = write_spec(tmp_path, turns=1, **kwargs)
    text = spec.read_text().replace("turns = 1\n", f"turns = 1\nrounds = {rounds}\n")
    spec.write_text(text.replace("\n[lobby]", POINTS + "\n[lobby]"))
    return spec


def _export(spec: Path, tmp_path: Path) -> dict[str, dict[str, str]]:
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    with (out / "points.csv").open(encoding="utf-8", newline="") as file:
        return {row["participant"]: row for row in csv.DictReader(file)}


async def test_points_are_summed_over_rounds_shown_when_done_and_exported(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = _spec(tmp_path, rounds=2, share=1.0)
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob = Browser(server, "ann"), Browser(server, "bob")
        for browser in (ann, bob):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
            await trio.sleep(1)
        for played in (1, 2):
            for browser in (ann, bob):
                await browser.wait(
                    lambda b=browser, n=played: (  # type: ignore[misc]
                        b.phase() == "chat" and b.of("phase")[-1]["round"] == [n, 2]
                    )
                )
            assert not any("points" in f for f in ann.of("phase") + bob.of("phase"))
            judge = ann if ann.of("phase")[-1]["role"] == "interrogator" else bob
            witness = bob if judge is ann else ann
            await judge.say({"type": "send", "text": "who are you?"})
            await witness.wait(lambda w=witness: bool(w.texts("them")))  # type: ignore[misc]
            await witness.say({"type": "send", "text": "a person, honest"})
            await judge.wait_phase("verdict")
            # Ann believes her partner (a person: right); Bob does not (wrong).
            human = "yes" if judge is ann else "no"
            await judge.say({"type": "verdict", "human": human, "confidence": 80, "reason": ""})
        for browser in (ann, bob):
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    # Each finished two chats (1 point each); Ann's one verdict was right (2 points).
    assert ann.of("phase")[-1]["points"] == {
        "total": 4,
        "text": "You earned 4 points in this study.",
        "lines": ["2 × finished chat: 2 points", "1 × right answer: 2 points"],
    }
    assert bob.of("phase")[-1]["points"]["total"] == 2
    assert bob.of("phase")[-1]["points"]["lines"] == ["2 × finished chat: 2 points"]
    rows = _export(spec, tmp_path)
    assert set(rows) == {"ann", "bob"}
    assert rows["ann"] == {
        "participant": "ann",
        "session": "",
        "outcome": "finished",
        "completion_code": "CODE-123",
        "chats": "2",
        "finished": "2",
        "partner_left": "0",
        "timeout": "0",
        "correct_verdict": "1",
        "points": "4",
    }
    assert rows["bob"]["points"] == "2" and rows["bob"]["correct_verdict"] == "0"


async def test_a_partner_who_left_and_a_lobby_timeout_earn_their_points(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = _spec(tmp_path, share=1.0, timeout=30, on_timeout="end")
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob = Browser(server, "ann"), Browser(server, "bob")
        for browser in (ann, bob):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        for browser in (ann, bob):
            await browser.wait_phase("chat")
        await bob.close()  # and never comes back
        await ann.wait_phase("done")
        cy = Browser(server, "cy", session_id="SESSION-9")
        await cy.open(nursery)
        await cy.say({"type": "consent"})  # nobody else comes: the lobby times out
        await cy.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert ann.of("phase")[-1]["points"]["lines"] == [
        "1 × chat your partner could not finish: 0.5 points"
    ]
    assert cy.of("phase")[-1]["points"]["text"] == "You earned 0.25 points in this study."
    rows = _export(spec, tmp_path)
    assert (rows["ann"]["outcome"], rows["ann"]["partner_left"], rows["ann"]["points"]) == (
        "partner_left",
        "1",
        "0.5",
    )
    assert (rows["bob"]["outcome"], rows["bob"]["chats"], rows["bob"]["points"]) == (
        "left",
        "1",
        "0",
    )
    assert (rows["cy"]["session"], rows["cy"]["timeout"], rows["cy"]["points"]) == (
        "SESSION-9",
        "1",
        "0.25",
    )


async def test_a_study_without_points_shows_and_exports_none(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = write_spec(tmp_path, turns=1, timeout=30, on_timeout="end", share=1.0)
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.open(nursery)
        await browser.say({"type": "consent"})
        await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert "points" not in browser.of("phase")[-1]
    assert main(["serve", "export", str(spec), "--out", str(tmp_path / "out")]) == 0
    assert not (tmp_path / "out" / "points.csv").exists()


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("[study.points]\nfinished = -1\n", "study.points.finished"),
        ("[study.points]\nbonus = 1\n", "study.points.bonus"),
        ("[study.points]\nfinished = 1\n[market]\nbettors = 2\n", "market"),
    ],
)
async def test_bad_points_are_refused_naming_the_field(
    tmp_path: Path, table: str, problem: str
) -> None:
    spec = write_spec(tmp_path)
    text = spec.read_text().replace("\n[lobby]", "\n" + table + "\n[lobby]")
    if "market" in problem:
        text = text.replace('title = "Chat study"', 'title = "Chat study"\nmode = "market"')
    spec.write_text(text)
    with pytest.raises(InputError) as caught:
        read_study(spec)
    assert problem in str(caught.value)
    if problem.startswith("study.points."):  # the line of the key in [study.points]
        key = problem.rsplit(".", 1)[1]
        lines = text.splitlines()
        assert caught.value.line == 1 + next(
            n for n, line in enumerate(lines) if line.startswith(f"{key} =")
        )
