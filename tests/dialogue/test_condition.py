"""The condition of a chat as one typed value: files written before it existed load with
their loose ``meta`` keys read once, and seeds derive by one rule."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from sdtt.dialogue.condition import Condition, chat_mode, split_meta
from sdtt.dialogue.shown import migrate_answer
from sdtt.dialogue.store import read_transcripts, write_transcripts
from sdtt.dialogue.turn_index import pseudo_turns_of
from sdtt.seeds import derive_seed, seeded_rng

OLD_SETTINGS = {
    "mode": "pingpong",
    "t1": 3.0,
    "delays": "jones-bergen",
    "timing": None,
    "max_messages": 5,
    "max_model_gap": 120.0,
    "opening": False,
    "seed": 7,
}
"""The session settings an older ``sdtt simulate`` copied into every transcript's meta."""
OLD_META = {
    "persona": "chitchat-ad6493d1",
    "model": "mock/chatty",
    "interrogator": "mock/chatty",
    "topic": "Pets",
    "pseudo": "transcripts/pseudo/chain.jsonl",
    "pseudo_messages": 12,
    "pseudo_turns": 4,
    "live_turns": 2,
    "virtual_clock": True,
    "mode": "pingpong",
    "simulated": True,
    "settings": OLD_SETTINGS,
}


def old_file(path: Path, meta: dict[str, object]) -> Path:
    """A transcript file as an older sdtt wrote it: the condition as loose meta keys."""
    records = [
        {"type": "transcript", "version": 1, "id": "chat-1", "topic": "Pets", "meta": meta},
        {
            "type": "message",
            "conversation": "chat-1",
            "side": "user",
            "text": "hi",
            "time": "2025-01-01T12:00:00+00:00",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_an_old_transcript_file_loads_with_each_fact_of_its_condition_once(
    tmp_path: Path,
) -> None:
    (old,) = read_transcripts(old_file(tmp_path / "old.jsonl", OLD_META))
    assert old.condition == Condition(
        persona="chitchat-ad6493d1",
        model="mock/chatty",
        mode="pingpong",
        pseudo="transcripts/pseudo/chain.jsonl",
        pseudo_turns=4,
        live_turns=2,
        delays="jones-bergen",
        seed=7,
        interrogator="mock/chatty",
    )
    assert old.condition.turn_index == 6
    # What is not part of the condition stays free-form provenance, the mode nowhere.
    assert old.meta["pseudo_messages"] == 12 and old.meta["simulated"] is True
    assert "mode" not in old.meta and "mode" not in old.meta["settings"]
    assert old.meta["settings"]["t1"] == 3.0
    # Written again, the file has the new layout and reads back the same.
    write_transcripts(tmp_path / "new.jsonl", [old])
    header = json.loads((tmp_path / "new.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["condition"]["mode"] == "pingpong" and "persona" not in header["meta"]
    assert read_transcripts(tmp_path / "new.jsonl") == [old]


def test_the_mode_an_old_file_kept_only_in_its_settings_counts() -> None:
    condition, rest = split_meta({"settings": {"mode": "pingpong", "t1": 1.0}})
    assert chat_mode(condition) == "pingpong" and rest == {"settings": {"t1": 1.0}}
    # A corpus chat records no condition at all: burst, as before.
    condition, rest = split_meta({"source": "chitchat", "senders": {"user": "u"}})
    assert condition is None and chat_mode(condition) == "burst" and rest["source"] == "chitchat"


def test_an_old_file_without_n_is_read_as_before(tmp_path: Path) -> None:
    without_n = {k: v for k, v in OLD_META.items() if k != "pseudo_turns"}
    (with_pseudo,) = read_transcripts(old_file(tmp_path / "a.jsonl", without_n))
    n, warning = pseudo_turns_of(with_pseudo.condition)
    assert n is None and warning is not None and "unknown" in warning
    no_pseudo = {k: v for k, v in without_n.items() if k not in ("pseudo", "pseudo_messages")}
    (plain,) = read_transcripts(old_file(tmp_path / "b.jsonl", no_pseudo))
    n, warning = pseudo_turns_of(plain.condition)
    assert n == 0 and warning is not None and "N = 0" in warning
    assert pseudo_turns_of(Condition(pseudo_turns=3)) == (3, None)


def test_a_bad_condition_in_an_old_file_is_refused_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="delays"):
        read_transcripts(
            old_file(tmp_path / "bad.jsonl", {**OLD_META, "settings": {"delays": "x"}})
        )
    with pytest.raises(ValidationError):
        Condition(mode="turns")  # type: ignore[arg-type]


def test_records_nest_the_condition_whole_and_old_records_still_read() -> None:
    condition = Condition(model="m/x", persona="p", pseudo_turns=None)
    nested = {"condition": {"bot_condition": condition.model_dump(mode="json")}}
    old = {"condition": {"bot_meta": {"model": "m/x", "persona": "p", "source": "file"}}}
    assert migrate_answer(nested)["shown"]["bot"] == condition.model_dump(mode="json")
    assert migrate_answer(old)["shown"]["bot"] == condition
    assert migrate_answer({"condition": {"judge_kind": "llm"}})["shown"]["bot"] is None


def test_every_seed_derives_by_one_rule() -> None:
    assert derive_seed(7) == 7
    roles = [("interrogator",), ("room", 1), ("room", 2), ("call", 0), ("participant", 1)]
    seeds = [derive_seed(7, *role) for role in roles]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= seed < 2**31 for seed in seeds)
    assert derive_seed(7, "room", 1) == derive_seed(7, "room", 1) != derive_seed(8, "room", 1)
    # Streams are named as documented: the parts joined with ':'.
    first = seeded_rng(7, "plan", 3).random()
    assert first == random.Random("7:plan:3").random()
