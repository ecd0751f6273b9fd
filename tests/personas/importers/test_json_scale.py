"""A large JSON export is read a part at a time: memory goes to the messages kept.

The exports used to be held as bytes, as text and as parsed JSON objects (and again as
validated records) before the first message was kept: about six times the file. Now
the file is read twice with a streaming parser (its outline, then the messages one at a
time); files that parser reads otherwise than the whole-file reader (a byte-order mark,
lone surrogates, bad JSON) are still read whole, with the same result or error.
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.importers.discord import IMPORTER as DISCORD
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.importers.telegram import IMPORTER as TELEGRAM

from .helpers import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from persona_import_cli import write_telegram_export

OPTIONS = ImportOptions(me="Ann")


def _reading_overhead(load: object, path: Path) -> tuple[int, int]:
    """Bytes held while reading beyond those kept after it, and those kept."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        chat = load(path, OPTIONS)  # type: ignore[operator]
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(chat[0].messages) > 10_000
    return peak - kept, kept - before


def test_a_large_telegram_export_is_read_holding_little_but_the_messages(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    size = write_telegram_export(path, 50_000)
    TELEGRAM.load(path, OPTIONS)  # patterns and validators built once, outside the count
    overhead, kept = _reading_overhead(TELEGRAM.load, path)
    # Before: the file as bytes, as text and as JSON objects at once, over 5x its size;
    # now what is held beyond the messages is about a tenth of it (list growth, buffers).
    assert overhead < size / 4, f"{overhead:,} B held beyond {kept:,} B kept, file {size:,} B"


def _whole(path: Path) -> object:
    return TELEGRAM.parse(path.read_bytes(), path, OPTIONS)


@pytest.mark.parametrize(
    "name", sorted(path.name for path in (FIXTURES / "telegram").glob("*.json"))
)
def test_streamed_telegram_reads_what_the_whole_file_gives(name: str) -> None:
    path = FIXTURES / "telegram" / name
    try:
        whole = _whole(path)
    except InputError as error:
        with pytest.raises(InputError) as caught:
            TELEGRAM.load(path, OPTIONS)
        assert str(caught.value) == str(error)
    else:
        assert TELEGRAM.load(path, OPTIONS)[0] == whole


@pytest.mark.parametrize(
    "data",
    [
        # A byte-order mark, escapes that are repaired, a number too long for the parser.
        b'\xef\xbb\xbf{"name": "Ben", "messages": [MSG]}',
        b'{"name": "Ben \\ud800", "messages": [MSG, MSG]}',
        b'{"name": "B\\u0000en", "messages": [MSG]}',
        b'{"name": "Ben", "id": 123456789012345678901234567890, "messages": [MSG]}',
        b'{"chats": {"list": [{"name": "A", "messages": []}, {"name": "Ben", "messages": [MSG]}]}}',
    ],
    ids=["bom", "surrogate", "nul", "long-number", "account"],
)
def test_files_the_streaming_parser_reads_otherwise_give_the_same(
    data: bytes, tmp_path: Path
) -> None:
    message = (
        b'{"type": "message", "date": "2024-01-02T09:05:00", "from": "Ann", "text": "hi"}, '
        b'{"type": "message", "date": "2024-01-02T09:06:00", "from": "Ben", "text": "yo"}'
    )
    path = tmp_path / "result.json"
    path.write_bytes(data.replace(b"MSG", message))
    options = ImportOptions(me="Ann", chat="Ben")
    assert TELEGRAM.load(path, options)[0] == TELEGRAM.parse(path.read_bytes(), path, options)


def test_bad_json_deep_in_the_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    write_telegram_export(path, 2_000)
    lines = path.read_text(encoding="utf-8").splitlines()
    broken = next(index for index in range(5_000, len(lines)) if lines[index].endswith(","))
    lines[broken] = lines[broken].rstrip(",")  # a missing comma: the next line is wrong
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        TELEGRAM.load(path, OPTIONS)
    assert caught.value.line == broken + 2
    assert "not valid JSON" in str(caught.value)


def _discord_export(path: Path, messages: int) -> int:
    with path.open("w", encoding="utf-8") as out:
        out.write(
            '{"guild": {"name": "Direct Messages"}, "channel": {"name": "Ben"}, "messages": ['
        )
        for index in range(messages):
            author = "Ann" if index % 2 else "Ben"
            out.write(
                ("," if index else "") + f'\n {{"id": "{index}", "type": "Default", '
                f'"timestamp": "2024-01-02T{index // 3600 % 24:02d}:{index // 60 % 60:02d}:'
                f'{index % 60:02d}+00:00", "content": "message {index} about the train", '
                f'"author": {{"id": "{index % 2}", "name": "{author}", "nickname": "{author}", '
                '"isBot": false}, "attachments": [], "embeds": [], "stickers": [], '
                '"reactions": [], "mentions": []}'
            )
        out.write("\n]}\n")
    return path.stat().st_size


def test_a_large_discord_export_is_read_holding_little_but_the_messages(tmp_path: Path) -> None:
    path = tmp_path / "dm.json"
    size = _discord_export(path, 50_000)
    DISCORD.load(path, OPTIONS)
    overhead, kept = _reading_overhead(DISCORD.load, path)
    assert overhead < size / 4, f"{overhead:,} B held beyond {kept:,} B kept, file {size:,} B"


@pytest.mark.parametrize(
    "name", sorted(path.name for path in (FIXTURES / "discord").glob("*.json"))
)
def test_streamed_discord_reads_what_the_whole_file_gives(name: str) -> None:
    path = FIXTURES / "discord" / name
    try:
        whole = DISCORD.parse(path.read_bytes(), path, OPTIONS)
    except InputError as error:
        with pytest.raises(InputError) as caught:
            DISCORD.load(path, OPTIONS)
        assert str(caught.value) == str(error)
    else:
        assert DISCORD.load(path, OPTIONS)[0] == whole
