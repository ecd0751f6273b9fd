"""``sdtt serve export``: a study's store as the files the rest of sdtt reads.

For every room: ``chats/<room>.jsonl`` (the transcript; interrogator = side A, witness =
side B) and, for a bot room, ``chats/<room>.events.jsonl`` (the engine's event log as
``sdtt chat`` writes it). Every verdict becomes a record of ``judgements.jsonl`` that
``sdtt score`` and ``sdtt report`` read with questionnaire judgements: a two-party
verdict is a single-witness judgement (``witness``, ``verdict``), so the pass rate is
the share of bot witnesses judged human. Belief slider readings go to ``beliefs.jsonl``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter

from sdtt.dialogue.jsonl import JsonlWriter
from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.store import write_transcripts
from sdtt.dialogue.turn_index import turn_meta
from sdtt.engine.events import Event, EventLog, SessionHeader
from sdtt.engine.simulate import answered_turns
from sdtt.questionnaires.judgements import Judgement, write_judgements
from sdtt.serve.spec import Study
from sdtt.serve.store import Room, StudyStore, Verdict

_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    chats: int
    event_logs: int
    judgements: int
    beliefs: int
    judgements_path: Path


def export_study(study: Study, store: StudyStore, out: Path) -> ExportSummary:
    """Write ``study``'s rooms, verdicts and beliefs under ``out`` (replacing an earlier
    export there)."""
    chats_dir = out / "chats"
    chats_dir.mkdir(parents=True, exist_ok=True)
    headers: dict[str, dict[str, Any]] = {}
    transcripts: dict[str, Transcript] = {}
    logs = 0
    for room in store.rooms():
        events = store.events(room.id)
        header = next((e["data"] for e in events if e["kind"] == "session_header"), None)
        if header is not None:
            headers[room.id] = header
            _write_log(chats_dir / f"{room.id}.events.jsonl", room, header, events)
            logs += 1
        transcript = _transcript(study, store, room, header)
        transcripts[room.id] = transcript
        write_transcripts(chats_dir / f"{room.id}.jsonl", [transcript])
    rooms = {room.id: room for room in store.rooms()}
    judgements = [
        _judgement(study, rooms[v.room], transcripts[v.room], v)
        for v in store.verdicts()
        if v.room in rooms
    ]
    judgements_path = out / "judgements.jsonl"
    write_judgements(judgements_path, judgements)
    beliefs = store.beliefs()
    partial = out / "beliefs.jsonl.partial"
    partial.unlink(missing_ok=True)
    with JsonlWriter(partial) as writer:
        for belief in beliefs:
            writer.write(
                {
                    "study": study.name,
                    "participant": belief.participant,
                    "room": belief.room,
                    "after_message": belief.seq,
                    "time": belief.time,
                    "value": belief.value,
                }
            )
    partial.replace(out / "beliefs.jsonl")
    return ExportSummary(
        chats=len(transcripts),
        event_logs=logs,
        judgements=len(judgements),
        beliefs=len(beliefs),
        judgements_path=judgements_path,
    )


def _transcript(
    study: Study, store: StudyStore, room: Room, header: dict[str, Any] | None
) -> Transcript:
    messages = [
        Message(
            side="user" if m.sender == "interrogator" else "response",
            text=m.text,
            time=datetime.fromisoformat(m.time),
        )
        for m in store.messages(room.id)
    ]
    if header is not None:
        meta = {**header["meta"], "settings": header["settings"]}
    else:
        meta = {
            "witness": "human",
            "interrogator": "human",
            "mode": "burst",
            **turn_meta(0, study.spec.study.turns),
        }
    meta.update(study=study.name, room_end=room.end_reason, witness=room.witness)
    return Transcript(id=room.id, topic=None, messages=messages, meta=meta)


def _write_log(
    path: Path, room: Room, header: dict[str, Any], events: list[dict[str, Any]]
) -> None:
    path.unlink(missing_ok=True)
    log = EventLog(
        path,
        SessionHeader(
            id=room.id,
            topic=None,
            started=datetime.fromisoformat(header["started"]),
            settings=header["settings"],
            meta=header["meta"],
        ),
    )
    try:
        for event in events:
            if event["kind"] == "engine":
                log.emit(_EVENTS.validate_python(event["data"]))
    finally:
        log.close()


def _judgement(study: Study, room: Room, transcript: Transcript, verdict: Verdict) -> Judgement:
    meta = transcript.meta
    live = answered_turns(transcript.messages)
    pseudo = meta.get("pseudo_turns") if room.witness == "bot" else 0
    said: Literal["human", "ai"] = "human" if verdict.human == "yes" else "ai"
    witness = room.witness
    condition: dict[str, Any] = {"judge_kind": "live", "view": "whole", "witness": witness}
    if witness == "bot":
        condition["bot_meta"] = {
            key: meta.get(key) for key in ("model", "persona", "mode", "pseudo", "condition")
        }
        condition["delays"] = meta.get("settings", {}).get("delays")
    return Judgement(
        study=study.name,
        judge_id=verdict.participant,
        judge_type="human",
        pair_id=room.id,
        x_turns=live,
        pseudo_turns=pseudo if isinstance(pseudo, int) else None,
        total_turns=pseudo + live if isinstance(pseudo, int) else None,
        choice=None,
        correct=(said == "ai") == (witness == "bot"),
        witness=witness,
        verdict=said,
        strategy=verdict.reason or None,
        source=f"sdtt-serve:{study.name}",
        condition={**condition, "confidence": verdict.confidence},
    )
