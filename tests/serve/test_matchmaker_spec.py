"""The lobby's rules on plain numbers, and study spec errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.serve.matchmaker import BotRoom, HumanRoom, Matchmaker, TimedOut
from sdtt.serve.spec import read_study
from tests.serve.helpers import write_spec


def test_matchmaker_balances_and_times_out() -> None:
    lobby = Matchmaker(conditions=3, timeout=60, on_timeout="end", human_share=0.5)
    lobby.arrive("a", 0)
    assert lobby.step(0) == []  # a person is due: a waits for a partner
    lobby.arrive("b", 5)
    assert lobby.step(5) == [HumanRoom(interrogator="a", witness="b")]
    lobby.arrive("c", 6)
    assert lobby.step(6) == [BotRoom(interrogator="c", condition=0)]
    lobby.arrive("d", 7)
    assert lobby.step(7) == []
    assert lobby.next_deadline() == 67
    assert lobby.step(66.9) == []
    assert lobby.step(67) == [TimedOut("d")]
    bots = Matchmaker(conditions=3, timeout=60)
    for pid in "efghij":
        bots.arrive(pid, 0)
    assert [d.condition for d in bots.step(0) if isinstance(d, BotRoom)] == [0, 1, 2, 0, 1, 2]
    late = Matchmaker(conditions=1, timeout=30, on_timeout="bot", human_share=1.0)
    late.arrive("k", 0)
    assert late.step(30) == [BotRoom(interrogator="k", condition=0, timed_out=True)]


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
