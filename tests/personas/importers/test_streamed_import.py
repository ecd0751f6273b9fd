"""``sdtt persona import whatsapp``, ``telegram`` and ``discord`` write the persona as
they read the export, and the file is byte for byte the one the import wrote when it held the whole
chat in memory.

The files under ``fixtures/streamed/`` were written by that build (before issue
48) from the exports generated here, for each set of options below; only the ``created``
time of the header differs from run to run, so it is set to a fixed value on both sides.
"""

from __future__ import annotations

import json
import random
import re
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.personas.importers.build import ImportResult
from sdtt.personas.importers.discord import IMPORTER as DISCORD
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.importers.telegram import IMPORTER as TELEGRAM
from sdtt.personas.importers.whatsapp import IMPORTER as WHATSAPP
from sdtt.personas.store import load_persona
from tests.memory import command_peak

from .helpers import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from persona_import_cli import write_export, write_telegram_export

GOLDEN = FIXTURES / "streamed"
_CREATED = re.compile(rb'"created":"[^"]*"')
_PEOPLE = ("Ann Smith", "Bob Jones", "Cara Diaz")
_LINES = (
    "hey how are you",
    "mail me at bob.jones@example.com",
    "call me on +44 20 7946 0958 tonight",
    "did emma call you?",
    "Cara said hi",
    "‎image omitted",
    "‎This message was deleted.",
    "first line\nsecond line\n\nfourth line",
    "ok see you at 10:30 <This message was edited>",
    "my iban is DE89 3704 0044 0532 0130 00",
    "haha",
    "‎<attached: 00000012-PHOTO-2024-04-13-09-06-02.jpg>",
    "lunch tomorrow? Bob will come",
)


