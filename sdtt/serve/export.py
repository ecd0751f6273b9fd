"""``sdtt serve export``: a study's store as the files the rest of sdtt reads.

For every room: ``chats/<room>.jsonl`` (the transcript; interrogator = side A, witness =
side B) and, for a bot room, ``chats/<room>.events.jsonl`` (the engine's event log as
``sdtt chat`` writes it). Every verdict becomes a record of ``judgements.jsonl`` that
``sdtt score`` and ``sdtt report`` read with questionnaire judgements: a two-party
verdict is a single-witness judgement (``witness``, ``verdict``), so the pass rate is
the share of bot witnesses judged human. Belief slider readings go to ``beliefs.jsonl`` as
belief traces (:mod:`sdtt.serve.slider`), and a market room's price history as the room's
trace (source 'price', the bid); both commands read them too, and ``prices.csv`` has
each market's series with bid and ask (:func:`sdtt.serve.market_room.price_rows`). A
study with ``[study.points]`` also gets ``points.csv``: each participant's outcomes and
points, to pay bonuses by.

With ``scrub``, participants' own text (their messages, a human witness's too, the
verdict's reason and free-text answers) goes through the persona scrubber
(:mod:`sdtt.personas.scrub`, one per room so a name keeps its placeholder within a
chat), and the bot's event logs, which repeat the conversation in every model call, are
left out.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter

from sdtt.beliefs.traces import write_traces
from sdtt.dialogue.condition import CONDITION_SETTINGS, Condition
from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.shown import AnswerNotes, Shown
from sdtt.dialogue.store import write_transcripts
from sdtt.engine.events import Event, EventLog, SessionHeader
from sdtt.engine.simulate import answered_turns
from sdtt.personas.scrub import Scrubber
from sdtt.serve.market_room import PRICE_COLUMNS, new_maker, price_rows, price_trace
from sdtt.serve.points import earned
from sdtt.serve.slider import slider_traces
from sdtt.serve.spec import Study
from sdtt.serve.state import completion_code
from sdtt.serve.store import Room, StoredMessage, StudyStore, Verdict
from sdtt.spreadsheet import safe_cell
from sdtt.tasks.judgements import Judgement, write_judgements

_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    chats: int
    event_logs: int
    judgements: int
    beliefs: int
    traces: int
    judgements_path: Path
    scrubbed: int | None = None
    """Participants' texts the scrubber changed (None: not scrubbed)."""
    points_path: Path | None = None
    """The participants' points (None: the study gives no points)."""


def export_study(
    study: Study, store: StudyStore, out: Path, *, scrub: bool = False
) -> ExportSummary:
    """Write ``study``'s rooms, verdicts and beliefs under ``out`` (replacing an earlier
    export there); ``scrub``: participants' text scrubbed, no event logs."""
    chats_dir = out / "chats"
    chats_dir.mkdir(parents=True, exist_ok=True)
    transcripts: dict[str, dict[int, Transcript]] = {}
    logs = 0
    rooms = {room.id: room for room in store.rooms()}
    scrubbers = {room_id: _Scrub() if scrub else None for room_id in rooms}
    messages = {
        room.id: _scrubbed(room, store.messages(room.id), scrubbers[room.id])
        for room in rooms.values()
    }
    for room in rooms.values():
        events = store.events(room.id)
        headers = {
            e["data"].get("chat", 1): e["data"] for e in events if e["kind"] == "session_header"
        }
        numbers = (1, 2) if room.witness == "both" else (1,)
        transcripts[room.id] = {}
        for number in numbers:
            name = room.id if len(numbers) == 1 else f"{room.id}-{number}"
            header = headers.get(number)
            if header is not None and not scrub:
                chat_events = [
                    e
                    for e in events
                    if e["kind"] == "engine" and e["data"].get("chat", 1) == number
                ]
                _write_log(chats_dir / f"{name}.events.jsonl", name, header, chat_events)
                logs += 1
            transcript = _transcript(study, messages[room.id], room, number, name, header)
            transcripts[room.id][number] = transcript
            write_transcripts(chats_dir / f"{name}.jsonl", [transcript])
    judgements = [
        _judgement(study, rooms[v.room], transcripts[v.room], *_own_text(store, v, scrubbers))
        for v in store.verdicts()
        if v.room in rooms
    ]
    judgements_path = out / "judgements.jsonl"
    write_judgements(judgements_path, judgements)
    readings = store.beliefs()
    traces = [
        trace
        for room in rooms.values()
        for trace in slider_traces(
            study.name,
            room,
            messages[room.id],
            readings,
            shown=_room_shown(room, transcripts[room.id]),
        )
    ]
    traces += [
        price_trace(study, room, store.events(room.id), _room_shown(room, transcripts[room.id]))
        for room in rooms.values()
        if room.mode == "market"
    ]
    write_traces(out / "beliefs.jsonl", traces)
    markets = [room for room in rooms.values() if room.mode == "market"]
    prices_path = out / "prices.csv"
    if markets:
        with prices_path.open("w", encoding="utf-8", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=PRICE_COLUMNS)
            writer.writeheader()
            for room in markets:
                maker = new_maker(study.spec.market)
                writer.writerows(price_rows(room.id, store.events(room.id), maker))
    else:
        prices_path.unlink(missing_ok=True)  # (an earlier export's)
    points_path = out / "points.csv"
    if study.spec.study.points:
        write_points(study, store, points_path)
    else:
        points_path.unlink(missing_ok=True)  # (an earlier export's, of an older spec)
    return ExportSummary(
        chats=sum(len(t) for t in transcripts.values()),
        event_logs=logs,
        judgements=len(judgements),
        beliefs=sum(len(t.points) for t in traces),
        traces=len(traces),
        judgements_path=judgements_path,
        scrubbed=sum(s.changed for s in scrubbers.values() if s is not None) if scrub else None,
        points_path=points_path if study.spec.study.points else None,
    )


