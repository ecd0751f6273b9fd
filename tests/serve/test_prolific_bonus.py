"""``sdtt prolific bonus``: bonuses from ``points.csv`` through Prolific's bulk bonus (set
up, show the total, pay once), against the local fake, whose pay call pays again each
time it is made, as Prolific's does. The command is killed at every step and run again:
nobody is ever paid twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtt.cli import main
from sdtt.serve import prolific
from sdtt.serve.spec import read_study
from tests.fakes.prolific_fake import Killed, ProlificFake, error
from tests.serve.helpers import write_spec

HEADER = "participant,session,outcome,completion_code,chats,finished,correct_verdict,points\n"
POINTS = HEADER + (
    "P1,sub1,finished,CODE-123,1,1,1,3\n"
    "P2,sub2,finished,CODE-123,1,1,0,1.5\n"
    "P3,sub3,timeout,CODE-123,0,0,0,0\n"
)


@pytest.fixture
def spec(tmp_path: Path, fake: ProlificFake) -> Path:
    """A spec whose study is created and published, P1-P3 having taken part."""
    path = write_spec(tmp_path, turns=1)
    path.write_text(
        path.read_text()
        + f"""
[prolific]
description = "Chat, then say whether your partner was a person."
reward = 150
estimated_minutes = 8
places = 3
project = "proj-1"
token_env = "SDTT_TEST_PROLIFIC"
api_url = "{fake.url}"
bonus_per_point = 0.10
"""
    )
    assert main(["prolific", "create", str(path), "--url", "https://chat.example.org"]) == 0
    assert main(["prolific", "publish", str(path)]) == 0
    study_id = prolific.Record.of(read_study(path)).require_study()
    for pid in ("P1", "P2", "P3"):
        fake.start(study_id, pid)
    (tmp_path / "points.csv").write_text(POINTS)
    return path


def _bonus(spec: Path, *extra: str) -> int:
    return main(["prolific", "bonus", str(spec), str(spec.parent / "points.csv"), *extra])


def _states(spec: Path) -> list[str]:
    return [e["state"] for e in prolific.Record.of(read_study(spec)).bonuses or []]


def test_set_up_shows_the_total_and_pays_only_with_pay_once(
    spec: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert _bonus(spec) == 0
    out = capsys.readouterr().out
    # 3 points and 1.5 points at 0.10 a point; P3 earned nothing and is left out.
    assert "2 participant(s), 0.45 in bonuses, 0.60 with Prolific's fees" in out
    assert "run the same command with --pay" in out
    assert not fake.paid and _states(spec) == ["set_up"]
    assert _bonus(spec) == 0  # a second look sets nothing new up
    assert len(fake.bulk) == 1
    assert _bonus(spec, "--pay") == 0
    assert fake.paid == {"P1": 1, "P2": 1}
    assert fake.paid_amount == {"P1": Decimal("0.30"), "P2": Decimal("0.15")}
    capsys.readouterr()
    assert _bonus(spec, "--pay") == 0
    assert "No bonus left to pay." in capsys.readouterr().out
    assert fake.paid == {"P1": 1, "P2": 1} and _states(spec) == ["paid"]


def _kill_after(
    monkeypatch: pytest.MonkeyPatch, target: Any, name: str, *, before: bool = False
) -> None:
    original: Callable[..., Any] = getattr(target, name)

    def dying(*args: Any, **kwargs: Any) -> Any:
        if before:
            raise Killed
        original(*args, **kwargs)
        raise Killed

    monkeypatch.setattr(target, name, dying)


def _kill_at_save(monkeypatch: pytest.MonkeyPatch, number: int) -> None:
    original = prolific.Record.save
    saves = {"n": 0}

    def dying(self: prolific.Record) -> None:
        original(self)
        saves["n"] += 1
        if saves["n"] == number:
            raise Killed

    monkeypatch.setattr(prolific.Record, "save", dying)


STEPS = ["set_up_call", "set_up_saved", "paying_saved", "pay_call", "paid_saved"]


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_never_pays_twice(
    spec: Path,
    fake: ProlificFake,
    step: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with monkeypatch.context() as patch:
        if step == "set_up_call":
            _kill_after(patch, prolific.ProlificClient, "set_up_bonus")
        elif step == "pay_call":
            _kill_after(patch, prolific.ProlificClient, "pay_bonus")
        else:
            _kill_at_save(patch, {"set_up_saved": 1, "paying_saved": 2, "paid_saved": 3}[step])
        with pytest.raises(Killed):
            _bonus(spec, "--pay")
    capsys.readouterr()
    for _ in range(2):  # the researcher runs it again, twice
        _bonus(spec, "--pay")
    out = capsys.readouterr().out
    assert all(count <= 1 for count in fake.paid.values()), fake.paid
    if step in ("paying_saved", "pay_call"):
        # Killed with the payment marked as being made: sdtt cannot know whether it went
        # out, so it never sends it again and says what to check.
        [bulk_id] = [e["id"] for e in prolific.Record.of(read_study(spec)).bonuses or []]
        assert f"Bulk bonus {bulk_id} (2 participant(s)) was being paid when a run stopped" in out
        assert fake.paid == ({"P1": 1, "P2": 1} if step == "pay_call" else {})
        if step == "paying_saved":  # Prolific shows nothing paid: the researcher says so
            assert _bonus(spec, "--pay", "--not-paid", bulk_id) == 0
            assert _bonus(spec, "--pay", "--not-paid", bulk_id) != 0  # once only
    assert fake.paid == {"P1": 1, "P2": 1}
    assert fake.paid_amount == {"P1": Decimal("0.30"), "P2": Decimal("0.15")}


KILLS = {
    # where the real process is killed: the call the fake holds, and whether Prolific
    # carried it out before holding it (its answer then never reaches sdtt)
    "set_up_sent": ("/bonus-payments/", False),
    "set_up_done": ("/bonus-payments/", True),
    "pay_sent": ("/pay/", False),
    "pay_done": ("/pay/", True),
}


@pytest.mark.parametrize("step", list(KILLS))
def test_sigkill_of_the_real_command_at_each_call_pays_everyone_exactly_once(
    spec: Path, fake: ProlificFake, step: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ending, after = KILLS[step]
    hold = fake.hold_at("POST", ending, after=after)
    command = [sys.executable, "-m", "sdtt.cli", "prolific", "bonus", str(spec)]
    process = subprocess.Popen(
        [*command, str(spec.parent / "points.csv"), "--pay"],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        # Synchronised on the fake having the call, not on time: the process waits for
        # its answer until it is killed.
        while not hold.arrived.wait(0.05):
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                raise AssertionError(f"sdtt stopped before the call: {output}")
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        hold.release.set()
    capsys.readouterr()
    for _ in range(2):  # the researcher runs it again, twice
        _bonus(spec, "--pay")
    out = capsys.readouterr().out
    bulks = prolific.Record.of(read_study(spec)).bonuses or []
    if step.startswith("pay"):
        # Killed during the pay call: sdtt cannot know whether it went out, so it never
        # sends it again and says what to check.
        [entry] = bulks
        assert entry["state"] == "paying"
        assert f"Bulk bonus {entry['id']} (2 participant(s)) was being paid" in out
        assert fake.paid == ({"P1": 1, "P2": 1} if step == "pay_done" else {})
        if step == "pay_sent":  # Prolific shows it unpaid: the researcher says so, once
            assert _bonus(spec, "--pay", "--not-paid", entry["id"]) == 0
    else:
        # Killed before anything was recorded: a new bulk bonus is set up and paid; the
        # one Prolific may have set up is never paid.
        assert [e["state"] for e in bulks] == ["paid"]
        assert len(fake.bulk) == (2 if step == "set_up_done" else 1)
    assert fake.paid == {"P1": 1, "P2": 1}
    assert fake.paid_amount == {"P1": Decimal("0.30"), "P2": Decimal("0.15")}
    pays = [r for r in (fake.server.requests if fake.server else []) if r.path.endswith("/pay/")]
    assert len(pays) == (1 if step.startswith("set_up") or step == "pay_done" else 2)


def test_a_doubtful_pay_failure_is_not_retried_and_a_refused_one_is_payable_later(
    spec: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert fake.server is not None
    assert _bonus(spec) == 0
    fake.refuse[("POST", "/pay/")] = error(500, "Server error", "Something went wrong.")
    assert _bonus(spec, "--pay") != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "(HTTP 500)" in err and "sdtt never sends it again" in err
    pays = [r for r in fake.server.requests if r.path.endswith("/pay/")]
    assert len(pays) == 1 and _states(spec) == ["paying"]  # one call, no retry
    assert _bonus(spec, "--pay") == 1 and not fake.paid  # never sent again
    # A refusal (HTTP 400: not enough balance) leaves it set up, payable later.
    bulk_id = prolific.Record.of(read_study(spec)).bonuses[0]["id"]  # type: ignore[index]
    assert _bonus(spec, "--not-paid", bulk_id) == 0
    fake.refuse[("POST", "/pay/")] = error(400, "Bad request", "Insufficient balance.")
    assert _bonus(spec, "--pay") != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "Insufficient balance" in err and _states(spec) == ["set_up"]
    assert _bonus(spec, "--pay") == 0
    assert fake.paid == {"P1": 1, "P2": 1}


def test_participants_added_later_get_a_bulk_bonus_of_their_own(
    spec: Path, fake: ProlificFake
) -> None:
    assert _bonus(spec, "--pay") == 0
    study_id = prolific.Record.of(read_study(spec)).require_study()
    fake.set_status(study_id, "P3", "RETURNED")
    fake.start(study_id, "P4")
    (spec.parent / "points.csv").write_text(POINTS + "P4,sub4,finished,CODE-123,1,1,1,2\n")
    assert _bonus(spec, "--pay") == 0
    assert fake.paid == {"P1": 1, "P2": 1, "P4": 1} and _states(spec) == ["paid", "paid"]


def test_a_bad_points_row_names_its_line_and_sets_nothing_up(
    spec: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    (spec.parent / "points.csv").write_text(POINTS + "P4,sub4,finished,CODE-123,1,1,1,lots\n")
    assert _bonus(spec) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "points.csv:5" in err and "points of 0 or more" in err
    assert not fake.bulk


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    points=st.lists(
        st.decimals(min_value=0, max_value=10_000, places=3, allow_nan=False), max_size=8
    ),
    rate=st.sampled_from(["0.10", "0.05", "0.333", "1", "2.5"]),
)
def test_amounts_are_points_times_the_rate_rounded_down_never_more(
    tmp_path_factory: pytest.TempPathFactory, points: list[Decimal], rate: str
) -> None:
    folder = tmp_path_factory.mktemp("amounts")
    path = write_spec(folder)
    path.write_text(
        path.read_text()
        + '\n[prolific]\ndescription = "d"\nreward = 1\nestimated_minutes = 1\n'
        + f'places = 1\nproject = "p"\nbonus_per_point = {rate}\n'
    )
    rows = "".join(f"Q{i},s,finished,C,1,1,0,{p}\n" for i, p in enumerate(points))
    (folder / "points.csv").write_text(HEADER + rows)
    amounts = prolific.bonus_amounts(read_study(path), folder / "points.csv")
    for i, p in enumerate(points):
        exact = p * Decimal(rate)
        got = amounts.get(f"Q{i}", Decimal(0))
        assert got <= exact < got + Decimal("0.01")  # rounded down to a penny, never up
        assert (f"Q{i}" in amounts) == (got > 0)
