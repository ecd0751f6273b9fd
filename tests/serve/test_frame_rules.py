"""The table of which frames each participant phase accepts (``FRAME_RULES``), walked
whole: every frame of the protocol in every phase, against a real server and store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from sdtt.serve.handling import FRAME_RULES
from sdtt.serve.protocol import ClientFrame, Refused, parse_frame, stale_game
from sdtt.serve.server import StudyServer
from sdtt.serve.store import Participant, ParticipantState
from tests.serve.helpers import make_server, write_spec

PHASES: tuple[ParticipantState, ...] = get_args(ParticipantState)
SAMPLES: dict[str, dict[str, Any]] = {
    "join": {"pid": "p1"},
    "consent": {},
    "decline": {},
    "send": {"text": "hello", "game": "g-1"},
    "typing": {},
    "belief": {"value": 40},
    "quote": {"kind": "human", "side": "buy", "count": 1},
    "verdict": {"human": "yes", "reason": "quick answers"},
    "trade": {"kind": "human", "side": "buy", "count": 1},
    "done_buying": {},
    "continue": {},
    "report": {"reason": "rude"},
}
"""One frame of each type, as a page would send it."""


def frame_types() -> list[type[Any]]:
    union = get_args(ClientFrame)[0]
    return list(get_args(union))


def sample(kind: str) -> Any:
    return parse_frame(json.dumps({"type": kind, **SAMPLES[kind]}))


def test_every_frame_of_the_protocol_has_one_rule_and_accepted_frames_an_act() -> None:
    assert set(FRAME_RULES) == set(frame_types())
    assert {type(sample(kind)) for kind in SAMPLES} == set(FRAME_RULES)
    for kind, rule in FRAME_RULES.items():
        assert rule.phases <= set(PHASES), kind
        assert not rule.phases or rule.act is not None, kind


def in_phase(server: StudyServer, phase: ParticipantState) -> str:
    pid = f"p-{phase}"
    server.store.add_participant(
        Participant(
            pid=pid,
            token="t",
            state=phase,
            role="interrogator" if phase in ("chat", "verdict") else None,
            room="r-1" if phase in ("chat", "verdict") else None,
            outcome=None,
            joined="2025-03-01T09:00:00+00:00",
            waiting_since=None,
        )
    )
    return pid


def what_is_kept(server: StudyServer, pid: str) -> tuple[Any, ...]:
    store = server.store
    return (
        store.participant(pid),
        len(store.events()),
        store.beliefs(),
        store.verdicts(),
        store.rooms(),
    )


@pytest.mark.trio
@pytest.mark.parametrize("market", [False, True], ids=["chat", "market"])
async def test_a_frame_outside_its_phases_is_refused_by_the_table_and_changes_nothing(
    tmp_path: Path, autojump_clock: object, market: bool
) -> None:
    spec = write_spec(tmp_path)
    if market:
        text = spec.read_text().replace(
            'title = "Chat study"', 'title = "Chat study"\nmode = "market"'
        )
        spec.write_text(text + "\n[market]\nbettors = 3\n")
    server = make_server(spec)
    walked = 0
    for phase in PHASES:
        pid = in_phase(server, phase)
        for kind in SAMPLES:
            frame = sample(kind)
            rule = FRAME_RULES[type(frame)]
            if phase in rule.phases:
                continue
            walked += 1
            before = what_is_kept(server, pid)
            expected = rule.refused
            if rule.of_a_game and market:
                expected = stale_game(frame.game or "")
            if expected is None:
                await server.handler.handle(pid, frame)
            else:
                with pytest.raises(Refused) as refused:
                    await server.handler.handle(pid, frame)
                assert str(refused.value) == expected, (kind, phase)
            assert what_is_kept(server, pid) == before, (kind, phase)
    assert walked == sum(len(PHASES) - len(rule.phases) for rule in FRAME_RULES.values())
