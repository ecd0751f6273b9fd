"""The lobby's rules on plain numbers, and study spec errors."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.serve.matchmaker import BotRoom, HumanRoom, Matchmaker, ThreeRoom, TimedOut
from sdtt.serve.spec import read_study
from tests.serve.helpers import write_spec


def test_matchmaker_balances_and_times_out() -> None:
    lobby = Matchmaker(conditions=3, timeout=60, on_timeout="end", human_share=0.5)
    lobby.arrive("a", 0)
    assert lobby.step(0) == []  # a person is due: a waits for a partner
    lobby.arrive("b", 5)
    assert lobby.step(5) == [HumanRoom(interrogator="a", witness="b")]
    lobby.arrive("c", 6)
    assert lobby.step(6) == [BotRoom(interrogator="c", cell=0)]
    lobby.arrive("d", 7)
    assert lobby.step(7) == []
    assert lobby.next_deadline() == 67
    assert lobby.step(66.9) == []
    assert lobby.step(67) == [TimedOut("d")]
    bots = Matchmaker(conditions=3, timeout=60)
    for pid in "efghij":
        bots.arrive(pid, 0)
    assert [d.cell for d in bots.step(0) if isinstance(d, BotRoom)] == [0, 1, 2, 0, 1, 2]
    late = Matchmaker(conditions=1, timeout=30, on_timeout="bot", human_share=1.0)
    late.arrive("k", 0)
    assert late.step(30) == [BotRoom(interrogator="k", cell=0, timed_out=True)]


def test_spec_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = write_spec(tmp_path)
    path.write_text(path.read_text().replace("turns = 2", "turns = 0"))
    with pytest.raises(InputError) as caught:
        read_study(path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("turns"))
    assert str(caught.value).startswith(f"{path}:{line} field 'study.turns': ")
    assert "\n" not in str(caught.value)
    path.write_text(path.read_text().replace('on_timeout = "bot"', 'on_timeout = "wait"'))
    path.write_text(path.read_text().replace("turns = 0", "turns = 2"))
    with pytest.raises(InputError, match=r"field 'lobby\.on_timeout'"):
        read_study(path)


def test_the_readme_example_study_is_valid() -> None:
    study = read_study(Path(__file__).parents[2] / "examples" / "serve-study.toml")
    assert study.name == "pilot"
    assert [c.delays for c in study.conditions] == ["paper", "jones-bergen"]


def test_a_bot_room_waits_as_long_as_a_human_room_did() -> None:
    # Two-party with both kinds: a bot room never opens at once, it waits one of the
    # last human rooms' waits (an instant start must not mean the bot).
    lobby = Matchmaker(conditions=1, timeout=100, human_share=0.5, human_waits=[20.0, 40.0])
    lobby.human_rooms = 1  # a bot room is due next
    lobby.arrive("a", 0)
    assert lobby.step(0) == []
    due = lobby.next_deadline()
    assert due in (20.0, 40.0)
    assert lobby.step(due - 0.1) == []
    assert lobby.step(due) == [BotRoom(interrogator="a", cell=0)]
    waits = set()
    for number in range(40):
        other = Matchmaker(conditions=1, timeout=100, human_share=0.5, human_waits=[20.0, 40.0])
        other.human_rooms = 1
        other.arrive(f"p{number}", 0)
        waits.add(other.next_deadline())
    assert waits == {20.0, 40.0}


def test_lobby_timeouts_are_drawn_per_participant_and_stay_put() -> None:
    def deadline(pid: str) -> float | None:
        lobby = Matchmaker(conditions=1, timeout=100, timeout_sd=7, human_share=1.0)
        lobby.arrive(pid, 5)
        return lobby.next_deadline()

    deadlines = [deadline(f"p{n}") for n in range(200)]
    assert deadline("p0") == deadlines[0]  # the lobby is rebuilt each step: no new draw
    waits = [d - 5 for d in deadlines if d is not None]
    assert len(set(waits)) == 200
    assert 97 < statistics.mean(waits) < 103
    assert 5.5 < statistics.stdev(waits) < 8.5


def test_three_party_bot_positions_are_random_and_balanced() -> None:
    positions = []
    lobby = Matchmaker(conditions=1, timeout=60, three_party=True)
    for number in range(40):
        # Rebuilt each time, as the server's lobby is (from the rooms' tally).
        lobby = Matchmaker(
            conditions=1, timeout=60, three_party=True, positions=list(lobby.positions)
        )
        lobby.arrive(f"j{number}", 0)
        lobby.arrive(f"w{number}", 0)
        [room] = lobby.step(0)
        assert isinstance(room, ThreeRoom)
        positions.append(room.bot_position)
    assert positions.count(1) == positions.count(2) == 20
    pairs = [tuple(positions[i : i + 2]) for i in range(0, 40, 2)]
    assert {(1, 2), (2, 1)} == set(pairs)  # each pair balanced, in either order