def write_points(study: Study, store: StudyStore, path: Path) -> int:
    """``points.csv``: one row per participant who took part (not those who declined):
    their platform session, outcome, completion code, chats, how often each outcome the
    spec rewards happened, and their points. Returns the rows written."""
    keys = [str(key) for key in study.spec.study.points]
    rooms, verdicts = store.rooms(), store.verdicts()
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(
            ["participant", "session", "outcome", "completion_code", "chats", *keys, "points"]
        )
        for participant in store.participants():
            if participant.outcome == "declined" or participant.state == "consent":
                continue
            got = earned(study, participant, rooms, verdicts)
            done = participant.state == "done"
            chats = sum(1 for r in rooms if participant.pid in (r.interrogator, r.witness_pid))
            cells = [
                participant.pid,
                participant.platform_session or "",
                (participant.outcome or "") if done else "",
                completion_code(study, participant.outcome) if done else "",
            ]
            writer.writerow(
                [safe_cell(cell) for cell in cells]
                + [chats, *(got.counts.get(key, 0) for key in keys), f"{got.total:g}"]
            )
            rows += 1
    return rows


class _Scrub:
    """One room's scrubber, counting the texts it changed."""

    def __init__(self) -> None:
        self.scrubber = Scrubber()
        self.changed = 0

    def __call__(self, text: str) -> str:
        clean = self.scrubber.scrub(text)
        self.changed += clean != text
        return clean


def _scrubbed(
    room: Room, messages: Sequence[StoredMessage], scrub: _Scrub | None
) -> list[StoredMessage]:
    """``messages`` with the participants' ones scrubbed (the bot's are the persona's)."""
    if scrub is None:
        return list(messages)
    return [replace(m, text=scrub(m.text)) if _by_a_person(room, m) else m for m in messages]


def _by_a_person(room: Room, message: StoredMessage) -> bool:
    if message.sender == "interrogator":
        return True
    if room.witness == "both":
        return message.chat != (room.bot_position or 1)
    return room.witness == "human"


def _own_text(
    store: StudyStore, verdict: Verdict, scrubbers: dict[str, _Scrub | None]
) -> tuple[Verdict, dict[str, str]]:
    """The verdict and its answers, the participant's free text scrubbed if asked."""
    answers = _answers(store, verdict)
    scrub = scrubbers.get(verdict.room)
    if scrub is None:
        return verdict, answers
    return (
        replace(verdict, reason=scrub(verdict.reason)),
        {key: scrub(value) for key, value in answers.items()},
    )