def write_group_export(path: Path, messages: int = 600, seed: int = 3) -> Path:
    """An iOS export of three people, with seconds, personal data, media, deleted and
    system lines, several-line messages and silences (some chats without Ann)."""
    rng = random.Random(seed)
    second = 9 * 3600
    day = 1
    lines = ["[01/03/2024, 09:00:00] Bob Jones: ‎Messages and calls are end-to-end encrypted."]
    for index in range(messages):
        second += rng.choice((3, 8, 20, 45, 90, 200))
        if index % 25 == 24:
            second += rng.choice((2, 5)) * 3600
        if second >= 86_000:
            day, second = day + 1, 8 * 3600
        hours, rest = divmod(second, 3600)
        stamp = f"[{day:02d}/03/2024, {hours:02d}:{rest // 60:02d}:{rest % 60:02d}]"
        # Every fifth chat is Bob and Cara alone.
        senders = _PEOPLE[1:] if (index // 25) % 5 == 4 else _PEOPLE
        lines.append(f"{stamp} {rng.choice(senders)}: {rng.choice(_LINES)}")
        if index % 50 == 10:
            lines.append(f"{stamp} Cara Diaz added Dan")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_shuffled_export(path: Path) -> Path:
    """The group export with every 40th message moved one line down: out of time order,
    which the import puts right."""
    write_group_export(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    for index in range(20, len(lines) - 2, 40):
        if lines[index].startswith("[") and lines[index + 1].startswith("["):
            lines[index], lines[index + 1] = lines[index + 1], lines[index]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def write_telegram_group(path: Path, messages: int = 600, seed: int = 5) -> Path:
    """A Telegram ``result.json`` of three people like :func:`write_group_export`'s, with
    service entries, forwarded messages, photos without a caption, text as a list of
    entities, and now and then a message out of time order."""
    rng = random.Random(seed)
    start, second = 1_709_280_000, 0
    entries: list[dict[str, object]] = []
    for index in range(messages):
        second += rng.choice((3, 8, 20, 45, 90, 200)) + (4 * 3600 if index % 25 == 24 else 0)
        moment = start + second - (500 if index % 60 == 30 else 0)
        senders = _PEOPLE[1:] if (index // 25) % 5 == 4 else _PEOPLE
        sender = rng.choice(senders)
        text: object = rng.choice(_LINES).replace("\u200e", "")
        entry: dict[str, object] = {"id": index + 1, "type": "message"}
        entry["date"] = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        entry["from"], entry["from_id"] = sender, f"user{_PEOPLE.index(sender) + 1}"
        if index % 9 == 3:
            text = ["see ", {"type": "mention", "text": "@cara_d"}, " later"]
        if index % 31 == 7:
            entry["photo"], text = "photos/p.jpg", ""
        if index % 43 == 11:
            entry["forwarded_from"] = "News"
        if index % 37 == 5:
            entry = {"id": index + 1, "type": "service", "date": entry["date"], "action": "pin"}
        else:
            entry["text"] = text
        entries.append(entry)
    document = {"name": "Bob Jones", "type": "personal_chat", "id": 7, "messages": entries}
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def write_discord_group(path: Path, messages: int = 600, seed: int = 9) -> Path:
    """A DiscordChatExporter export of three people (user names, server nicknames) and a
    bot, with mentions, attachments, forwarded and system messages, and now and then a
    message out of time order."""
    rng = random.Random(seed)
    users = [
        {"id": str(index + 1), "name": name.split()[0].lower(), "nickname": name}
        for index, name in enumerate(_PEOPLE)
    ]
    bot = {"id": "99", "name": "Dicebot", "nickname": "Dicebot", "isBot": True}
    start, second = 1_709_280_000, 0
    entries: list[dict[str, object]] = []
    for index in range(messages):
        second += rng.choice((3, 8, 20, 45, 90, 200)) + (4 * 3600 if index % 25 == 24 else 0)
        moment = datetime.fromtimestamp(start + second - (500 if index % 60 == 30 else 0), UTC)
        pool = users[1:] if (index // 25) % 5 == 4 else users
        author = bot if index % 41 == 17 else rng.choice(pool)
        entry: dict[str, object] = {
            "id": str(1000 + index),
            "type": "Reply" if index % 13 == 2 else "Default",
            "timestamp": moment.isoformat(),
            "content": rng.choice(_LINES).replace("\u200e", ""),
            "author": author,
        }
        if index % 11 == 4:
            mentioned = rng.choice(users)
            entry["content"] = f"<@{mentioned['id']}> are you coming?"
            entry["mentions"] = [mentioned]
        if index % 29 == 6:
            entry["content"], entry["attachments"] = "", [{"url": "a.png"}]
        if index % 47 == 8:
            entry["reference"] = {"type": "Forward"}
        if index % 53 == 9:
            entry["type"] = "ChannelPinnedMessage"
        entries.append(entry)
    document = {"guild": {"name": "Friends"}, "channel": {"name": "general"}, "messages": entries}
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_telegram_two(path: Path) -> Path:
    """The benchmark's Telegram export of Ann and Ben, small."""
    write_telegram_export(path, 1_000)
    return path


def write_two_export(path: Path) -> Path:
    """The benchmark's Android export of Ann and Ben (minutes only), small."""
    write_export(path, 1_000)
    return path


CASES = {
    "telegram-group": (write_telegram_group, ["--me", "Ann Smith", "--merge-others"]),
    "telegram-with-bob": (
        write_telegram_group,
        ["--me", "Ann Smith", "--with", "Bob Jones", "--no-scrub", "--keep-media", "--timezone",
         "America/New_York"],
    ),
    "telegram-two": (write_telegram_two, ["--me", "Ann"]),
    "discord-group": (write_discord_group, ["--me", "Ann Smith", "--merge-others"]),
    "discord-with-bob": (
        write_discord_group,
        ["--me", "ann", "--with", "bob", "--no-scrub", "--keep-media", "--timezone", "Asia/Tokyo"],
    ),
    "group-merged": (write_group_export, ["--me", "Ann Smith", "--merge-others"]),
    "group-with-bob": (
        write_group_export,
        [
            "--me", "Ann Smith", "--with", "Bob Jones", "--no-scrub", "--keep-media",
            "--timezone", "Europe/Berlin", "--gap", "30m",
        ],
    ),
    "out-of-order": (write_shuffled_export, ["--me", "Ann Smith", "--merge-others"]),
    "out-of-order-zoned": (
        write_shuffled_export,
        ["--me", "Ann Smith", "--merge-others", "--timezone", "Europe/Berlin"],
    ),
    "two": (write_two_export, ["--me", "Ann"]),
}  # fmt: skip


def run(case: str, folder: Path) -> tuple[bytes, bytes | None]:
    """The persona file (``created`` fixed) and scrub report written for ``case``."""
    writer, options = CASES[case]
    fmt = case.split("-")[0] if case.startswith(("telegram", "discord")) else "whatsapp"
    export = writer(folder / ("chat.txt" if fmt == "whatsapp" else "export.json"))
    report = folder / "map.json"
    argv = ["persona", "import", fmt, str(export), *options, "--out", str(folder)]
    argv += ["--name", "golden", "--force"]
    if "--no-scrub" not in options:
        argv += ["--scrub-report", str(report)]
    assert main(argv) == 0
    persona = _CREATED.sub(
        b'"created":"2024-01-01T00:00:00Z"', (folder / "golden.jsonl").read_bytes()
    )
    return persona, report.read_bytes() if report.exists() else None


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_streamed_persona_is_byte_for_byte_the_old_one(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held_whole: list[str] = []
    importer = {"telegram": TELEGRAM, "discord": DISCORD}.get(case.split("-")[0], WHATSAPP)
    whole = importer.run

    def run_whole(path: Path, options: ImportOptions) -> ImportResult:
        held_whole.append(case)
        return whole(path, options)

    monkeypatch.setattr(importer, "run", run_whole)
    persona, report = run(case, tmp_path)
    assert not held_whole  # out of time order too: a message read early waits its turn
    assert persona == (GOLDEN / f"{case}.jsonl").read_bytes()
    old_report = GOLDEN / f"{case}.map.json"
    assert report == (old_report.read_bytes() if old_report.exists() else None)


def _import_peak(folder: Path, messages: int) -> int:
    chat = folder / f"chat-{messages}.txt"
    write_export(chat, messages)
    argv = ["persona", "import", "whatsapp", str(chat), "--me", "Ann", "--out", str(folder)]
    return command_peak([*argv, "--name", f"ann-{messages}"])


def test_the_import_holds_a_few_numbers_per_message_not_the_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./personas/ to look through
    _import_peak(tmp_path, 500)  # name lists and patterns load once, outside the count
    small, large = _import_peak(tmp_path, 5_000), _import_peak(tmp_path, 20_000)
    # Before: about 700 bytes more for each message more (every message held, as a
    # parsed message and then as the persona's); now a few arrays of numbers (dates,
    # times, the time order, the timing profile's gaps) and one conversation.
    per_message = (large - small) / 15_000
    assert per_message < 250, f"{per_message:.0f} bytes of peak memory per message"


if __name__ == "__main__":  # writes the golden files (run once, with the old build)
    import tempfile

    for name in CASES:
        with tempfile.TemporaryDirectory() as temporary:
            persona, report = run(name, Path(temporary))
        (GOLDEN / f"{name}.jsonl").write_bytes(persona)
        if report is not None:
            (GOLDEN / f"{name}.map.json").write_bytes(report)
        print(name, len(persona), json.loads(persona.splitlines()[0])["description"])


def test_an_export_changed_between_its_two_readings_is_built_whole(tmp_path: Path) -> None:
    chat = write_shuffled_export(tmp_path / "chat.txt")
    options = ImportOptions(me="Ann Smith", merge_others=True, name="ann")
    prepared = WHATSAPP.prepare(chat, options)
    write_group_export(chat, messages=300)  # half as long, in time order
    written = prepared.write(tmp_path / "ann.jsonl")
    whole = WHATSAPP.run(chat, options)
    assert load_persona(written.path).conversations == whole.persona.conversations


def _zipped(chat: Path) -> Path:
    """``chat`` as WhatsApp exports it "with media": a zip of ``_chat.txt`` and a photo."""
    archive = chat.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.write(chat, "WhatsApp Chat - Ann Smith/_chat.txt")
        out.writestr(
            "WhatsApp Chat - Ann Smith/00000012-PHOTO-2024-04-13-09-06-02.jpg", b"\xff\xd8"
        )
    return archive


@pytest.mark.parametrize("case", ["group-merged", "group-with-bob", "out-of-order-zoned"])
def test_a_zip_made_with_media_streams_to_the_persona_of_the_zip_read_whole(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, options = CASES[case]
    archive = _zipped(writer(tmp_path / "chat.txt"))
    argv = ["persona", "import", "whatsapp", str(archive), *options, "--out", str(tmp_path)]
    whole = WHATSAPP.run
    held_whole: list[Path] = []

    def run_whole(path: Path, options: ImportOptions) -> ImportResult:
        held_whole.append(path)
        return whole(path, options)

    monkeypatch.setattr(WHATSAPP, "run", run_whole)
    assert main([*argv, "--name", "streamed"]) == 0
    assert held_whole == []
    monkeypatch.setattr(WHATSAPP, "_streamed_source", lambda path: None)  # as before
    assert main([*argv, "--name", "whole"]) == 0
    assert held_whole == [archive]
    streamed, read_whole = (
        _CREATED.sub(b"", (tmp_path / f"{name}.jsonl").read_bytes()).replace(name.encode(), b"NAME")
        for name in ("streamed", "whole")
    )
    assert streamed == read_whole


def test_a_zip_made_with_media_is_unpacked_a_part_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def peak(messages: int) -> int:
        chat = tmp_path / f"chat-{messages}.txt"
        write_export(chat, messages)
        archive = _zipped(chat)
        argv = ["persona", "import", "whatsapp", str(archive), "--me", "Ann"]
        return command_peak([*argv, "--out", str(tmp_path), "--name", f"ann-{messages}"])

    peak(500)
    small, large = peak(5_000), peak(20_000)
    per_message = (large - small) / 15_000
    assert per_message < 250, f"{per_message:.0f} bytes of peak memory per message"


def test_a_damaged_zip_export_still_says_it_cannot_be_unpacked(tmp_path: Path) -> None:
    archive = _zipped(write_two_export(tmp_path / "chat.txt"))
    data = bytearray(archive.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)  # the deflated chat, damaged
    archive.write_bytes(bytes(data))
    options = ImportOptions(me="Ann", name="ann")
    with pytest.raises(InputError, match="cannot be unpacked"):
        WHATSAPP.prepare(archive, options).write(tmp_path / "ann.jsonl")
