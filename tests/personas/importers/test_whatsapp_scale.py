"""A long WhatsApp export is read a part at a time: memory goes to the persona kept.

The export used to be held as bytes, as text, as a list of lines and as a list of parsed
entries, and every message twice more while it was scrubbed: 12 times the file. Now its
lines are read twice from the file (once for the date order, once for the messages)
and each message is scrubbed in place.
"""

from __future__ import annotations

import hashlib
import sys
import tracemalloc
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.importers import reading
from sdtt.personas.importers.build import build_persona
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.importers.reading import decode_text, text_lines
from sdtt.personas.importers.whatsapp import IMPORTER, import_whatsapp
from sdtt.personas.store import load_persona, save_persona

from .helpers import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from persona_import_cli import write_export


def _old_lines(data: bytes) -> list[str]:
    text = decode_text(data, "x")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@pytest.mark.parametrize(
    "data",
    [
        "\ufeff1/2/24, 9:05 - Ann: héllo 🍿\r\nsecond line\rthird\n\nlast".encode(),
        b"a\r\nb\r\n",
        "é🍿é\r\r\n\n".encode(),
        b"",
    ],
    ids=["mixed", "crlf", "multibyte", "empty"],
)
def test_lines_read_in_parts_are_the_lines_of_the_whole(
    data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.txt"
    path.write_bytes(data)
    for block in (1, 2, 3, 5, 1 << 20):
        # Parts of a byte or two split characters, CR LF pairs and the byte-order mark.
        monkeypatch.setattr(reading, "_BLOCK", block)
        assert list(text_lines(path)) == _old_lines(data), block


def test_a_bad_byte_far_into_the_export_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "_BLOCK", 64)
    path = tmp_path / "chat.txt"
    path.write_bytes(b"1/2/24, 9:05 - Ann: hi\n" * 40 + b"1/2/24, 9:06 - Ben: \xff\n")
    with pytest.raises(InputError) as caught:
        list(text_lines(path))
    assert caught.value.line == 41
    assert "not UTF-8" in str(caught.value)


def test_the_persona_is_the_one_read_from_the_whole_file() -> None:
    path = FIXTURES / "whatsapp" / "android_eu.txt"
    options = ImportOptions(me="Ann Smith")
    streamed = import_whatsapp(path, options)
    data = path.read_bytes()
    whole = build_persona(
        IMPORTER.parse(data, path, options),
        options,
        fmt="whatsapp",
        path=path,
        digest=hashlib.sha256(data).hexdigest(),
    )
    assert streamed.persona.info.name == whole.persona.info.name  # named by the file's hash
    assert streamed.persona.conversations == whole.persona.conversations
    assert streamed.report == whole.report


def test_importing_holds_no_more_than_the_persona_it_makes(tmp_path: Path) -> None:
    chat = tmp_path / "chat.txt"
    write_export(chat, 5_000)
    options = ImportOptions(me="Ann")
    import_whatsapp(chat, options)  # name lists and patterns load once, outside the count
    tracemalloc.start()
    try:
        result = import_whatsapp(chat, options)
        importing = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    save_persona(result.persona, tmp_path / "persona.jsonl")
    del result
    tracemalloc.start()
    try:
        persona = load_persona(tmp_path / "persona.jsonl")
        loading = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(persona.messages) > 4_000
    # Before: 1.17 times (the export whole, its lines, its entries, each message twice).
    assert importing < loading, f"import peak {importing:,} B, the persona loaded {loading:,} B"