def _transcript(
    study: Study,
    stored: Sequence[StoredMessage],
    room: Room,
    number: int,
    name: str,
    header: dict[str, Any] | None,
) -> Transcript:
    messages = [
        Message(
            side="user" if m.sender == "interrogator" else "response",
            text=m.text,
            time=datetime.fromisoformat(m.time),
        )
        for m in stored
        if m.chat == number
    ]
    if header is not None:
        # A header stored before conditions existed keeps them in its meta: read here.
        session = _session_header(name, header)
        condition = session.full_condition
        settings = {k: v for k, v in session.settings.items() if k not in CONDITION_SETTINGS}
        meta = {**session.meta, "settings": settings, "witness": "bot"}
    else:
        condition = Condition(
            interrogator="human", mode="burst", pseudo_turns=0, live_turns=study.spec.study.turns
        )
        meta = {"witness": "human"}
    meta.update(study=study.name, room=room.id, room_end=room.end_reason, chat=number)
    return Transcript(id=name, topic=None, messages=messages, condition=condition, meta=meta)


def _session_header(name: str, header: dict[str, Any]) -> SessionHeader:
    """The event-log header of a stored ``session_header`` record."""
    return SessionHeader(
        id=name,
        topic=None,
        started=datetime.fromisoformat(header["started"]),
        settings=header["settings"],
        condition=header.get("condition"),
        meta=header["meta"],
    )


def _write_log(path: Path, name: str, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    path.unlink(missing_ok=True)
    log = EventLog(path, _session_header(name, header))
    try:
        for event in events:
            data = {k: v for k, v in event["data"].items() if k != "chat"}
            log.emit(_EVENTS.validate_python(data))
    finally:
        log.close()


def _judgement(
    study: Study,
    room: Room,
    chats: dict[int, Transcript],
    verdict: Verdict,
    answers: dict[str, str],
) -> Judgement:
    """A two-party verdict as a single-witness judgement; a three-party one as the
    judgement of a pair (chat 1 and 2 are conversations 1 and 2)."""
    bot_chat = room.bot_position or 1
    shown = _room_shown(room, chats)
    notes = AnswerNotes(confidence=verdict.confidence)
    common: dict[str, Any] = {
        "study": study.name,
        "judge_id": verdict.participant,
        "judge_type": "human",
        "pair_id": room.id,
        "strategy": verdict.reason or None,
        "demographics": answers,
        "source": f"sdtt-serve:{study.name}",
    }
    if room.witness == "both":
        # 'A' names conversation 1 as the AI: the judge said chat 2 has the person.
        choice: Literal["A", "B"] = "A" if verdict.human == "2" else "B"
        position: Literal[1, 2] = 1 if bot_chat == 1 else 2
        return Judgement(
            **common,
            choice=choice,
            bot_position=position,
            correct=(choice == "A") == (position == 1),
            shown=shown.model_copy(update={"human_conversation": chats[3 - bot_chat].id}),
            notes=notes,
        )
    said: Literal["human", "ai"] = "human" if verdict.human == "yes" else "ai"
    witness: Literal["bot", "human"] = "human" if room.witness == "human" else "bot"
    return Judgement(
        **common,
        choice=None,
        correct=(said == "ai") == (witness == "bot"),
        witness=witness,
        verdict=said,
        shown=shown,
        notes=notes,
    )


def _answers(store: StudyStore, verdict: Verdict) -> dict[str, str]:
    """The answers to the spec's questions given with ``verdict`` (question id: answer)."""
    for event in store.events(verdict.room):
        if event["kind"] == "answers" and event["participant"] == verdict.participant:
            return {str(k): str(v) for k, v in event["data"].items()}
    return {}


def _room_shown(room: Room, chats: dict[int, Transcript]) -> Shown:
    """What a room's judges were shown: the bot's condition (model, persona, mode,
    delays, N), its chat, and the live turns every chat reached (1..X, read as X and
    N + X)."""
    bot_chat = room.bot_position or 1
    bot = chats[bot_chat].condition if room.witness != "human" else None
    live = min(answered_turns(t.messages) for t in chats.values())
    return Shown(
        bot=bot,
        bot_conversation=chats[bot_chat].id if bot is not None else None,
        judge_kind="live",
        view="whole",
        live_from=1,
        live_to=live,
    )
